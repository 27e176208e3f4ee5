/**
 * Port: what an EVM chain's node holds, by block. A block comes whole (the block with its transactions, their
 * receipts, and the call traces when asked for) or not at all, so the facts built from it never mix a block with
 * another version's receipts. Failures are classified like the stores' (timeout, rate-limited, unavailable, not
 * found), so callers decide on retries without knowing JSON-RPC.
 */
import { Context, type Effect, Layer, Schema, type Scope, type Stream } from "effect"
import type { BlockData } from "./ChainFacts.ts"

/**
 * Why chain data could not be had.
 * - `Timeout`: the node did not answer in time.
 * - `RateLimited`: the node (or its provider) asks to slow down (HTTP 429, JSON-RPC limit errors).
 * - `Unavailable`: the node cannot be reached, or fails (connection refused, HTTP 5xx).
 * - `NotFound`: the block does not exist (yet).
 * - `Unsupported`: the node lacks a method the request needs (`debug_traceBlockByNumber` on most providers).
 * - `Invalid`: the node answered something that is not what the method returns.
 * - `NotConfigured`: no RPC URL for the chain.
 */
export const ChainDataErrorReason = Schema.Literals([
  "Timeout",
  "RateLimited",
  "Unavailable",
  "NotFound",
  "Unsupported",
  "Invalid",
  "NotConfigured"
])

/** The reason of a {@link ChainDataError}. */
export type ChainDataErrorReason = typeof ChainDataErrorReason.Type

/** Chain data could not be had; `operation` names the request, `message` says what happened. */
export class ChainDataError extends Schema.TaggedError<ChainDataError>()("ChainDataError", {
  reason: ChainDataErrorReason,
  chainId: Schema.Number,
  operation: Schema.String,
  message: Schema.String
}) {
  /** True when the same request may succeed if tried again later. */
  get isRetryable(): boolean {
    return this.reason === "Timeout" || this.reason === "RateLimited" || this.reason === "Unavailable"
  }
}

/** A block asked for, as it came: its data, or why there is none (one missing block does not fail the others). */
export type BlockResult =
  | { readonly _tag: "Found"; readonly number: number; readonly data: BlockData }
  | { readonly _tag: "Missing"; readonly number: number; readonly error: ChainDataError }

/** Reads chains' blocks through their nodes. */
export class ChainData extends Context.Service<
  ChainData,
  {
    /**
     * The node's trouble as the reader sees it while it retries: since when (epoch ms) its requests fail, and the
     * last failure; undefined once a request goes through. What a follower reports from the first failed
     * attempt, before the retries give up.
     */
    readonly trouble: (
      chainId: number
    ) => Effect.Effect<{ readonly since: number; readonly message: string } | undefined>
    /** The newest block number the chain's node has. */
    readonly head: (chainId: number) => Effect.Effect<number, ChainDataError>
    /**
     * A subscription to the chain's new heads (`eth_subscribe("newHeads")` over a websocket): succeeds once the
     * node has accepted it, with the numbers of the heads it announces from then on, for as long as the scope
     * lives. Fails `NotConfigured` when the chain has no websocket URL and `Unsupported` when the node refuses
     * the subscription; the stream fails when the connection drops. A follower polls as well: an announcement
     * only wakes it sooner.
     */
    readonly newHeads: (
      chainId: number
    ) => Effect.Effect<Stream.Stream<number, ChainDataError>, ChainDataError, Scope.Scope>
    /**
     * The hashes of blocks (without their transactions), in the order asked; `undefined` for a block the node
     * does not have: how a follower checks, cheaply, that the blocks it processed are still the chain's.
     */
    readonly hashes: (
      chainId: number,
      numbers: ReadonlyArray<number>
    ) => Effect.Effect<
      ReadonlyArray<{ readonly number: number; readonly hash: string; readonly parentHash: string } | undefined>,
      ChainDataError
    >
    /**
     * Whether the chain's node answers `debug_traceBlockByNumber` with the call tracer (asked once, then known):
     * rules that read internal frames need it.
     */
    readonly tracesAvailable: (chainId: number) => Effect.Effect<boolean, ChainDataError>
    /**
     * The blocks, each whole, in the order asked; with `traces`, each block's call traces too (failing with
     * `Unsupported` when the node has none). A block the node does not have is `Missing` with its reason; a
     * node that cannot be reached fails the whole request.
     */
    readonly blocks: (
      chainId: number,
      numbers: ReadonlyArray<number>,
      options: { readonly traces: boolean }
    ) => Effect.Effect<ReadonlyArray<BlockResult>, ChainDataError>
  }
>()("@vigil/core/ChainData") {}

/**
 * Port: a contract's state at the newest block, as registering a contract reads it: the proxy's implementation
 * slot (ABI sources) and what a call returns (a token's decimals).
 */
export class ContractState extends Context.Service<
  ContractState,
  {
    /** A storage word of a contract at the newest block (`eth_getStorageAt`), as 0x hex. */
    readonly storageAt: (chainId: number, address: string, slot: string) => Effect.Effect<string, ChainDataError>
    /** What a call of a contract returns at the newest block (`eth_call` of `data` to `address`), as 0x hex. */
    readonly call: (chainId: number, address: string, data: string) => Effect.Effect<string, ChainDataError>
  }
>()("@vigil/core/ChainData/ContractState") {}

/** Both ports, as a node adapter implements them over one connection. */
export type Both = ChainData["Service"] & ContractState["Service"]

/** The layer of both ports from an adapter's one implementation. */
export const layerOf = (node: Both): Layer.Layer<ChainData | ContractState> =>
  Layer.succeedContext(Context.make(ChainData, node).pipe(Context.add(ContractState, node)))
