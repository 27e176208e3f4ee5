/**
 * TransferReader over EVM JSON-RPC (through `JsonRpc`): `eth_blockNumber` (or a search by timestamp, for a past day)
 * for the window, then `eth_getLogs` (ERC-20 and ERC-721 `Transfer` logs with the address as sender, and as
 * recipient) and `trace_filter` (native transfers from and to it). A range the node refuses (anvil serves at most
 * 300 blocks of traces; hosted nodes limit logs) is split in halves and asked again in one batch, until every part
 * is read or the parts would be too many; what is still not read is a gap, and a node that does not serve
 * `trace_filter` at all (classified `Unsupported`: JSON-RPC code -32601) leaves native transfers as a gap over the
 * whole window. Every answer
 * is decoded by Schema; a malformed one fails the read. No retry of a failed request: the caller's budget is
 * short, and a node that does not answer makes the answer partial, not late.
 */
import { Exposure } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import * as JsonRpc from "./JsonRpc.ts"

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

const decodeLogs = Schema.decodeUnknownEffect(Schema.Array(Log))
const decodeTraces = Schema.decodeUnknownEffect(Schema.Array(Trace))
const decodeQuantity = Schema.decodeUnknownEffect(Hex)
const decodeHeader = Schema.decodeUnknownEffect(Schema.Struct({ number: Hex, timestamp: Hex }))

/** The most parts a window is split into before what is still refused is left as a gap. */
const maxParts = 512

/** keccak256("decimals()")[0..4]. */
const decimalsSelector = "0x313ce567"

const hex = (n: number) => `0x${n.toString(16)}`
/** An address as a 32-byte topic. */
export const topicOf = (address: string) => `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}`
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

type Kind = Exposure.Gap["kind"]

/** The two calls (from the address, to it) that read one kind of transfer over a range. */
const callsOf = (
  kind: Kind,
  self: string,
  from: number,
  to: number
): ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }> => {
  const range = { fromBlock: hex(from), toBlock: hex(to) }
  return kind === "token"
    ? [
        { method: "eth_getLogs", params: [{ ...range, topics: [transferTopic, topicOf(self)] }] },
        { method: "eth_getLogs", params: [{ ...range, topics: [transferTopic, null, topicOf(self)] }] }
      ]
    : [
        { method: "trace_filter", params: [{ ...range, fromAddress: [self] }] },
        { method: "trace_filter", params: [{ ...range, toAddress: [self] }] }
      ]
}

/** A node that could not be read, saying why. */
const failed = (message: string) => new Exposure.TransferReadError({ message })

/**
 * The transfers of both kinds over `from..to`, splitting what the node refuses: each round asks every part of
 * both kinds in one batch (one request when nothing is refused), and a refused part is asked again in halves.
 */
const bothReader =
  (
    batch: (
      chainId: number,
      calls: ReadonlyArray<JsonRpc.Call>
    ) => Effect.Effect<ReadonlyArray<JsonRpc.Answer>, Exposure.TransferReadError>
  ) =>
  (chainId: number, self: string, from: number, to: number) =>
    Effect.gen(function* () {
      const found: Array<Exposure.Transfer> = []
      const gaps: Array<Exposure.Gap> = []
      type Part = { readonly kind: Kind; readonly a: number; readonly b: number }
      let parts: ReadonlyArray<Part> = [
        { kind: "token", a: from, b: to },
        { kind: "native", a: from, b: to }
      ]
      while (parts.length > 0) {
        const answers = yield* batch(
          chainId,
          parts.flatMap((p) => callsOf(p.kind, self, p.a, p.b))
        )
        const refused: Array<Part & { readonly reason: string }> = []
        const unserved = new Set<Kind>()
        for (const [i, part] of parts.entries()) {
          const pair = [answers[2 * i]!, answers[2 * i + 1]!]
          const error = pair.find((x) => !x.ok || x.result === null)
          if (error !== undefined) {
            if (!error.ok && error.reason === "Unsupported") {
              // Not served at all: nothing of this kind can be read, whatever the range.
              if (!unserved.has(part.kind))
                gaps.push({
                  kind: part.kind,
                  fromBlock: from,
                  toBlock: to,
                  reason: `the node does not serve ${callsOf(part.kind, self, from, to)[0]!.method}`
                })
              unserved.add(part.kind)
            } else refused.push({ ...part, reason: error.ok ? "no result" : error.message })
            continue
          }
          for (const [side, answer] of pair.entries()) {
            const result = answer.ok ? answer.result : undefined
            if (part.kind === "token") {
              const logs = yield* Effect.mapError(decodeLogs(result), () =>
                failed("eth_getLogs: the answer is not a list of logs")
              )
              for (const log of logs) {
                const t = fromLog(log)
                // A transfer to itself is in both answers: it is kept from the first.
                if (t !== undefined && !(side === 1 && t.from === self)) found.push(t)
              }
            } else {
              const traces = yield* Effect.mapError(decodeTraces(result), () =>
                failed("trace_filter: the answer is not a list of traces")
              )
              for (const trace of traces) {
                const t = fromTrace(trace)
                if (t !== undefined && !(side === 1 && t.from === self)) found.push(t)
              }
            }
          }
        }
        const next: Array<Part> = []
        for (const r of refused) {
          if (unserved.has(r.kind)) continue
          if (r.a === r.b || next.filter((p) => p.kind === r.kind).length + 2 > maxParts)
            gaps.push({ kind: r.kind, fromBlock: r.a, toBlock: r.b, reason: `the node refused the range: ${r.reason}` })
          else {
            const middle = Math.floor((r.a + r.b) / 2)
            next.push({ kind: r.kind, a: r.a, b: middle }, { kind: r.kind, a: middle + 1, b: r.b })
          }
        }
        parts = next
      }
      return { transfers: found, gaps }
    })

