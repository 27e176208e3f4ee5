/**
 * Holding a chain's lease while following it: a chain with an active bot is followed by the instance that holds
 * its lease, and stands by elsewhere (saying who holds it). The lease is renewed every third of its time to live
 * on a fiber of its own (a long step never lets it run out), and when it is lost — taken by another instance after
 * this one stalled past it, or not renewed for a whole time to live because the store failed — holding ends, and
 * with it the following (the cursor's compare-and-set keeps the two followers of that moment apart).
 */
import { Clock, Effect, Fiber } from "effect"
import type { BotStore } from "../bots/BotStore.ts"
import type * as FollowLeases from "./FollowLeases.ts"
import * as ChainStates from "./ChainStates.ts"
import type { Settings } from "./Settings.ts"

/** What holding chains works with. */
export interface Holder {
  readonly settings: Settings
  readonly bots: BotStore["Service"]
  readonly leases: FollowLeases.FollowLeases["Service"]
  readonly instance: string
  readonly chains: ChainStates.Chains
}

/** How long a lease lives: three polls, and never under three seconds (a renewal every poll, or every second). */
const ttlOf = (settings: Settings): number => settings.leaseMillis ?? Math.max(3 * settings.pollMillis, 3_000)

/** Renews `instance`'s lease of the chain until it is lost; then ends, saying why. */
const keep = (
  leases: FollowLeases.FollowLeases["Service"],
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

/** A follower per chain with an active bot, started and stopped as bots change. */
export const supervise = (
  deps: Holder,
  running: Map<number, Fiber.Fiber<void>>,
  follow: (chainId: number) => Effect.Effect<unknown>
) =>
  Effect.gen(function* () {
    const { chains: states } = deps
    const active = yield* deps.bots.active()
    const chains = new Set(active.map((b) => b.chainId))
    const ttl = ttlOf(deps.settings)
    /** Every chain's lease, read once a round and only when a chain is in standby. */
    let held: ReadonlyArray<FollowLeases.Lease> | undefined
    for (const chainId of chains) {
      if (running.has(chainId)) continue
      const lease = yield* deps.leases.hold(chainId, deps.instance, ttl)
      const was = states.get(chainId)
      if (lease === undefined) {
        // Another instance follows the chain: say who, and until when unless it renews.
        held ??= yield* deps.leases.leases()
        const holder = held.find((l) => l.chainId === chainId)
        states.record(
          chainId,
          ChainStates.Event.Standby({
            bots: active.filter((b) => b.chainId === chainId).length,
            ...(holder === undefined ? {} : { holder: holder.holder, holderUntil: holder.expiresAt })
          })
        )
        continue
      }
      states.record(chainId, ChainStates.Event.Held({ holder: deps.instance }))
      if (was?.state === "standby")
        yield* Effect.logInfo(`chain ${chainId}: taking over from ${was.holder ?? "a stopped instance"}`)
      running.set(chainId, yield* Effect.forkScoped(hold(deps, chainId, running, ttl, follow)))
    }
    for (const [chainId, fiber] of running) {
      if (chains.has(chainId)) continue
      yield* Fiber.interrupt(fiber)
      running.delete(chainId)
    }
    states.keepOnly(chains)
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning("following: cannot read the active bots or the chains' leases", cause)
    )
  )

/**
 * Follows the chain for as long as this instance holds its lease (renewed meanwhile); when the lease is lost the
 * chain is left to the instance that took it, and a stop releases it so another takes it over at once.
 */
const hold = (
  deps: Holder,
  chainId: number,
  running: Map<number, Fiber.Fiber<void>>,
  ttl: number,
  follow: (chainId: number) => Effect.Effect<unknown>
) =>
  Effect.raceFirst(
    follow(chainId) as Effect.Effect<never>,
    Effect.flatMap(keep(deps.leases, chainId, deps.instance, ttl), (why) =>
      Effect.logWarning(`chain ${chainId}: no longer followed here: ${why}`)
    )
  ).pipe(
    Effect.ensuring(
      Effect.andThen(
        Effect.sync(() => running.delete(chainId)),
        Effect.ignore(deps.leases.release(chainId, deps.instance))
      )
    )
  )
