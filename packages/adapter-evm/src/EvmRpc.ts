/**
 * ChainData over EVM JSON-RPC (HTTP, through `JsonRpc`). Each block is read with `eth_getBlockByNumber` (full transactions),
 * `eth_getBlockReceipts` (or each transaction's receipt when the node lacks it) and, when asked, with
 * `debug_traceBlockByNumber` (`callTracer`, `withLog`). Requests of several blocks go in JSON-RPC batches, a few
 * batches in flight; timeouts, HTTP 429 and 5xx are retried with exponential backoff. The RPC URLs are the
 * operator's own configuration, so the webhook SSRF guard does not apply to them.
 *
 * New heads come from `eth_subscribe("newHeads")` over a chain's websocket URL when one is configured (`NewHeads`).
 */
import { ChainData, type ChainFacts, NodeAnswers, Pace } from "@vigil/core"
import { Clock, Effect, type Layer, Result, Schedule, Schema, Semaphore } from "effect"
import * as JsonRpc from "./JsonRpc.ts"
import * as NewHeads from "./NewHeads.ts"

type ChainDataError = ChainData.ChainDataError
const ChainDataError = ChainData.ChainDataError

/** Options of the JSON-RPC chain reader. */
export interface Options {
  /** The node of each chain. */
  readonly urls: ReadonlyMap<number, string>
  /** The websocket URL of a chain's node, where new heads are subscribed to. Default none (polling only). */
  readonly wsUrls?: ReadonlyMap<number, string>
  /** Per HTTP request. Default 30,000. */
  readonly timeoutMillis?: number
  /** Blocks per JSON-RPC batch. Default 10. */
  readonly blocksPerBatch?: number
  /** Batch requests in flight at once per chain, whatever reads them. Default 4. */
  readonly inFlight?: number
  /** Retries of a retryable failure (timeout, 429, 5xx, refused connection). Default 4. */
  readonly retries?: number
  /** The first retry's delay; each next one doubles. Default 250. */
  readonly retryBaseMillis?: number
}

type RpcCall = JsonRpc.Call
type RpcAnswer = JsonRpc.Answer

const hex = (n: number) => `0x${n.toString(16)}`

/**
 * A node's answers decoded as their Schemas say (blocks, receipts and call frames by NodeAnswers' decoders, which
 * answer as the Schemas do): a malformed one is refused with what is wrong, never cast.
 */
const decodeHeader = Schema.decodeUnknownResult(NodeAnswers.RpcHeader)
const { decodeBlock, decodeReceipts, decodeTraces } = NodeAnswers

/** A hex string in lower case (nodes may differ in case), anything else as it is. */
const lower = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : v)

