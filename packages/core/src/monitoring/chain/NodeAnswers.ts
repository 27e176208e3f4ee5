/**
 * What an EVM node answers, as Schemas: a block with its transactions (`eth_getBlockByNumber`, full), a receipt
 * (`eth_getBlockReceipts`, `eth_getTransactionReceipt`) and a call frame (`debug_traceBlockByNumber` with
 * `callTracer` and `withLog`), the fields used. A chain reader decodes each answer with them, so an answer that
 * lacks a field or has one of the wrong type is refused there, naming it, instead of being cast and failing later.
 * Fields not listed are ignored.
 */
import { Schema } from "effect"

const text = Schema.String
const optional = <S extends Schema.Top>(s: S) => Schema.optionalKey(s)

/** A transaction of a full block (the fields used). */
export const RpcTransaction = Schema.Struct({
  hash: text,
  from: text,
  to: optional(Schema.NullOr(text)),
  value: text,
  nonce: text,
  input: text,
  gas: text,
  gasPrice: optional(text),
  maxFeePerGas: optional(text),
  maxPriorityFeePerGas: optional(text),
  transactionIndex: text
})
export interface RpcTransaction extends Schema.Schema.Type<typeof RpcTransaction> {}

/** A block's header (`eth_getBlockByNumber` without transactions): what continuity is checked by. */
export const RpcHeader = Schema.Struct({ hash: text, parentHash: text })

/** A block with its transactions. */
export const RpcBlock = Schema.Struct({
  number: text,
  hash: text,
  /** Present in every node's answer; what following a chain checks its continuity by. */
  parentHash: optional(text),
  timestamp: text,
  transactions: Schema.Array(RpcTransaction)
})
export interface RpcBlock extends Schema.Schema.Type<typeof RpcBlock> {}

/** A log of a receipt. */
export const RpcLog = Schema.Struct({
  address: text,
  topics: Schema.Array(text),
  data: text,
  logIndex: text
})
export interface RpcLog extends Schema.Schema.Type<typeof RpcLog> {}

/** A transaction's receipt (`blockHash` and `transactionHash` tell whose it is). */
export const RpcReceipt = Schema.Struct({
  transactionHash: text,
  blockHash: optional(text),
  /** Absent from receipts before Byzantium (they carry a state root instead). */
  status: optional(text),
  gasUsed: text,
  logs: Schema.Array(RpcLog)
})
export interface RpcReceipt extends Schema.Schema.Type<typeof RpcReceipt> {}

/** A `callTracer` frame with `withLog`. */
export interface CallFrame {
  readonly type: string
  readonly from: string
  readonly to?: string
  readonly value?: string
  readonly gas?: string
  readonly gasUsed?: string
  readonly input?: string
  readonly output?: string
  readonly error?: string
  readonly calls?: ReadonlyArray<CallFrame>
  readonly logs?: ReadonlyArray<{
    readonly address: string
    readonly topics?: ReadonlyArray<string>
    readonly data?: string
    readonly index?: number | string
  }>
}

/** {@link CallFrame} as a Schema. */
export const CallFrame: Schema.Codec<CallFrame> = Schema.Struct({
  type: text,
  from: text,
  to: optional(text),
  value: optional(text),
  gas: optional(text),
  gasUsed: optional(text),
  input: optional(text),
  output: optional(text),
  error: optional(text),
  calls: optional(Schema.Array(Schema.suspend((): Schema.Codec<CallFrame> => CallFrame))),
  logs: optional(
    Schema.Array(
      Schema.Struct({
        address: text,
        topics: optional(Schema.Array(text)),
        data: optional(text),
        index: optional(Schema.Union([Schema.Number, text]))
      })
    )
  )
})

/** A frame of `debug_traceBlockByNumber`'s answer: the frame itself, or `{txHash, result}` around it. */
export const TraceEntry = Schema.Union([Schema.Struct({ txHash: optional(text), result: CallFrame }), CallFrame])
