/**
 * TransferReader over EVM JSON-RPC, on Node's fetch: `eth_blockNumber` for the window, then one batch of
 * `eth_getLogs` (ERC-20 and ERC-721 `Transfer` logs with the address as sender, and as recipient) and `trace_filter`
 * (native transfers from and to it, where the node has traces; a node without them answers with token transfers
 * only, said as such). Every answer is decoded by Schema; a malformed one fails the read. No retry: the caller's
 * budget is short, and a node that does not answer makes the answer partial, not late.
 */
import { Exposure } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"

/** keccak256("Transfer(address,address,uint256)"): the topic of ERC-20 and ERC-721 transfers alike. */
export const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

const Hex = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]*$/))

const Log = Schema.Struct({
  address: Hex,
  topics: Schema.Array(Hex),
  data: Hex,
  blockNumber: Hex,
  transactionHash: Hex,
  removed: Schema.optionalKey(Schema.Boolean)
})

const Trace = Schema.Struct({
  type: Schema.String,
  action: Schema.Struct({
    from: Schema.optionalKey(Hex),
    to: Schema.optionalKey(Schema.NullOr(Hex)),
    value: Schema.optionalKey(Hex),
    callType: Schema.optionalKey(Schema.String)
  }),
  blockNumber: Schema.Number,
  transactionHash: Schema.optionalKey(Schema.NullOr(Hex)),
  error: Schema.optionalKey(Schema.String)
})

const Answer = Schema.Struct({
  id: Schema.Number,
  result: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Struct({ message: Schema.String }))
})
const decodeBatch = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Array(Answer)))
const decodeSingle = Schema.decodeUnknownEffect(Schema.fromJsonString(Answer))
const decodeLogs = Schema.decodeUnknownEffect(Schema.Array(Log))
const decodeTraces = Schema.decodeUnknownEffect(Schema.Array(Trace))
const decodeQuantity = Schema.decodeUnknownEffect(Hex)
const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

const hex = (n: number) => `0x${n.toString(16)}`
const topicOf = (address: string) => `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}`
const addressOf = (topic: string) => `0x${topic.slice(-40).toLowerCase()}`
const quantity = (h: string): bigint => (h === "0x" ? 0n : BigInt(h))

/** A log of a `Transfer` as a transfer: ERC-20 (the amount in `data`) or ERC-721 (the token id as 4th topic). */
const fromLog = (log: typeof Log.Type): Exposure.Transfer | undefined => {
  if (log.removed === true || log.topics[0]?.toLowerCase() !== transferTopic) return undefined
  if (log.topics.length === 3)
    return {
      transaction: log.transactionHash.toLowerCase(),
      block: Number(quantity(log.blockNumber)),
      token: log.address.toLowerCase(),
      standard: "erc20",
      from: addressOf(log.topics[1]!),
      to: addressOf(log.topics[2]!),
      value: quantity(log.data.slice(0, 66))
    }
  if (log.topics.length === 4)
    return {
      transaction: log.transactionHash.toLowerCase(),
      block: Number(quantity(log.blockNumber)),
      token: log.address.toLowerCase(),
      standard: "erc721",
      from: addressOf(log.topics[1]!),
      to: addressOf(log.topics[2]!),
      value: 1n
    }
  return undefined
}

/** A call trace that moved the chain's coin as a transfer. */
const fromTrace = (trace: typeof Trace.Type): Exposure.Transfer | undefined => {
  const a = trace.action
  if (trace.type !== "call" || trace.error !== undefined) return undefined
  if (a.callType !== undefined && a.callType !== "call") return undefined
  if (a.from === undefined || a.to === undefined || a.to === null || a.value === undefined) return undefined
  const value = quantity(a.value)
  if (value === 0n || trace.transactionHash === undefined || trace.transactionHash === null) return undefined
  return {
    transaction: trace.transactionHash.toLowerCase(),
    block: trace.blockNumber,
    token: "native",
    standard: "native",
    from: a.from.toLowerCase(),
    to: a.to.toLowerCase(),
    value
  }
}

/** The reader of the nodes in `urls` (chain id → JSON-RPC URL). */
export const layer = (urls: ReadonlyMap<number, string>): Layer.Layer<Exposure.TransferReader> => {
  const failed = (message: string) => new Exposure.TransferReadError({ message })
  const post = (chainId: number, body: unknown) => {
    const url = urls.get(chainId)
    if (url === undefined) return Effect.fail(failed(`no node for chain ${chainId}`))
    return Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: encodeJson(body),
          signal
        })
        if (!response.ok) throw new Error(`the node answered HTTP ${response.status}`)
        return await response.text()
      },
      catch: (e) => failed(`the node could not be read: ${(e as Error).message}`)
    })
  }
  return Layer.succeed(Exposure.TransferReader)({
    chains: [...urls.keys()],
    head: (chainId) =>
      post(chainId, { jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] }).pipe(
        Effect.flatMap((text) =>
          Effect.mapError(decodeSingle(text), () => failed("the node's answer to eth_blockNumber is not JSON-RPC"))
        ),
        Effect.flatMap((answer) =>
          Effect.mapError(decodeQuantity(answer.result), () =>
            failed(`eth_blockNumber: ${answer.error?.message ?? "no block number"}`)
          )
        ),
        Effect.map((h) => Number(quantity(h)))
      ),
    transfers: (chainId, address, from, to) => {
      const range = { fromBlock: hex(from), toBlock: hex(to) }
      const self = address.toLowerCase()
      const calls = [
        { method: "eth_getLogs", params: [{ ...range, topics: [transferTopic, topicOf(self)] }] },
        { method: "eth_getLogs", params: [{ ...range, topics: [transferTopic, null, topicOf(self)] }] },
        { method: "trace_filter", params: [{ ...range, fromAddress: [self] }] },
        { method: "trace_filter", params: [{ ...range, toAddress: [self] }] }
      ].map((c, id) => ({ jsonrpc: "2.0", id, ...c }))
      return post(chainId, calls).pipe(
        Effect.flatMap((text) =>
          Effect.mapError(decodeBatch(text), () => failed("the node's answer is not a JSON-RPC batch"))
        ),
        Effect.flatMap((answers) =>
          Effect.gen(function* () {
            const result = (id: number) => answers.find((a) => a.id === id)
            const logs: Array<Exposure.Transfer> = []
            for (const id of [0, 1]) {
              const answer = result(id)
              if (answer?.result === undefined)
                return yield* failed(`eth_getLogs: ${answer?.error?.message ?? "no result"}`)
              const decoded = yield* Effect.mapError(decodeLogs(answer.result), () =>
                failed("eth_getLogs: the answer is not a list of logs")
              )
              for (const log of decoded) {
                const t = fromLog(log)
                // A transfer to itself is in both answers: it is kept from the first.
                if (t !== undefined && !(id === 1 && t.from === self)) logs.push(t)
              }
            }
            // Traces are optional: a node without them (an error answer) gives token transfers only.
            const traced = [result(2), result(3)]
            const native = traced.every((a) => a?.result !== undefined)
            const coins: Array<Exposure.Transfer> = []
            if (native) {
              for (const [i, answer] of traced.entries()) {
                const decoded = yield* Effect.mapError(decodeTraces(answer!.result), () =>
                  failed("trace_filter: the answer is not a list of traces")
                )
                for (const trace of decoded) {
                  const t = fromTrace(trace)
                  if (t !== undefined && !(i === 1 && t.from === self)) coins.push(t)
                }
              }
            }
            return { transfers: [...logs, ...coins], native }
          })
        )
      )
    }
  })
}
