/**
 * A chain's follower state as a value: what happens to a follower is an {@link Event}, and {@link apply}, a pure
 * function, is the one place an event changes the state. {@link Chains} holds every chain's state and counts each
 * event where it happens (blocks, alerts, reorganisations, deferrals since the process started), so the metrics
 * read counts that only grow, whatever becomes of the state (a chain in standby, no longer followed, followed
 * again).
 */
import { Data } from "effect"
import type { ChainState } from "./Settings.ts"

/** An event that carries nothing but its tag. */
type Nothing = Record<never, never>

/** What happened to a chain's follower. */
export type Event = Data.TaggedEnum<{
  /** This instance holds the chain's lease: its follower starts. */
  Held: { readonly holder: string }
  /** Another instance holds the lease (until `holderUntil` unless renewed); this one waits. */
  Standby: { readonly bots: number; readonly holder?: string; readonly holderUntil?: string }
  /** The chain's active bots were read: how many, and those not run, and why. */
  Prepared: { readonly bots: number; readonly skipped: ReadonlyArray<string> }
  /** A bot was switched off (over its bounds, its key lapsed): said until it is switched on again. */
  Paused: { readonly note: string }
  /** The node's head was read, the cursor being where it is. */
  HeadRead: { readonly head: number; readonly cursor?: number }
  /** The chain is followed for the first time, from `cursor`. */
  Begun: { readonly cursor: number; readonly head: number }
  /** Fresh blocks were processed up to `cursor` and stored with their alerts. */
  Advanced: {
    readonly cursor: number
    readonly head: number
    readonly blocks: number
    readonly alerts: number
    readonly at: string
    /** Blocks up to the target remain. */
    readonly catchingUp: boolean
    /** Seconds the step spent running its bots over the blocks (decoding them, evaluating, making alerts). */
    readonly judging: number
  }
  /** A bot caught up over blocks below the cursor, its alerts stored. */
  CaughtUp: { readonly alerts: number; readonly judging: number }
  /** The chain reorganised: back to `cursor`, the orphaned blocks' alerts retracted. */
  Rewound: { readonly cursor: number; readonly retracted: number }
  /** A bot waited for a later step, its key's bots having tried their share of bindings in this one. */
  Deferred: Nothing
  /** The node lacks what the step needs: the follower waits, saying why and since when. */
  Stalled: { readonly reason: string; readonly at: string }
  /** A step went through: the trouble it was in, if any, is over. */
  Stepped: Nothing
  /** A step failed: backing off, or halted by a reorganisation deeper than the hashes kept. */
  Failed: { readonly message: string; readonly halted: boolean; readonly at: string }
  /** The node announces new heads over its websocket. */
  Subscribed: Nothing
  /** The subscription to new heads failed or ended: polling alone, the subscription retried. */
  Unsubscribed: { readonly error: string }
}>

/** The constructors of {@link Event}. */
export const Event = Data.taggedEnum<Event>()

/** What a chain's state counts (as /health says them). */
interface StateCounts {
  readonly blocks: number
  readonly alerts: number
  readonly retractions: number
  readonly reorganisations: number
  readonly deferred: number
}

/** What a chain's follower counted since the process started. */
export interface Counts extends StateCounts {
  /** Seconds spent running bots over blocks (fresh ones and those a bot caught up over), reading and storing aside. */
  readonly judging: number
}

const none: StateCounts = { blocks: 0, alerts: 0, retractions: 0, reorganisations: 0, deferred: 0 }
const zero: Counts = { ...none, judging: 0 }

/** The counts of a state (kept when its follower starts or waits again). */
const countsOf = (state: ChainState | undefined): StateCounts =>
  state === undefined
    ? none
    : {
        blocks: state.blocks,
        alerts: state.alerts,
        retractions: state.retractions,
        reorganisations: state.reorganisations,
        deferred: state.deferred
      }

