/**
 * Holding a chain's lease while following it: the lease is renewed every third of its time to live on a fiber of
 * its own (a long step never lets it run out), and when it is lost — taken by another instance after this one
 * stalled past it, or not renewed for a whole time to live because the store failed — holding ends, and with it
 * the following (the cursor's compare-and-set keeps the two followers of that moment apart).
 */
import { Clock, Effect } from "effect"
import type { FollowLeases } from "./FollowLeases.ts"
import type { Settings } from "./Settings.ts"

/** How long a lease lives: three polls, and never under three seconds (a renewal every poll, or every second). */
export const ttlOf = (settings: Settings): number => settings.leaseMillis ?? Math.max(3 * settings.pollMillis, 3_000)

/** Renews `instance`'s lease of the chain until it is lost; then ends, saying why. */
export const keep = (
  leases: FollowLeases["Service"],
  chainId: number,
  instance: string,
  ttlMillis: number
): Effect.Effect<string> =>
  Effect.gen(function* () {
    let renewed = yield* Clock.currentTimeMillis
    while (true) {
      yield* Effect.sleep(Math.max(1, Math.floor(ttlMillis / 3)))
      const outcome = yield* Effect.result(leases.hold(chainId, instance, ttlMillis))
      const now = yield* Clock.currentTimeMillis
      if (outcome._tag === "Success") {
        if (outcome.success === undefined) return "another instance took the chain over"
        renewed = now
        continue
      }
      if (now - renewed >= ttlMillis)
        return `the lease could not be renewed for ${ttlMillis} ms: ${outcome.failure.message}`
      yield* Effect.logWarning(`chain ${chainId}: renewing the lease failed, retrying: ${outcome.failure.message}`)
    }
  })
