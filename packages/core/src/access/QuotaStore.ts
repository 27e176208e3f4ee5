/** Port: atomic usage counters over fixed time windows, the storage beneath API-key quotas. */
import { Context, type Effect } from "effect"
import type { StoreError } from "../kernel/index.ts"

/** One fixed window to charge: the counter `key` for the window that began at `start` (epoch ms) and lasts `millis`. */
export interface QuotaWindow {
  readonly key: string
  readonly start: number
  readonly millis: number
  /** The most this window may hold; `Infinity` for no limit. */
  readonly limit: number
  /** What this window is charged; defaults to the charge's `cost` (e.g. a rate window charged 1 per request). */
  readonly cost?: number
}

/** A window's count after a charge (or a refused charge). */
export interface QuotaWindowUsage {
  readonly key: string
  readonly used: number
  readonly limit: number
  /** Epoch ms at which the window ends and its count starts again from zero. */
  readonly resetAt: number
}

/** The outcome of a charge: granted in every window, or refused in all of them. */
export interface QuotaCharge {
  readonly granted: boolean
  /** One entry per requested window, in request order, with the counts after the outcome. */
  readonly windows: ReadonlyArray<QuotaWindowUsage>
}

/**
 * Atomic "add cost to these windows if all stay within their limits".
 *
 * Adapters hold no policy: the caller (core) computes window starts from its clock and decides the limits.
 * A charge either adds `cost` to every window or to none, so a refused request is never counted.
 */
export class QuotaStore extends Context.Service<
  QuotaStore,
  {
    /** Adds each window's cost (default `cost`) to it when each would stay within its limit; otherwise changes nothing. */
    readonly charge: (
      cost: number,
      windows: ReadonlyArray<QuotaWindow>
    ) => Effect.Effect<QuotaCharge, StoreError.StoreError>
    /** The current counts of these windows, without charging. */
    readonly usage: (
      windows: ReadonlyArray<QuotaWindow>
    ) => Effect.Effect<ReadonlyArray<QuotaWindowUsage>, StoreError.StoreError>
    /** Forgets every window that ended at or before `before` (epoch ms); returns how many were removed. */
    readonly prune: (before: number) => Effect.Effect<number, StoreError.StoreError>
  }
>()("@vigil/core/QuotaStore") {}

/** Decides a charge from the windows' current counts: the rule every adapter applies inside its atomic step. */
export const decide = (
  cost: number,
  windows: ReadonlyArray<QuotaWindow>,
  current: ReadonlyArray<number>
): QuotaCharge => {
  const granted = windows.every((w, i) => (current[i] ?? 0) + (w.cost ?? cost) <= w.limit)
  return {
    granted,
    windows: windows.map((w, i) => ({
      key: w.key,
      used: (current[i] ?? 0) + (granted ? (w.cost ?? cost) : 0),
      limit: w.limit,
      resetAt: w.start + w.millis
    }))
  }
}