/** The state after `event`; undefined for a chain without a state that the event does not start. */
export const apply = (chainId: number, was: ChainState | undefined, event: Event): ChainState | undefined => {
  if (event._tag === "Held")
    return { chainId, state: "starting", heads: "polling", bots: 0, ...countsOf(was), holder: event.holder }
  if (event._tag === "Standby")
    return {
      chainId,
      state: "standby",
      heads: "polling",
      bots: event.bots,
      ...countsOf(was),
      ...(event.holder === undefined ? {} : { holder: event.holder }),
      ...(event.holderUntil === undefined ? {} : { holderUntil: event.holderUntil })
    }
  if (was === undefined) return undefined
  switch (event._tag) {
    case "Prepared": {
      const { skipped: _, ...rest } = was
      return { ...rest, bots: event.bots, ...(event.skipped.length === 0 ? {} : { skipped: event.skipped }) }
    }
    case "Paused":
      return { ...was, skipped: [...(was.skipped ?? []), event.note] }
    case "HeadRead":
      return {
        ...was,
        head: event.head,
        ...(event.cursor === undefined ? {} : { cursor: event.cursor, lag: event.head - event.cursor })
      }
    case "Begun":
      return { ...was, cursor: event.cursor, lag: Math.max(0, event.head - event.cursor), state: "following" }
    case "Advanced":
      return {
        ...was,
        cursor: event.cursor,
        lag: Math.max(0, event.head - event.cursor),
        blocks: was.blocks + event.blocks,
        alerts: was.alerts + event.alerts,
        lastProgress: event.at,
        state: event.catchingUp ? "catching up" : "following"
      }
    case "CaughtUp":
      return { ...was, alerts: was.alerts + event.alerts }
    case "Rewound":
      return {
        ...was,
        cursor: event.cursor,
        retractions: was.retractions + event.retracted,
        reorganisations: was.reorganisations + 1
      }
    case "Deferred":
      return { ...was, deferred: was.deferred + 1 }
    case "Stalled":
      return { ...was, lastError: event.reason, stalledSince: was.stalledSince ?? event.at }
    case "Stepped": {
      const { lastError: _, stalledSince: __, ...rest } = was
      const troubled = was.state === "backing off" || was.state === "starting" || was.state === "halted"
      return { ...rest, state: troubled ? "following" : was.state }
    }
    case "Failed":
      return {
        ...was,
        state: event.halted ? "halted" : "backing off",
        lastError: event.message,
        stalledSince: was.stalledSince ?? event.at
      }
    case "Subscribed": {
      const { headsError: _, ...rest } = was
      return { ...rest, heads: "subscribed" }
    }
    case "Unsubscribed":
      return { ...was, heads: "polling", headsError: event.error }
  }
}

/** What an event adds to the counts. */
const counted = (counts: Counts, event: Event): Counts => {
  switch (event._tag) {
    case "Advanced":
      return {
        ...counts,
        blocks: counts.blocks + event.blocks,
        alerts: counts.alerts + event.alerts,
        judging: counts.judging + event.judging
      }
    case "CaughtUp":
      return { ...counts, alerts: counts.alerts + event.alerts, judging: counts.judging + event.judging }
    case "Rewound":
      return {
        ...counts,
        retractions: counts.retractions + event.retracted,
        reorganisations: counts.reorganisations + 1
      }
    case "Deferred":
      return { ...counts, deferred: counts.deferred + 1 }
    default:
      return counts
  }
}

/** Every chain's state and counts. */
export interface Chains {
  /** The chain's state, if it has one. */
  readonly get: (chainId: number) => ChainState | undefined
  /** Applies `event` to the chain's state, and counts it. */
  readonly record: (chainId: number, event: Event) => void
  /** Every state, by chain id. */
  readonly all: () => ReadonlyArray<ChainState>
  /** Forgets the state of every chain but `kept` (their counts stay). */
  readonly keepOnly: (kept: ReadonlySet<number>) => void
  /** What each chain's follower counted since the process started, by chain id. */
  readonly counts: () => ReadonlyMap<number, Counts>
}

/** No chain yet. */
export const make = (): Chains => {
  const states = new Map<number, ChainState>()
  const counts = new Map<number, Counts>()
  return {
    get: (chainId) => states.get(chainId),
    record: (chainId, event) => {
      const next = apply(chainId, states.get(chainId), event)
      if (next === undefined) return
      states.set(chainId, next)
      counts.set(chainId, counted(counts.get(chainId) ?? zero, event))
    },
    all: () => [...states.values()].sort((a, b) => a.chainId - b.chainId),
    keepOnly: (kept) => {
      for (const chainId of states.keys()) if (!kept.has(chainId)) states.delete(chainId)
    },
    counts: () => counts
  }
}
