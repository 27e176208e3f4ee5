/** The knobs of following, the state each chain's follower reports, and why a step does not go on. */
import { Schema } from "effect"
import * as AlertPolicy from "../alerts/AlertPolicy.ts"
import * as Scan from "../chain/Scan.ts"

/** Knobs of following. */
export interface Settings {
  /** How often each chain's head is polled. */
  readonly pollMillis: number
  /** Confirmations to wait per chain (blocks behind the head); chains not named wait `defaultConfirmations`. */
  readonly confirmations: Readonly<Record<number, number>>
  readonly defaultConfirmations: number
  /**
   * Blocks read per step while catching up. Best a multiple of what the chain reader has in flight at once (the
   * JSON-RPC reader's default: 4 requests of 10 blocks), so no request slot idles in a step's last round.
   */
  readonly batch: number
  /** Recent block hashes kept per chain: the deepest reorganisation followed. */
  readonly keep: number
  /** Longest wait between attempts while the node fails. */
  readonly maxBackoffMillis: number
  /**
   * The work one bot may do in one step: bindings its rules try, and new matches per new block of the step. A bot
   * over them is switched off with the reason (`paused`), so one rule can neither hold the process nor flood
   * its channels; the others go on. A key's bots together try at most `bindingsPerStep` bindings per new block of
   * a step; past that share, its other bots wait for a later step and catch up from there.
   */
  readonly limits: Scan.Bounds
  /**
   * This instance's name as a holder of chains' leases (several instances on one store follow each chain once);
   * by default one made when the follower starts.
   */
  readonly instance?: string
  /** How long a chain's lease lives unrenewed: how soon another instance takes over a dead one's chains. */
  readonly leaseMillis?: number
  /**
   * The SHA-256 (of a text, as UTF-8, in lowercase hex) alert ids are hashed by: JavaScript's by default; a host may
   * give its platform's, which gives the same ids (`AlertPolicy.Digest`).
   */
  readonly digest: (text: string) => string
}

export const defaultSettings: Settings = {
  pollMillis: 2_000,
  confirmations: {},
  defaultConfirmations: 0,
  batch: 80,
  keep: 256,
  maxBackoffMillis: 60_000,
  limits: Scan.defaultBounds,
  digest: AlertPolicy.pureDigest
}

/** What a chain's follower is doing. */
export interface ChainState {
  readonly chainId: number
  /**
   * `halted`: the chain reorganised deeper than the hashes kept, so the follower cannot tell which of its
   * alerts still stand; it goes no further until an operator re-anchors it (`vigil follow reset`), and the
   * process is not ready (`/health` 503) meanwhile.
   */
  readonly state: "starting" | "following" | "catching up" | "backing off" | "halted" | "standby"
  /**
   * The instance that holds the chain's lease (this one while it follows it). `standby`: another instance holds
   * it, until `holderUntil` unless renewed; this one takes the chain over when that lease runs out.
   */
  readonly holder?: string
  readonly holderUntil?: string
  /**
   * How new heads are learnt: `subscribed` while the node announces them over its websocket (each announcement
   * starts a step at once; polling goes on), else `polling`.
   */
  readonly heads: "polling" | "subscribed"
  /** Why a configured subscription to new heads is not working, while it is retried. */
  readonly headsError?: string
  /** Active bots of the chain. */
  readonly bots: number
  readonly head?: number
  /** The last block processed. */
  readonly cursor?: number
  /** Blocks between the head and the cursor; absent while not known (the node failing, the follower halted). */
  readonly lag?: number
  /** Counted since the process started. */
  readonly blocks: number
  readonly alerts: number
  /** The chain's alerts retracted, as stored (by any follower or a re-anchoring), where the chain is followed. */
  readonly retractions: number
  readonly reorganisations: number
  /** Times a bot waited for a later step, its key's bots having tried their share of bindings in a step. */
  readonly deferred: number
  /** Why the follower is not moving: the last step failed, or the node lacks what it needs (a stall). */
  readonly lastError?: string
  /** ISO instant since which the follower has not moved for the reason in `lastError`. */
  readonly stalledSince?: string
  /** Active bots not run, and why (rules that no longer check, traces the node lacks). */
  readonly skipped?: ReadonlyArray<string>
  /** ISO instant of the last step that moved the cursor. */
  readonly lastProgress?: string
}

/** The chain reorganised deeper than the hashes kept: the follower cannot go on by itself. */
export class DeepReorganisation extends Schema.TaggedError<DeepReorganisation>()("DeepReorganisation", {
  chainId: Schema.Int,
  message: Schema.String
}) {}

/**
 * The node's answers do not let a step go on yet: a block it lacks, a replica behind the others, a reorganisation
 * under way. Nothing is written; the step is tried again, backing off.
 */
export class Unsettled extends Schema.TaggedError<Unsettled>()("Unsettled", {
  chainId: Schema.Int,
  message: Schema.String
}) {}
