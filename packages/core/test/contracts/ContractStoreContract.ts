/** The behaviour every ContractStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { Abi, ContractStore } from "@vigil/core"
import { Effect, type Layer, Schema } from "effect"

/** An ABI with what a store must keep exactly: tuples with components, indexed flags, unnamed parameters. */
const abi = Schema.decodeUnknownSync(Abi.Abi)([
  {
    type: "event",
    name: "Swap",
    inputs: [
      { name: "sender", type: "address", indexed: true },
      {
        name: "legs",
        type: "tuple[]",
        components: [
          { name: "token", type: "address" },
          { name: "amount", type: "uint256" }
        ]
      }
    ],
    anonymous: false
  },
  {
    type: "function",
    name: "quote",
    inputs: [{ name: "", type: "uint256" }],
    outputs: [{ name: "", type: "int128" }],
    stateMutability: "view"
  },
  { type: "receive", stateMutability: "payable" }
])

const contract = (id: string, overrides: Partial<ContractStore.Contract> = {}): ContractStore.Contract => ({
  id,
  keyId: "key-a",
  chainId: 1,
  address: `0x${id.padStart(40, "0")}`,
  label: `L${id}`,
  abi,
  abiSource: "supplied",
  created: `2026-01-01T00:00:0${id.length % 10}.000Z`,
  ...overrides
})

/** Registers the ContractStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<ContractStore.ContractStore, unknown>) =>
  describe(`ContractStore contract: ${name}`, () => {
    const test = (
      title: string,
      body: (store: ContractStore.ContractStore["Service"]) => Effect.Effect<void, unknown>
    ) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body(yield* ContractStore.ContractStore)
        }).pipe(Effect.provide(layer))
      )

    test("keeps a contract exactly: its ABI, where the ABI came from, a proxy's implementation, a token's decimals", (store) =>
      Effect.gen(function* () {
        const proxied = contract("2", {
          abiSource: "sourcify",
          proxy: { standard: "EIP-1967", implementation: `0x${"9".repeat(40)}` }
        })
        const token = contract("3", { label: "Usdc", decimals: 6 })
        const whole = contract("4", { label: "Whole", decimals: 0 })
        for (const c of [contract("1"), proxied, token, whole]) assert.strictEqual(yield* store.add(c), "added")
        assert.deepStrictEqual(yield* store.get("key-a", "1"), contract("1"))
        assert.deepStrictEqual(yield* store.get("key-a", "2"), proxied)
        assert.deepStrictEqual(yield* store.get("key-a", "3"), token)
        assert.deepStrictEqual(yield* store.get("key-a", "4"), whole, "0 decimals is kept, not taken for none")
        assert.isUndefined((yield* store.get("key-a", "1"))?.decimals)
      }))

    test("a label names one contract per key and chain", (store) =>
      Effect.gen(function* () {
        assert.strictEqual(yield* store.add(contract("1", { label: "Pool" })), "added")
        assert.strictEqual(
          yield* store.add(contract("2", { label: "Pool" })),
          "label taken",
          "same key, chain and label"
        )
        assert.strictEqual(yield* store.add(contract("3", { label: "Pool", chainId: 10 })), "added", "another chain")
        assert.strictEqual(yield* store.add(contract("4", { label: "Pool", keyId: "key-b" })), "added", "another key")
        assert.isUndefined(yield* store.get("key-a", "2"), "the refused one was not stored")
      }))

    test("stores no contract beyond the key's cap, deciding it as it stores, also under concurrent adds", (store) =>
      Effect.gen(function* () {
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => contract(`c${i}`, { label: `L${i}` })),
          (c) => store.add(c, 5),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((o) => o === "added").length, 5)
        assert.strictEqual(outcomes.filter((o) => o === "limit reached").length, 3)
        assert.strictEqual((yield* store.list("key-a")).length, 5)
        assert.strictEqual(yield* store.add(contract("other", { keyId: "key-b" }), 5), "added", "another key's own cap")
      }))

    test("lists a key's contracts oldest first, on one chain when asked", (store) =>
      Effect.gen(function* () {
        yield* store.add(contract("33", { created: "2026-01-03T00:00:00.000Z" }))
        yield* store.add(contract("1", { created: "2026-01-01T00:00:00.000Z" }))
        yield* store.add(contract("22", { created: "2026-01-02T00:00:00.000Z", chainId: 10 }))
        yield* store.add(contract("4", { keyId: "key-b" }))
        assert.deepStrictEqual(
          (yield* store.list("key-a")).map((c) => c.id),
          ["1", "22", "33"]
        )
        assert.deepStrictEqual(
          (yield* store.list("key-a", 1)).map((c) => c.id),
          ["1", "33"]
        )
        assert.deepStrictEqual(yield* store.list("key-c"), [])
      }))

    test("another key's contract is not found, listed or removed", (store) =>
      Effect.gen(function* () {
        yield* store.add(contract("1"))
        assert.isUndefined(yield* store.get("key-b", "1"))
        assert.isFalse(yield* store.remove("key-b", "1"))
        assert.deepStrictEqual(yield* store.list("key-b"), [])
        assert.isDefined(yield* store.get("key-a", "1"))
      }))

    test("removes a contract, after which its label is free again", (store) =>
      Effect.gen(function* () {
        yield* store.add(contract("1", { label: "Pool" }))
        assert.isTrue(yield* store.remove("key-a", "1"))
        assert.isFalse(yield* store.remove("key-a", "1"), "already gone")
        assert.isUndefined(yield* store.get("key-a", "1"))
        assert.strictEqual(yield* store.add(contract("2", { label: "Pool" })), "added")
      }))
  })
