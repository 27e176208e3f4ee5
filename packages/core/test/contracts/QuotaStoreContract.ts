/** The behaviour every QuotaStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { type ApiKeyStore, Quota, QuotaStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { TestClock } from "effect/testing"

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

    test("charges each window its own cost when one is given", (store) =>
      Effect.gen(function* () {
        const rate = { key: "w:qps", start: 0, millis: 1_000, limit: 2, cost: 1 }
        const volume = { key: "w:day", start: 0, millis: 86_400_000, limit: 30 }
        const first = yield* store.charge(25, [rate, volume])
        assert.isTrue(first.granted)
        assert.deepStrictEqual(
          first.windows.map((w) => w.used),
          [1, 25]
        )
        assert.isFalse((yield* store.charge(6, [rate, volume])).granted)
        assert.isTrue((yield* store.charge(5, [rate, volume])).granted)
        const refusedByRate = yield* store.charge(0, [{ ...rate, cost: 1 }, volume])
        assert.isFalse(refusedByRate.granted)
        assert.deepStrictEqual(
          (yield* store.usage([rate, volume])).map((w) => w.used),
          [2, 30]
        )
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

    it("decides charges arriving together as if they came one by one, in arrival order", () =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              cost: fc.integer({ min: 0, max: 4 }),
              windows: fc.uniqueArray(
                fc.record({
                  key: fc.constantFrom("a", "b", "c"),
                  start: fc.constantFrom(0, 60_000),
                  limit: fc.integer({ min: 0, max: 8 }),
                  cost: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined })
                }),
                { minLength: 1, maxLength: 3, selector: (w) => `${w.key}@${w.start}` }
              )
            }),
            { minLength: 1, maxLength: 30 }
          ),
          async (charges) => {
            const requests = charges.map((c) => ({
              cost: c.cost,
              windows: c.windows.map(({ cost, ...w }) => ({
                ...w,
                millis: 60_000,
                ...(cost === undefined ? {} : { cost })
              }))
            }))
            const model = new Map<string, number>()
            const expected = requests.map(({ cost, windows }) => {
              const outcome = QuotaStore.decide(
                cost,
                windows,
                windows.map((w) => model.get(`${w.key}@${w.start}`) ?? 0)
              )
              for (const w of outcome.granted ? windows : []) {
                model.set(`${w.key}@${w.start}`, (model.get(`${w.key}@${w.start}`) ?? 0) + (w.cost ?? cost))
              }
              return outcome
            })
            const actual = await Effect.runPromise(
              Effect.gen(function* () {
                const store = yield* QuotaStore.QuotaStore
                return yield* Effect.all(
                  requests.map((r) => store.charge(r.cost, r.windows)),
                  { concurrency: "unbounded" }
                )
              }).pipe(Effect.provide(layer))
            )
            assert.deepStrictEqual(actual, expected)
          }
        ),
        { numRuns: 40 }
      ))

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

    const key = (id: string, limits: Partial<ApiKeyStore.ApiKeyRecord> = {}): ApiKeyStore.ApiKeyRecord => ({
      id,
      name: id,
      hash: "",
      qps: 1000,
      daily: 1000,
      monthly: 1000,
      createdAt: "2026-01-01T00:00:00.000Z",
      ...limits
    })
    const policy = (title: string, body: (quota: Quota.Quota["Service"]) => Effect.Effect<void, unknown>) =>
      it.effect(`quota policy: ${title}`, () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.parse("2026-01-31T23:59:58.500Z"))
          yield* body(yield* Quota.Quota)
        }).pipe(Effect.provide(Quota.Quota.layer.pipe(Layer.provide(layer))))
      )

    policy("refuses past the per-second rate and grants again in the next second", (quota) =>
      Effect.gen(function* () {
        const k = key("rate", { qps: 2 })
        assert.isTrue((yield* quota.charge(k, 1)).granted)
        assert.isTrue((yield* quota.charge(k, 25)).granted, "a batch is one request for the rate")
        const refused = yield* quota.charge(k, 1)
        assert.deepStrictEqual(
          { granted: refused.granted, scope: refused.window.scope, retry: refused.retryAfterSeconds },
          { granted: false, scope: "qps", retry: 1 }
        )
        const usage = yield* quota.usage(k)
        assert.deepStrictEqual(
          { daily: usage.dailyUsed, recent: usage.recentRequests },
          { daily: 26, recent: 2 },
          "the refused request is not counted"
        )
        yield* TestClock.adjust("500 millis")
        assert.isTrue((yield* quota.charge(k, 1)).granted)
      })
    )

    policy("counts addresses per UTC day and month, resetting at each boundary", (quota) =>
      Effect.gen(function* () {
        const k = key("volume", { daily: 10, monthly: 15 })
        const granted = yield* quota.charge(k, 10)
        assert.deepStrictEqual(granted.window, { scope: "daily", limit: 10, remaining: 0, resetSeconds: 2 })
        const refused = yield* quota.charge(k, 1)
        assert.deepStrictEqual(
          { granted: refused.granted, scope: refused.window.scope, retry: refused.retryAfterSeconds },
          { granted: false, scope: "daily", retry: 2 }
        )
        yield* TestClock.adjust("2 seconds")
        const february = yield* quota.usage(k)
        assert.deepStrictEqual(february, {
          dailyUsed: 0,
          monthlyUsed: 0,
          recentRequests: 0,
          dailyRemaining: 10,
          monthlyRemaining: 15
        })
        assert.isTrue((yield* quota.charge(k, 10)).granted)
        yield* TestClock.adjust("1 day")
        const nextDay = yield* quota.charge(k, 6)
        assert.deepStrictEqual(
          { granted: nextDay.granted, scope: nextDay.window.scope, retry: nextDay.retryAfterSeconds },
          { granted: false, scope: "monthly", retry: 27 * 86_400 },
          "the month still holds the first day's use"
        )
        assert.isTrue((yield* quota.charge(k, 5)).granted)
      })
    )

    policy("says when a request alone is larger than a limit", (quota) =>
      Effect.gen(function* () {
        const refused = yield* quota.charge(key("small", { daily: 5 }), 25)
        assert.isFalse(refused.granted)
        assert.isTrue(refused.exceedsLimit)
      })
    )

    policy("keeps each key's usage apart", (quota) =>
      Effect.gen(function* () {
        const a = key("a", { daily: 3 })
        const b = key("b", { daily: 3 })
        assert.isTrue((yield* quota.charge(a, 3)).granted)
        assert.isFalse((yield* quota.charge(a, 1)).granted)
        assert.isTrue((yield* quota.charge(b, 3)).granted)
        assert.strictEqual((yield* quota.usage(b)).dailyUsed, 3)
      })
    )
  })
