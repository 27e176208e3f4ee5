/** The behaviour every QuotaStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { QuotaStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

const minute = (key: string, start = 0, limit = Number.POSITIVE_INFINITY): QuotaStore.QuotaWindow => ({
  key,
  start,
  millis: 60_000,
  limit
})

/** Registers the QuotaStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<QuotaStore.QuotaStore, unknown>) =>
  describe(`QuotaStore contract: ${name}`, () => {
    const test = (title: string, body: (store: QuotaStore.QuotaStore["Service"]) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body(yield* QuotaStore.QuotaStore)
        }).pipe(Effect.provide(layer))
      )

    test("accumulates charges within one window and reports when it resets", (store) =>
      Effect.gen(function* () {
        yield* store.charge(2, [minute("k")])
        const second = yield* store.charge(3, [minute("k", 0, 10)])
        assert.deepStrictEqual(second, { granted: true, windows: [{ key: "k", used: 5, limit: 10, resetAt: 60_000 }] })
      }))

    test("starts a later window of the same key from zero", (store) =>
      Effect.gen(function* () {
        yield* store.charge(4, [minute("k", 0)])
        const next = yield* store.charge(1, [minute("k", 60_000)])
        assert.strictEqual(next.windows[0]?.used, 1)
        assert.strictEqual(next.windows[0]?.resetAt, 120_000)
      }))

    test("keeps keys apart", (store) =>
      Effect.gen(function* () {
        yield* store.charge(7, [minute("a")])
        const b = yield* store.charge(1, [minute("b")])
        assert.strictEqual(b.windows[0]?.used, 1)
        const [a] = yield* store.usage([minute("a")])
        assert.strictEqual(a?.used, 7)
      }))

    test("refuses a charge that would pass any window's limit and counts it nowhere", (store) =>
      Effect.gen(function* () {
        const second = { key: "k:s", start: 0, millis: 1_000, limit: 100 }
        const day = { key: "k:d", start: 0, millis: 86_400_000, limit: 5 }
        yield* store.charge(4, [second, day])
        const refused = yield* store.charge(2, [second, day])
        assert.isFalse(refused.granted)
        assert.deepStrictEqual(
          refused.windows.map((w) => w.used),
          [4, 4]
        )
        const usage = yield* store.usage([second, day])
        assert.deepStrictEqual(
          usage.map((w) => w.used),
          [4, 4]
        )
        const exact = yield* store.charge(1, [second, day])
        assert.isTrue(exact.granted)
        assert.strictEqual(exact.windows[1]?.used, 5)
      }))

    test("grants a multi-unit charge only when all of it fits", (store) =>
      Effect.gen(function* () {
        const window = minute("batch", 0, 25)
        assert.isTrue((yield* store.charge(20, [window])).granted)
        assert.isFalse((yield* store.charge(6, [window])).granted)
        assert.isTrue((yield* store.charge(5, [window])).granted)
        assert.strictEqual((yield* store.usage([window]))[0]?.used, 25)
      }))

    test("grants exactly the limit under 50 concurrent charges", (store) =>
      Effect.gen(function* () {
        const window = minute("race", 0, 30)
        const outcomes = yield* Effect.all(
          Array.from({ length: 50 }, () => store.charge(1, [window])),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter((o) => o.granted).length, 30)
        assert.strictEqual((yield* store.usage([window]))[0]?.used, 30)
      }))

    test("reads zero for a window never charged, without creating it", (store) =>
      Effect.gen(function* () {
        const [fresh] = yield* store.usage([minute("none", 0, 3)])
        assert.deepStrictEqual(fresh, { key: "none", used: 0, limit: 3, resetAt: 60_000 })
        assert.strictEqual(yield* store.prune(Number.MAX_SAFE_INTEGER), 0)
      }))

    test("prunes windows that have ended and keeps the rest", (store) =>
      Effect.gen(function* () {
        yield* store.charge(1, [minute("old", 0)])
        yield* store.charge(2, [minute("now", 60_000)])
        assert.strictEqual(yield* store.prune(60_000), 1)
        const [old, now] = yield* store.usage([minute("old", 0), minute("now", 60_000)])
        assert.strictEqual(old?.used, 0)
        assert.strictEqual(now?.used, 2)
      }))
  })
