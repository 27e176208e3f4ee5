/** The behaviour every BlockStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import type { ChainFacts } from "@vigil/core"
import { BlockStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

const data = (number: number, hash: string, traced: boolean): ChainFacts.BlockData => ({
  block: {
    number: `0x${number.toString(16)}`,
    hash,
    timestamp: "0x0",
    transactions: [
      {
        hash: `0x${"ab".repeat(32)}`,
        from: `0x${"1".repeat(40)}`,
        to: null,
        value: "0x0",
        nonce: "0x0",
        input: "0x",
        gas: "0x5208",
        transactionIndex: "0x0"
      }
    ]
  },
  receipts: [{ transactionHash: `0x${"ab".repeat(32)}`, status: "0x1", gasUsed: "0x5208", logs: [] }],
  ...(traced ? { traces: [{ type: "CALL", from: `0x${"1".repeat(40)}`, calls: [], logs: [] }] } : {})
})

const block = (number: number, hash = `0x${number}`, traced = false, chainId = 1): BlockStore.StoredBlock => ({
  chainId,
  number,
  hash,
  traces: traced,
  data: data(number, hash, traced)
})

/** Registers the BlockStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<BlockStore.BlockStore, unknown>) =>
  describe(`BlockStore contract: ${name}`, () => {
    const test = (title: string, body: (store: BlockStore.BlockStore["Service"]) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body(yield* BlockStore.BlockStore)
        }).pipe(Effect.provide(layer))
      )

    test("keeps blocks whole by chain and number, and gives back those it has, ascending", (store) =>
      Effect.gen(function* () {
        yield* store.put([block(7, "0x7", true), block(3), block(3, "0x3", false, 10)])
        assert.deepStrictEqual(yield* store.get(1, [9, 7, 3, 7]), [block(3), block(7, "0x7", true)])
        assert.deepStrictEqual(yield* store.get(10, [3]), [block(3, "0x3", false, 10)])
        assert.deepStrictEqual(yield* store.get(5, [3]), [])
      }))

    test("replaces a block on another hash or with the traces it lacked, and keeps it otherwise", (store) =>
      Effect.gen(function* () {
        yield* store.put([block(1, "0xa", true), block(2, "0xb")])
        yield* store.put([block(1, "0xa", false)])
        assert.deepStrictEqual(yield* store.get(1, [1]), [block(1, "0xa", true)], "not replaced by less")
        yield* store.put([block(2, "0xb", true)])
        assert.deepStrictEqual(yield* store.get(1, [2]), [block(2, "0xb", true)], "traces added")
        yield* store.put([block(1, "0xc")])
        assert.deepStrictEqual(yield* store.get(1, [1]), [block(1, "0xc")], "a reorganisation replaces it")
      }))

    test("records each bot's blocks once, ascending, and forgets them per bot", (store) =>
      Effect.gen(function* () {
        yield* store.submit("bot-a", [5, 3, 5])
        yield* store.submit("bot-a", [4, 3])
        yield* store.submit("bot-b", [9])
        assert.deepStrictEqual(yield* store.submitted("bot-a"), [3, 4, 5])
        yield* store.forget("bot-a")
        assert.deepStrictEqual(yield* store.submitted("bot-a"), [])
        assert.deepStrictEqual(yield* store.submitted("bot-b"), [9])
      }))
  })
