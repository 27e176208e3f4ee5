/** The activity probe's policy under a TestClock: the budget, narrowing by network, and what is kept per day. */
import { assert, describe, it } from "@effect/vitest"
import { ChainActivity } from "@vigil/core"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

const ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

/** A reader over scripted accounts: chain 1 answers, chain 137 never does, chain 31337 fails; reads are counted. */
const scripted = () => {
  const reads: Array<number> = []
  const layer = Layer.succeed(ChainActivity.AccountReader)({
    chains: [1, 137, 31337],
    read: (chainId) => {
      reads.push(chainId)
      if (chainId === 1) return Effect.succeed({ nonce: 0n, balance: 5n, code: "0x" })
      if (chainId === 137) return Effect.never
      return Effect.fail(new ChainActivity.AccountReadError({ message: "the node answered HTTP 502" }))
    }
  })
  return {
    reads,
    layer: ChainActivity.ChainActivity.layer({ budgetMillis: 300, memo: 100 }).pipe(Layer.provide(layer))
  }
}

describe("ChainActivity", () => {
  it("counts a nonce, a balance or code as activity, and nothing else", () => {
    assert.isFalse(ChainActivity.isActive({ nonce: 0n, balance: 0n, code: "0x" }))
    assert.isTrue(ChainActivity.isActive({ nonce: 1n, balance: 0n, code: "0x" }))
    assert.isTrue(ChainActivity.isActive({ nonce: 0n, balance: 1n, code: "0x" }))
    assert.isTrue(ChainActivity.isActive({ nonce: 0n, balance: 0n, code: "0x6080" }))
    assert.deepStrictEqual(
      [ChainActivity.networkName(137), ChainActivity.networkName(31337)],
      ["polygon", "chain-31337"]
    )
  })

  it.effect("answers within the budget, naming what was not checked and why; keeps readings for the day", () => {
    const { reads, layer } = scripted()
    return Effect.gen(function* () {
      const activity = yield* ChainActivity.ChainActivity
      const pending = yield* Effect.forkChild(activity.of(ADDRESS))
      yield* TestClock.adjust(299)
      assert.isUndefined(pending.pollUnsafe(), "still waiting for polygon's node within the budget")
      yield* TestClock.adjust(1)
      const found = yield* Fiber.join(pending)
      assert.deepStrictEqual(found, {
        active: ["ethereum"],
        checked: ["ethereum"],
        unchecked: [
          { network: "polygon", reason: "no answer within 300 ms" },
          { network: "chain-31337", reason: "the node answered HTTP 502" }
        ]
      })
      assert.deepStrictEqual(reads, [1, 137, 31337])
      // Narrowed to ethereum: kept from the first reading, so no node is asked.
      assert.deepStrictEqual(yield* activity.of(ADDRESS, "ethereum"), {
        active: ["ethereum"],
        checked: ["ethereum"],
        unchecked: []
      })
      assert.deepStrictEqual(reads, [1, 137, 31337])
      // A network without a node, and an address of another family, are not checked, and said so.
      assert.deepStrictEqual(yield* activity.of(ADDRESS, "base"), {
        active: [],
        checked: [],
        unchecked: [{ network: "base", reason: "no node is configured for it" }]
      })
      assert.deepStrictEqual(yield* activity.of("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"), {
        active: [],
        checked: [],
        unchecked: [{ network: "bitcoin", reason: "activity is read for EVM addresses only" }]
      })
      // The next day it is read again.
      yield* TestClock.adjust(86_400_000)
      yield* activity.of(ADDRESS, "ethereum")
      assert.deepStrictEqual(reads, [1, 137, 31337, 1])
    }).pipe(Effect.provide(layer))
  })
})
