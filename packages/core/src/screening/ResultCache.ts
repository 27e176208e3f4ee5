/**
 * A bounded in-process cache of screening results with per-entry lifetimes. Every read compares the
 * IntelIndex generation with the one the entries were computed at and empties the cache when a commit
 * (from this process or another) changed the lists, so a listing or de-listing is never hidden by it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { BoundedMemo } from "../kernel/index.ts"
import { IntelIndex } from "./IntelIndex.ts"

/** Counters since the cache was built. */
export interface Stats {
  readonly hits: number
  readonly misses: number
  readonly size: number
  /** How many times a change of the lists emptied the cache. */
  readonly invalidations: number
}

/** A value from the cache or freshly computed. */
export interface Cached<A> {
  readonly value: A
  readonly hit: boolean
  /** Epoch ms the value was computed. */
  readonly storedAt: number
}

/** How long to keep a computed value; 0 or less keeps it not at all. */
export type Lifetime<A> = (value: A) => number

/** Caches screening results by key. */
export class ResultCache extends Context.Service<
  ResultCache,
  {
    /** The cached value for `key`, or `compute`'s, stored for `lifetime(value)` ms. */
    readonly through: <A, E, R>(
      key: string,
      compute: Effect.Effect<A, E, R>,
      lifetime: Lifetime<A>
    ) => Effect.Effect<Cached<A>, E, R>
    readonly stats: Effect.Effect<Stats>
  }
>()("@vigil/core/ResultCache") {
  /** A cache holding at most `maxEntries` values (oldest evicted first). */
  static readonly layer = (maxEntries = 50_000): Layer.Layer<ResultCache, never, IntelIndex> =>
    Layer.effect(ResultCache)(
      Effect.gen(function* () {
        const index = yield* IntelIndex
        const entries = BoundedMemo.make<
          string,
          { readonly value: unknown; readonly storedAt: number; readonly until: number }
        >(maxEntries)
        let generation: number | undefined
        let hits = 0
        let misses = 0
        let invalidations = 0

        /** Whether entries may be served: the lists are as they were, or nothing is known (then nothing is served). */
        const fresh = index.generation.pipe(
          Effect.map((current) => {
            if (current !== generation) {
              if (entries.size() > 0) invalidations++
              entries.clear()
              generation = current
            }
            return true
          }),
          Effect.orElseSucceed(() => {
            entries.clear()
            generation = undefined
            return false
          })
        )

        // A pipeline rather than a generator: it runs on every request.
        const through = <A, E, R>(
          key: string,
          compute: Effect.Effect<A, E, R>,
          lifetime: Lifetime<A>
        ): Effect.Effect<Cached<A>, E, R> =>
          Effect.flatMap(fresh, (usable) =>
            Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Cached<A>, E, R> => {
              const entry = usable ? entries.get(key) : undefined
              if (entry !== undefined && entry.until > now) {
                hits++
                return Effect.succeed({ value: entry.value as A, hit: true, storedAt: entry.storedAt })
              }
              if (entry !== undefined) entries.delete(key)
              misses++
              return Effect.map(compute, (value) => {
                const keep = lifetime(value)
                if (usable && keep > 0) entries.set(key, { value, storedAt: now, until: now + keep })
                return { value, hit: false, storedAt: now }
              })
            })
          )

        return ResultCache.of({
          through,
          stats: Effect.sync(() => ({ hits, misses, size: entries.size(), invalidations }))
        })
      })
    )
}
