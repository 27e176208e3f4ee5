/**
 * The behaviour every FollowLeases adapter must show. Two holders share one store, as two instances share one
 * database; a lease given no time to live has run out for the next caller whatever the store's clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { FollowLeases } from "@vigil/core"
import { Effect, type Layer } from "effect"

const minute = 60_000

/** Registers the FollowLeases contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<FollowLeases.FollowLeases, unknown>) =>
  describe(`FollowLeases contract: ${name}`, () => {
    it.effect("one holder per chain: taken, renewed, refused to another, released, taken over with a new term", () =>
      Effect.gen(function* () {
        const leases = yield* FollowLeases.FollowLeases
        const first = yield* leases.hold(1, "a", minute)
        assert.deepStrictEqual(first && { chainId: first.chainId, holder: first.holder, term: first.term }, {
          chainId: 1,
          holder: "a",
          term: 1
        })
        assert.isUndefined(yield* leases.hold(1, "b", minute), "held by a")
        const renewed = yield* leases.hold(1, "a", minute)
        assert.strictEqual(renewed?.term, 1, "renewing keeps the term")
        assert.isTrue(Date.parse(renewed!.expiresAt) >= Date.parse(first!.expiresAt))
        yield* leases.release(1, "b")
        assert.isUndefined(yield* leases.hold(1, "b", minute), "only the holder releases")
        yield* leases.release(1, "a")
        const taken = yield* leases.hold(1, "b", minute)
        assert.deepStrictEqual(taken && [taken.holder, taken.term], ["b", 2])
        assert.isUndefined(yield* leases.hold(1, "a", minute), "now held by b")
        // Chains are leased apart.
        assert.strictEqual((yield* leases.hold(2, "a", minute))?.term, 1)
      }).pipe(Effect.provide(layer))
    )

    it.effect("a lease that ran out is taken by the next holder; the list shows every chain's", () =>
      Effect.gen(function* () {
        const leases = yield* FollowLeases.FollowLeases
        yield* leases.hold(7, "a", minute)
        yield* leases.hold(7, "a", 0)
        const taken = yield* leases.hold(7, "b", minute)
        assert.deepStrictEqual(taken && [taken.holder, taken.term], ["b", 2])
        yield* leases.hold(3, "a", minute)
        const all = yield* leases.leases()
        assert.deepStrictEqual(
          all.map((l) => [l.chainId, l.holder, l.term]),
          [
            [3, "a", 1],
            [7, "b", 2]
          ]
        )
        assert.match(all[0]!.expiresAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      }).pipe(Effect.provide(layer))
    )
  })
