/**
 * Quota policy for API keys over the QuotaStore port: a per-second request rate plus daily and monthly
 * address volumes (UTC day and calendar month), charged in one atomic step so a refusal is never counted.
 */
import { Clock, Context, DateTime, Effect, Layer, Schema } from "effect"
import type { ApiKeyRecord } from "./ApiKeyStore.ts"
import { type QuotaWindow, type QuotaWindowUsage, QuotaStore } from "./QuotaStore.ts"
import type { StoreError } from "../kernel/index.ts"

/** Which limit a window enforces. */
export type Scope = "qps" | "daily" | "monthly"

/** The windows a charge of `cost` addresses at `now` touches: one request in the second, `cost` in the day and month. */
export const windows = (key: ApiKeyRecord, now: number, cost: number): ReadonlyArray<QuotaWindow> => {
  const second = Math.floor(now / 1000) * 1000
  const { day, month, nextMonth } = calendarOf(now)
  return [
    { key: `${key.id}:qps`, start: second, millis: 1000, limit: key.qps, cost: cost === 0 ? 0 : 1 },
    { key: `${key.id}:daily`, start: day, millis: 86_400_000, limit: key.daily, cost },
    { key: `${key.id}:monthly`, start: month, millis: nextMonth - month, limit: key.monthly, cost }
  ]
}

/** The UTC day and month around an instant; the last answer is kept until its day ends (this runs per request). */
const calendarOf = (() => {
  let last = { day: 0, month: 0, nextMonth: 0 }
  return (now: number) => {
    if (now < last.day || now >= last.day + 86_400_000) {
      const instant = DateTime.makeUnsafe(now)
      const month = DateTime.startOf(instant, "month")
      last = {
        day: DateTime.toEpochMillis(DateTime.startOf(instant, "day")),
        month: DateTime.toEpochMillis(month),
        nextMonth: DateTime.toEpochMillis(DateTime.add(month, { months: 1 }))
      }
    }
    return last
  }
})()

const scopes: ReadonlyArray<Scope> = ["qps", "daily", "monthly"]

/** What the rate-limit headers report: one window's limit, what is left of it and the seconds until it resets. */
export interface Window {
  readonly scope: Scope
  readonly limit: number
  readonly remaining: number
  readonly resetSeconds: number
}

/** The outcome of charging a request. */
export interface Decision {
  readonly granted: boolean
  /** Granted: the tighter of the daily and monthly windows. Refused: the window that refused. */
  readonly window: Window
  /** Refused only: seconds until a retry can succeed (at least 1). */
  readonly retryAfterSeconds?: number
  /** Refused only: the request alone is larger than the refusing window's whole limit, so no retry can succeed. */
  readonly exceedsLimit?: boolean
}

/** Current usage of a key (spec §2.6 `usage`). */
export const Usage = Schema.Struct({
  dailyUsed: Schema.Int,
  monthlyUsed: Schema.Int,
  recentRequests: Schema.Int,
  dailyRemaining: Schema.Int,
  monthlyRemaining: Schema.Int
})
export type Usage = typeof Usage.Type

const describe = (scope: Scope, usage: QuotaWindowUsage, now: number): Window => ({
  scope,
  limit: usage.limit,
  remaining: Math.max(0, usage.limit - usage.used),
  resetSeconds: Math.max(1, Math.ceil((usage.resetAt - now) / 1000))
})

/** Charges and reports API-key quotas. */
export class Quota extends Context.Service<
  Quota,
  {
    /** Charges one request of `cost` addresses to the key; all windows or none. */
    readonly charge: (key: ApiKeyRecord, cost: number) => Effect.Effect<Decision, StoreError.StoreError>
    /**
     * Charges one request to the key's per-second rate only (no address volume): what a route that screens no
     * address (monitoring's `/v1`) costs.
     */
    readonly admit: (key: ApiKeyRecord) => Effect.Effect<Decision, StoreError.StoreError>
    /** The key's usage now, without charging. */
    readonly usage: (key: ApiKeyRecord) => Effect.Effect<Usage, StoreError.StoreError>
  }
>()("@vigil/core/Quota") {
  static readonly layer: Layer.Layer<Quota, never, QuotaStore> = Layer.effect(Quota)(
    Effect.gen(function* () {
      const store = yield* QuotaStore
      /** Charges `ws` (the windows of `cost` at `now`) in one step, and decides. */
      const decide = (ws: ReadonlyArray<QuotaWindow>, cost: number, now: number) =>
        Effect.map(store.charge(cost, ws), (outcome): Decision => {
          const described = outcome.windows.map((u, i) => describe(scopes[i]!, u, now))
          if (outcome.granted) {
            const [, daily, monthly] = described
            return { granted: true, window: daily!.remaining <= monthly!.remaining ? daily! : monthly! }
          }
          const index = ws.findIndex((w, i) => outcome.windows[i]!.used + (w.cost ?? cost) > w.limit)
          const refusing = described[index] ?? described[0]!
          return {
            granted: false,
            window: refusing,
            retryAfterSeconds: refusing.resetSeconds,
            ...((ws[index]?.cost ?? cost) > refusing.limit ? { exceedsLimit: true } : {})
          }
        })
      return Quota.of({
        // A pipeline rather than a generator: it runs on every request.
        charge: (key: ApiKeyRecord, cost: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => decide(windows(key, now, cost), cost, now)),
        admit: (key: ApiKeyRecord) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const [second, daily, monthly] = windows(key, now, 0)
            return decide([{ ...second!, cost: 1 }, daily!, monthly!], 0, now)
          }),
        usage: Effect.fnUntraced(function* (key: ApiKeyRecord) {
          const now = yield* Clock.currentTimeMillis
          const [second, daily, monthly] = yield* store.usage(windows(key, now, 0))
          return {
            dailyUsed: daily!.used,
            monthlyUsed: monthly!.used,
            recentRequests: second!.used,
            dailyRemaining: Math.max(0, daily!.limit - daily!.used),
            monthlyRemaining: Math.max(0, monthly!.limit - monthly!.used)
          }
        })
      })
    })
  )
}

/** Drops ended windows every minute while the layer lives, so the store stays small (they are never read again). */
export const pruning: Layer.Layer<never, never, QuotaStore> = Layer.effectDiscard(
  Effect.gen(function* () {
    const store = yield* QuotaStore
    yield* Effect.forkScoped(
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => store.prune(now)),
        Effect.ignore,
        Effect.andThen(Effect.sleep("1 minute")),
        Effect.forever
      )
    )
  })
)