/** The JSON-RPC chain reader. */
export const make = (options: Options): ChainData.Both => {
  const timeoutMillis = options.timeoutMillis ?? 30_000
  const blocksPerBatch = Math.max(1, options.blocksPerBatch ?? 10)
  const inFlight = Math.max(1, options.inFlight ?? 4)
  const retry = {
    schedule: Schedule.exponential(`${options.retryBaseMillis ?? 250} millis`),
    times: Math.max(0, options.retries ?? 4),
    while: (e: ChainDataError) => e.isRetryable
  }
  const traces = new Map<number, boolean>()
  /**
   * Each chain's request slots: the reads of one chain share `inFlight` (a follower reading its next batches while
   * it judges one, a historical scan beside it), so a node that must not be asked twice at once is not.
   */
  const slots = new Map<number, Semaphore.Semaphore>()
  const slotsOf = (chainId: number) => {
    const known = slots.get(chainId)
    if (known !== undefined) return known
    const made = Semaphore.makeUnsafe(inFlight)
    slots.set(chainId, made)
    return made
  }
  /** Since when each chain's requests fail, and the last failure (cleared by one that goes through). */
  const troubles = new Map<number, { since: number; message: string }>()

  const urlOf = (chainId: number, operation: string) => {
    const url = options.urls.get(chainId)
    return url === undefined
      ? Effect.fail(
          new ChainDataError({
            reason: "NotConfigured",
            chainId,
            operation,
            message: `no RPC URL is configured for chain ${chainId} (VIGIL_RPC_URL_${chainId})`
          })
        )
      : Effect.succeed(url)
  }

  /** One HTTP request carrying `calls` as a batch; the answers in the order of the calls. */
  const post = (
    chainId: number,
    operation: string,
    calls: ReadonlyArray<RpcCall>
  ): Effect.Effect<ReadonlyArray<RpcAnswer>, ChainDataError> =>
    Effect.gen(function* () {
      const url = yield* urlOf(chainId, operation)
      return yield* Effect.mapError(
        JsonRpc.batch(url, calls, { timeoutMillis }),
        (e) => new ChainDataError({ reason: e.reason, chainId, operation, message: e.message })
      )
    }).pipe(
      // Every attempt counts: trouble shows from the first failure, not once the retries give up.
      Effect.tapError((e) =>
        e.reason === "NotConfigured"
          ? Effect.void
          : Effect.map(Clock.currentTimeMillis, (now) =>
              troubles.set(chainId, { since: troubles.get(chainId)?.since ?? now, message: e.message })
            )
      ),
      Effect.tap(() => Effect.sync(() => troubles.delete(chainId))),
      Effect.retry(retry)
    )

  /** A batch whose every call must succeed: their results, or the first failure, classified. */
  const all = (chainId: number, operation: string, calls: ReadonlyArray<RpcCall>) =>
    Effect.flatMap(post(chainId, operation, calls), (answers) => {
      const failed = answers.findIndex((a) => !a.ok)
      if (failed === -1) return Effect.succeed(answers.map((a) => (a as { result: unknown }).result))
      const a = answers[failed] as Extract<RpcAnswer, { ok: false }>
      return Effect.fail(
        new ChainDataError({
          reason: a.reason,
          chainId,
          operation,
          message: `${calls[failed]!.method}: ${a.message} (${a.code})`
        })
      )
    })

  const head = (chainId: number) =>
    Effect.flatMap(all(chainId, "head", [{ method: "eth_blockNumber", params: [] }]), ([n]) =>
      typeof n === "string" && /^0x[0-9a-f]+$/i.test(n)
        ? Effect.succeed(Number(BigInt(n)))
        : Effect.fail(
            new ChainDataError({
              reason: "Invalid",
              chainId,
              operation: "head",
              message: "eth_blockNumber did not answer a number"
            })
          )
    )

  const hashes = (chainId: number, numbers: ReadonlyArray<number>) =>
    numbers.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(
          all(
            chainId,
            "hashes",
            numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [hex(n), false] }))
          ),
          // null: the node does not have the block (yet); anything else must be a header.
          (blocks) =>
            Effect.forEach(blocks, (b, i) => {
              if (b === null) return Effect.succeed(undefined)
              const header = decodeHeader(b)
              return Result.isSuccess(header)
                ? Effect.succeed({ number: numbers[i]!, ...header.success })
                : Effect.fail(
                    new ChainDataError({
                      reason: "Invalid",
                      chainId,
                      operation: "hashes",
                      message: `block ${numbers[i]}: eth_getBlockByNumber did not answer a header: ${header.failure.message}`
                    })
                  )
            })
        )

  const storageAt = (chainId: number, address: string, slot: string) =>
    Effect.flatMap(
      all(chainId, "storageAt", [{ method: "eth_getStorageAt", params: [address, slot, "latest"] }]),
      ([word]) =>
        typeof word === "string" && /^0x[0-9a-f]*$/i.test(word)
          ? Effect.succeed(word)
          : Effect.fail(
              new ChainDataError({
                reason: "Invalid",
                chainId,
                operation: "storageAt",
                message: "eth_getStorageAt did not answer a storage word"
              })
            )
    )

  const call = (chainId: number, address: string, data: string) =>
    Effect.flatMap(
      all(chainId, "call", [{ method: "eth_call", params: [{ to: address, data }, "latest"] }]),
      ([out]) =>
        typeof out === "string" && /^0x[0-9a-f]*$/i.test(out)
          ? Effect.succeed(out)
          : Effect.fail(
              new ChainDataError({
                reason: "Invalid",
                chainId,
                operation: "call",
                message: "eth_call did not answer hex data"
              })
            )
    )

  const traceCall = (n: number): RpcCall => ({
    method: "debug_traceBlockByNumber",
    params: [hex(n), { tracer: "callTracer", tracerConfig: { withLog: true } }]
  })

  const tracesAvailable = (chainId: number) =>
    traces.has(chainId)
      ? Effect.succeed(traces.get(chainId)!)
      : Effect.flatMap(post(chainId, "traces", [traceCall(0)]), ([a]) => {
          const available = a === undefined ? false : a.ok ? Array.isArray(a.result) : a.reason !== "Unsupported"
          traces.set(chainId, available)
          return Effect.succeed(available)
        })

  /** One batch of blocks: block and receipts (and traces) of each, in one request. */
  const batch = (chainId: number, numbers: ReadonlyArray<number>, withTraces: boolean) =>
    Effect.gen(function* () {
      const per = withTraces ? 3 : 2
      const calls = numbers.flatMap((n): Array<RpcCall> => [
        { method: "eth_getBlockByNumber", params: [hex(n), true] },
        { method: "eth_getBlockReceipts", params: [hex(n)] },
        ...(withTraces ? [traceCall(n)] : [])
      ])
      const answers = yield* post(chainId, "blocks", calls)
      const results: Array<ChainData.BlockResult> = []
      // A mainnet-sized block with its receipts and traces takes milliseconds to check: requests are answered
      // between two blocks once the batch has held the thread a while, not only after the batch.
      const pace = yield* Pace.make
      for (const [k, number] of numbers.entries()) {
        if (k > 0) yield* Pace.breathe(pace)
        const [blockAnswer, receiptsAnswer, traceAnswer] = answers.slice(k * per, k * per + per)
        const missing = (reason: ChainData.ChainDataErrorReason, message: string) =>
          results.push({
            _tag: "Missing",
            number,
            error: new ChainDataError({ reason, chainId, operation: "blocks", message })
          })
        if (!blockAnswer!.ok) {
          missing(blockAnswer!.reason, `block ${number}: ${blockAnswer!.message}`)
          continue
        }
        if (blockAnswer!.result === null) {
          missing("NotFound", `block ${number} does not exist on chain ${chainId}`)
          continue
        }
        const decodedBlock = decodeBlock(blockAnswer!.result)
        if (Result.isFailure(decodedBlock)) {
          missing(
            "Invalid",
            `block ${number}: eth_getBlockByNumber did not answer a block: ${decodedBlock.failure.message}`
          )
          continue
        }
        const block = decodedBlock.success
        let receiptsAnswered: unknown = receiptsAnswer!.ok ? receiptsAnswer!.result : undefined
        if (!receiptsAnswer!.ok) {
          if (receiptsAnswer!.reason !== "Unsupported") {
            missing("Invalid", `block ${number}: eth_getBlockReceipts: ${receiptsAnswer!.message}`)
            continue
          }
          // A node without eth_getBlockReceipts: each transaction's receipt.
          receiptsAnswered = yield* all(
            chainId,
            "blocks",
            block.transactions.map((t) => ({ method: "eth_getTransactionReceipt", params: [t.hash] }))
          )
        }
        const decodedReceipts = decodeReceipts(receiptsAnswered)
        if (Result.isFailure(decodedReceipts)) {
          missing("Invalid", `block ${number}: the receipts are not receipts: ${decodedReceipts.failure.message}`)
          continue
        }
        const receipts = decodedReceipts.success
        if (receipts.length !== block.transactions.length) {
          missing("Invalid", `block ${number}: the receipts do not match the block's transactions`)
          continue
        }
        // Read in one batch, but a node may switch branches between two calls: receipts of another version of
        // the block would pair its transactions with other logs. Retryable: read again, they agree.
        const txHash = (i: number) => lower(block.transactions[i]?.hash)
        const foreign = receipts.findIndex(
          (r, i) =>
            (r.blockHash !== undefined && lower(r.blockHash) !== lower(block.hash)) ||
            lower(r.transactionHash) !== txHash(i)
        )
        if (foreign !== -1) {
          missing(
            "Unavailable",
            `block ${number}: receipt ${foreign} is not of this block's transaction ${foreign} (the chain changed while the block was read)`
          )
          continue
        }
        let frames: ReadonlyArray<ChainFacts.CallFrame> | undefined
        if (withTraces) {
          if (!traceAnswer!.ok) {
            const reason = traceAnswer!.reason
            if (reason === "Unsupported") {
              traces.set(chainId, false)
              return yield* new ChainDataError({
                reason,
                chainId,
                operation: "blocks",
                message: `the node of chain ${chainId} has no call traces (debug_traceBlockByNumber: ${traceAnswer!.message})`
              })
            }
            missing(reason, `block ${number}: debug_traceBlockByNumber: ${traceAnswer!.message}`)
            continue
          }
          const decodedTraces = decodeTraces(traceAnswer!.result)
          if (Result.isFailure(decodedTraces)) {
            missing("Invalid", `block ${number}: the traces are not call frames: ${decodedTraces.failure.message}`)
            continue
          }
          const entries = decodedTraces.success
          frames = entries.map((t) => ("result" in t ? t.result : t))
          if (frames.length !== block.transactions.length) {
            missing("Invalid", `block ${number}: the traces do not match the block's transactions`)
            continue
          }
          const strange = entries.findIndex(
            (t, i) => "txHash" in t && t.txHash !== undefined && lower(t.txHash) !== txHash(i)
          )
          if (strange !== -1) {
            missing(
              "Unavailable",
              `block ${number}: trace ${strange} is not of this block's transaction ${strange} (the chain changed while the block was read)`
            )
            continue
          }
        }
        results.push({
          _tag: "Found",
          number,
          data: { block, receipts, ...(frames === undefined ? {} : { traces: frames }) }
        })
      }
      return results
    })

  const blocks = (chainId: number, numbers: ReadonlyArray<number>, options: { readonly traces: boolean }) => {
    const batches: Array<ReadonlyArray<number>> = []
    for (let i = 0; i < numbers.length; i += blocksPerBatch) batches.push(numbers.slice(i, i + blocksPerBatch))
    return Effect.map(
      Effect.forEach(batches, (b) => Semaphore.withPermit(slotsOf(chainId), batch(chainId, b, options.traces)), {
        concurrency: inFlight
      }),
      (parts) => parts.flat()
    )
  }

  const newHeads = (chainId: number) => {
    const url = options.wsUrls?.get(chainId)
    return url === undefined
      ? Effect.fail(
          new ChainDataError({
            reason: "NotConfigured",
            chainId,
            operation: "newHeads",
            message: `no websocket URL is configured for chain ${chainId}`
          })
        )
      : NewHeads.subscribe({ chainId, url, timeoutMillis })
  }

  const trouble = (chainId: number) => Effect.sync(() => troubles.get(chainId))

  return { head, newHeads, hashes, storageAt, call, tracesAvailable, blocks, trouble }
}

/** The JSON-RPC chain reader as a layer. */
export const layer = (options: Options): Layer.Layer<ChainData.ChainData | ChainData.ContractState> =>
  ChainData.layerOf(make(options))
