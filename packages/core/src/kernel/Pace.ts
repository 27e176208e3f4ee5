/**
 * Sharing the process's one thread: long synchronous work (a rule's evaluation over many blocks) is done in slices,
 * and the fiber doing it yields to the event loop once it has held it for 10 ms, so requests, health checks and
 * other chains are answered meanwhile.
 */
import { Clock, Effect } from "effect"

/** How long a fiber may hold the thread before it yields. */
export const heldMillis = 10

/** Since when a fiber has held the thread. */
export interface Pace {
  since: number
}

/** A pace starting now. */
export const make: Effect.Effect<Pace> = Effect.map(Clock.currentTimeMillis, (since) => ({ since }))

/** Yields to the event loop when the fiber has held the thread for {@link heldMillis} or more. */
export const breathe = (pace: Pace): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (now - pace.since < heldMillis) return Effect.void
    return Effect.flatMap(Effect.yieldNow, () =>
      Effect.map(Clock.currentTimeMillis, (after) => {
        pace.since = after
      })
    )
  })

/**
 * Runs `work` a slice at a time until it says it is done (each call does up to `slice` units of it), breathing
 * between slices.
 */
export const slices = (work: (slice: number) => boolean, pace: Pace, slice = 10_000): Effect.Effect<void> =>
  Effect.gen(function* () {
    while (!work(slice)) yield* breathe(pace)
  })