/** The reader of the nodes in `urls` (chain id → JSON-RPC URL). */
export const layer = (urls: ReadonlyMap<number, string>): Layer.Layer<Exposure.TransferReader> => {
  const urlOf = (chainId: number) => {
    const url = urls.get(chainId)
    return url === undefined ? Effect.fail(failed(`no node for chain ${chainId}`)) : Effect.succeed(url)
  }
  const unread = (e: JsonRpc.RpcFailure) => failed(`the node could not be read: ${e.message}`)
  /** One batch of calls; the answers in the calls' order (one the node left out fails the read). */
  const batch = (chainId: number, calls: ReadonlyArray<JsonRpc.Call>) =>
    Effect.flatMap(urlOf(chainId), (url) =>
      JsonRpc.batch(url, calls).pipe(
        Effect.mapError(unread),
        Effect.filterOrFail(
          (answers) => answers.every((a) => a.ok || a.code !== 0),
          () => failed("the node's batch answer misses some calls")
        )
      )
    )
  const single = (chainId: number, method: string, params: ReadonlyArray<unknown>) =>
    Effect.flatMap(urlOf(chainId), (url) =>
      JsonRpc.call(url, method, params).pipe(
        Effect.mapError((e) => failed(e.message)),
        Effect.flatMap((result) =>
          result === null ? Effect.fail(failed(`${method}: no result`)) : Effect.succeed(result)
        )
      )
    )
  const head = (chainId: number) =>
    single(chainId, "eth_blockNumber", []).pipe(
      Effect.flatMap((result) =>
        Effect.mapError(decodeQuantity(result), () => failed("eth_blockNumber: not a block number"))
      ),
      Effect.map((h) => Number(quantity(h)))
    )
  /** A block's number and timestamp (seconds). */
  const header = (chainId: number, block: number) =>
    single(chainId, "eth_getBlockByNumber", [hex(block), false]).pipe(
      Effect.flatMap((result) =>
        Effect.mapError(decodeHeader(result), () => failed("eth_getBlockByNumber: not a block"))
      ),
      Effect.map((h) => ({ number: Number(quantity(h.number)), timestamp: Number(quantity(h.timestamp)) }))
    )

  const readBoth = bothReader(batch)

  return Layer.succeed(Exposure.TransferReader)({
    chains: [...urls.keys()],
    head,
    blockAt: (chainId, seconds) =>
      Effect.gen(function* () {
        const last = yield* Effect.flatMap(head(chainId), (h) => header(chainId, h))
        if (last.timestamp <= seconds) return last.number
        const first = yield* header(chainId, 0)
        if (first.timestamp > seconds) return undefined
        // lo's timestamp is at or before `seconds`, hi's after it: interpolated guesses, every other one halving.
        let [lo, hi] = [first, last]
        for (let step = 0; hi.number - lo.number > 1; step++) {
          const guess =
            step % 2 === 0
              ? lo.number +
                Math.floor(((seconds - lo.timestamp) * (hi.number - lo.number)) / (hi.timestamp - lo.timestamp))
              : Math.floor((lo.number + hi.number) / 2)
          const probe = yield* header(chainId, Math.min(hi.number - 1, Math.max(lo.number + 1, guess)))
          if (probe.timestamp <= seconds) lo = probe
          else hi = probe
        }
        return lo.number
      }),
    transfers: (chainId, address, from, to) => readBoth(chainId, address.toLowerCase(), from, to),
    decimals: (chainId, tokens) =>
      tokens.length === 0
        ? Effect.succeed(new Map())
        : Effect.map(
            batch(
              chainId,
              tokens.map((token) => ({ method: "eth_call", params: [{ to: token, data: decimalsSelector }, "latest"] }))
            ),
            (answers) => {
              const found = new Map<string, number>()
              for (const [i, answer] of answers.entries()) {
                // A uint8 in one 32-byte word; anything else is not an answer.
                const r = answer.ok ? answer.result : undefined
                if (typeof r !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(r)) continue
                const d = BigInt(r)
                if (d <= 77n) found.set(tokens[i]!, Number(d))
              }
              return found
            }
          )
  })
}
