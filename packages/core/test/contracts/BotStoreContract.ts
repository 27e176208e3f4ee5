/** The behaviour every BotStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { BotStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

const bot = (id: string, overrides: Partial<BotStore.Bot> = {}): BotStore.Bot => ({
  id,
  keyId: "key-a",
  chainId: 1,
  botName: `bot ${id}`,
  active: true,
  severity: "High",
  watchRule: { watchRuleType: "advanced", expressions: ["system.emitted(tx1.USDC.E.Transfer)"] },
  notifications: [],
  options: { topLevelTxBlockRange: 100 },
  revision: 1,
  created: `2026-01-01T00:00:0${id.length % 10}.000Z`,
  updated: `2026-01-01T00:00:0${id.length % 10}.000Z`,
  ...overrides
})

/** Registers the BotStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<BotStore.BotStore, unknown>) =>
  describe(`BotStore contract: ${name}`, () => {
    const test = (title: string, body: (store: BotStore.BotStore["Service"]) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body(yield* BotStore.BotStore)
        }).pipe(Effect.provide(layer))
      )

    test("stores no bot beyond the key's cap, deciding it as it stores, also under concurrent adds", (store) =>
      Effect.gen(function* () {
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 7 }, (_, i) => bot(`b${i}`)),
          (b) => store.add(b, 4),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((o) => o).length, 4)
        assert.strictEqual((yield* store.list("key-a")).length, 4)
        assert.isTrue(yield* store.add(bot("other", { keyId: "key-b" }), 4), "another key's own cap")
      }))

    test("keeps a bot exactly, literal definitions as their text", (store) =>
      Effect.gen(function* () {
        const full = bot("1", {
          botDescription: "large transfers",
          botVersion: "v2",
          notifications: ["nt_1_a", "nt_2_b"],
          severity: "Critical",
          options: {
            topLevelTxBlockRange: 5,
            literalDefs: '{"max": 1e+27, "exact": 123456789012345678901234567890}',
            ruleScope: { contractName: "Pool", groupId: "allow", member: false },
            notifyMinIntervalSeconds: 300,
            alertThreshold: { count: 3, windowSeconds: 3600 }
          }
        })
        yield* store.add(full)
        assert.deepStrictEqual(yield* store.get("key-a", "1"), full)
      }))

    test("lists a key's bots oldest first, on one chain when asked; another key sees none", (store) =>
      Effect.gen(function* () {
        yield* store.add(bot("33", { created: "2026-01-03T00:00:00.000Z" }))
        yield* store.add(bot("1", { created: "2026-01-01T00:00:00.000Z" }))
        yield* store.add(bot("22", { created: "2026-01-02T00:00:00.000Z", chainId: 10 }))
        yield* store.add(bot("4", { keyId: "key-b" }))
        assert.deepStrictEqual(
          (yield* store.list("key-a")).map((b) => b.id),
          ["1", "22", "33"]
        )
        assert.deepStrictEqual(
          (yield* store.list("key-a", 10)).map((b) => b.id),
          ["22"]
        )
        assert.isUndefined(yield* store.get("key-b", "1"))
        assert.isFalse(yield* store.remove("key-b", "1"))
      }))

    test("lists every key's active bots, by chain then age", (store) =>
      Effect.gen(function* () {
        yield* store.add(bot("33", { created: "2026-01-03T00:00:00.000Z" }))
        yield* store.add(bot("1", { created: "2026-01-01T00:00:00.000Z", chainId: 10 }))
        yield* store.add(bot("22", { created: "2026-01-02T00:00:00.000Z", active: false }))
        yield* store.add(bot("4", { keyId: "key-b", created: "2026-01-01T00:00:00.000Z" }))
        assert.deepStrictEqual(
          (yield* store.active()).map((b) => b.id),
          ["4", "33", "1"]
        )
        const paused = { ...(yield* store.get("key-a", "33"))!, active: false, revision: 2 }
        assert.isTrue(yield* store.update(paused))
        assert.deepStrictEqual(
          (yield* store.active()).map((b) => b.id),
          ["4", "1"]
        )
      }))

    test("updates only from the revision it replaces, and only the key's own bot", (store) =>
      Effect.gen(function* () {
        yield* store.add(bot("1"))
        const second = bot("1", { botName: "renamed", revision: 2, updated: "2026-01-02T00:00:00.000Z" })
        assert.isTrue(yield* store.update(second))
        assert.isFalse(yield* store.update(bot("1", { botName: "stale", revision: 2 })), "revision 1 is gone")
        assert.isFalse(yield* store.update(bot("1", { keyId: "key-b", revision: 3 })), "another key's")
        assert.isFalse(yield* store.update(bot("9", { revision: 2 })), "no such bot")
        assert.deepStrictEqual(yield* store.get("key-a", "1"), second)
      }))

    test("removes a bot", (store) =>
      Effect.gen(function* () {
        yield* store.add(bot("1"))
        assert.isTrue(yield* store.remove("key-a", "1"))
        assert.isFalse(yield* store.remove("key-a", "1"))
        assert.isUndefined(yield* store.get("key-a", "1"))
        assert.deepStrictEqual(yield* store.list("key-a"), [])
      }))
  })
