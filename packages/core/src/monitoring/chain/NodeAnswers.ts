/**
 * What an EVM node answers, as Schemas: a block with its transactions (`eth_getBlockByNumber`, full), a receipt
 * (`eth_getBlockReceipts`, `eth_getTransactionReceipt`) and a call frame (`debug_traceBlockByNumber` with
 * `callTracer` and `withLog`), the fields used. A chain reader decodes each answer with them, so an answer that
 * lacks a field or has one of the wrong type is refused there, naming it, instead of being cast and failing later.
 * Fields not listed are ignored.
 */
import { Result, Schema } from "effect"

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

/**
 * Decoders of the answers a chain reader checks most (a block, its receipts, its call frames): the same answers as
 * `Schema.decodeUnknownResult` of the Schemas above, made without walking the Schemas' AST for the answers that
 * hold (a mainnet-sized block has hundreds of transactions, receipts, logs and frames, read at every step). An
 * answer the plain check does not pass is decoded by the Schema itself, so what is refused, and the message saying
 * why, are the Schema's.
 */
type Plain = Record<string, unknown>

/** Marks a value the plain check does not pass. */
const refused: unique symbol = Symbol("refused")

const isPlain = (u: unknown): u is Plain => typeof u === "object" && u !== null && !Array.isArray(u)

/** A required string field. */
const str = (o: Plain, key: string): string => {
  const v = o[key]
  if (typeof v !== "string") throw refused
  return v
}

/** Copies an optional string field when present (an own key), as `Schema.optionalKey` does. */
const optStr = (from: Plain, to: Plain, key: string) => {
  if (!Object.hasOwn(from, key)) return
  const v = from[key]
  if (typeof v !== "string") throw refused
  to[key] = v
}

const strings = (u: unknown): ReadonlyArray<string> => {
  if (!Array.isArray(u)) throw refused
  for (const v of u) if (typeof v !== "string") throw refused
  return u.slice()
}

const plainTransaction = (u: unknown): RpcTransaction => {
  if (!isPlain(u)) throw refused
  const out: Plain = { hash: str(u, "hash"), from: str(u, "from") }
  if (Object.hasOwn(u, "to")) {
    const to = u.to
    if (to !== null && typeof to !== "string") throw refused
    out.to = to
  }
  out.value = str(u, "value")
  out.nonce = str(u, "nonce")
  out.input = str(u, "input")
  out.gas = str(u, "gas")
  optStr(u, out, "gasPrice")
  optStr(u, out, "maxFeePerGas")
  optStr(u, out, "maxPriorityFeePerGas")
  out.transactionIndex = str(u, "transactionIndex")
  return out as unknown as RpcTransaction
}

const plainBlock = (u: unknown): RpcBlock => {
  if (!isPlain(u)) throw refused
  const out: Plain = { number: str(u, "number"), hash: str(u, "hash") }
  optStr(u, out, "parentHash")
  out.timestamp = str(u, "timestamp")
  if (!Array.isArray(u.transactions)) throw refused
  out.transactions = u.transactions.map(plainTransaction)
  return out as unknown as RpcBlock
}

const plainLog = (u: unknown): RpcLog => {
  if (!isPlain(u)) throw refused
  return { address: str(u, "address"), topics: strings(u.topics), data: str(u, "data"), logIndex: str(u, "logIndex") }
}

const plainReceipt = (u: unknown): RpcReceipt => {
  if (!isPlain(u)) throw refused
  const out: Plain = { transactionHash: str(u, "transactionHash") }
  optStr(u, out, "blockHash")
  optStr(u, out, "status")
  out.gasUsed = str(u, "gasUsed")
  if (!Array.isArray(u.logs)) throw refused
  out.logs = u.logs.map(plainLog)
  return out as unknown as RpcReceipt
}

const plainFrameLog = (u: unknown) => {
  if (!isPlain(u)) throw refused
  const out: Plain = { address: str(u, "address") }
  if (Object.hasOwn(u, "topics")) out.topics = strings(u.topics)
  optStr(u, out, "data")
  if (Object.hasOwn(u, "index")) {
    const index = u.index
    if (typeof index !== "number" && typeof index !== "string") throw refused
    out.index = index
  }
  return out
}

const plainFrame = (u: unknown): CallFrame => {
  if (!isPlain(u)) throw refused
  const out: Plain = { type: str(u, "type"), from: str(u, "from") }
  optStr(u, out, "to")
  optStr(u, out, "value")
  optStr(u, out, "gas")
  optStr(u, out, "gasUsed")
  optStr(u, out, "input")
  optStr(u, out, "output")
  optStr(u, out, "error")
  if (Object.hasOwn(u, "calls")) {
    if (!Array.isArray(u.calls)) throw refused
    out.calls = u.calls.map(plainFrame)
  }
  if (Object.hasOwn(u, "logs")) {
    if (!Array.isArray(u.logs)) throw refused
    out.logs = u.logs.map(plainFrameLog)
  }
  return out as unknown as CallFrame
}

/** A trace entry: `{txHash, result}` around a frame when it has a `result`, else the frame (the Union's order). */
const plainTraceEntry = (u: unknown): TraceEntry => {
  if (!isPlain(u)) throw refused
  if (!Object.hasOwn(u, "result")) return plainFrame(u)
  const out: Plain = {}
  optStr(u, out, "txHash")
  out.result = plainFrame(u.result)
  return out as unknown as TraceEntry
}

export type TraceEntry = Schema.Schema.Type<typeof TraceEntry>

const plainArray =
  <A>(item: (u: unknown) => A) =>
  (u: unknown): ReadonlyArray<A> => {
    if (!Array.isArray(u)) throw refused
    return u.map(item)
  }

/** A decoder by the plain check, falling back on the Schema's own decoding for what the check does not pass. */
const decoder = <A>(plain: (u: unknown) => A, schema: Schema.Decoder<A>) => {
  const bySchema = Schema.decodeUnknownResult(schema)
  return (u: unknown): Result.Result<A, Schema.SchemaError> => {
    try {
      return Result.succeed(plain(u))
    } catch (e) {
      if (e !== refused) throw e
      return bySchema(u)
    }
  }
}

/** `eth_getBlockByNumber` with full transactions. */
export const decodeBlock = decoder(plainBlock, RpcBlock)
/** `eth_getBlockReceipts` (or each transaction's receipt). */
export const decodeReceipts = decoder(plainArray(plainReceipt), Schema.Array(RpcReceipt))
/** `debug_traceBlockByNumber` with `callTracer` and `withLog`. */
export const decodeTraces = decoder(plainArray(plainTraceEntry), Schema.Array(TraceEntry))
