/** The behaviour every ApiKeyStore adapter must show, exercised through the ApiKeys service over it. */
import { assert, describe, it } from "@effect/vitest"
import { ApiKeys, ApiKeyStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"

/** Registers the ApiKeyStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<ApiKeyStore.ApiKeyStore, unknown>) =>
  describe(`ApiKeyStore contract: ${name}`, () => {
    const services = ApiKeys.ApiKeys.layer.pipe(Layer.provideMerge(layer))
    const test = (
      title: string,
      body: (
        keys: ApiKeys.ApiKeys["Service"],
        store: ApiKeyStore.ApiKeyStore["Service"]
      ) => Effect.Effect<void, unknown>
    ) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.parse("2026-01-10T00:00:00Z"))
          yield* body(yield* ApiKeys.ApiKeys, yield* ApiKeyStore.ApiKeyStore)
        }).pipe(Effect.provide(services))
      )

    test("stores only the hash, and the key authenticates", (keys, store) =>
      Effect.gen(function* () {
        const { key, record } = yield* keys.issue({ name: "Acme Exchange", qps: 5, daily: 100, monthly: 1000 })
        assert.match(key, /^vgl_[0-9a-f]{16}_[1-9A-HJ-NP-Za-km-z]{40,50}$/)
        const stored = yield* store.find(record.id)
        assert.deepStrictEqual(stored, record)
        assert.notInclude(JSON.stringify(stored), key.slice(21), "the secret part is not stored")
        assert.strictEqual(stored?.hash, ApiKeys.hashKey(key))
        const auth = yield* keys.authenticate(key)
        assert.strictEqual(auth.status, "authenticated")
        assert.deepStrictEqual(auth.status === "authenticated" ? auth.key : undefined, record)
      }))

    test("treats malformed, unknown and altered keys as invalid", (keys) =>
      Effect.gen(function* () {
        const { key } = yield* keys.issue({ name: "Acme" })
        const altered = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a")
        const other = `vgl_0123456789abcdef_${key.slice(21)}`
        for (const presented of ["", "x", altered, other, `${key} `, key.toUpperCase()]) {
          assert.strictEqual((yield* keys.authenticate(presented)).status, "invalid", presented)
        }
      }))

    test("reports a key as expired from its expiry instant", (keys) =>
      Effect.gen(function* () {
        const { key } = yield* keys.issue({ name: "Acme", expiresAt: "2026-01-10T00:00:05Z" })
        assert.strictEqual((yield* keys.authenticate(key)).status, "authenticated")
        yield* TestClock.adjust("5 seconds")
        const auth = yield* keys.authenticate(key)
        assert.strictEqual(auth.status, "expired")
        assert.strictEqual(auth.status === "expired" ? auth.key.name : undefined, "Acme")
      }))

    test("revokes a key for good, keeping the first revocation date", (keys, store) =>
      Effect.gen(function* () {
        const { key, record } = yield* keys.issue({ name: "Acme" })
        const other = yield* keys.issue({ name: "Other" })
        const revoked = yield* keys.revoke(record.id)
        assert.strictEqual(revoked?.revokedAt, "2026-01-10T00:00:00.000Z")
        yield* TestClock.adjust("1 hour")
        assert.strictEqual((yield* keys.revoke(record.id))?.revokedAt, "2026-01-10T00:00:00.000Z")
        assert.strictEqual((yield* keys.authenticate(key)).status, "invalid")
        assert.strictEqual((yield* keys.authenticate(other.key)).status, "authenticated")
        assert.isUndefined(yield* keys.revoke("0000000000000000"))
        assert.deepStrictEqual(
          (yield* store.list).map((r) => r.name),
          ["Acme", "Other"]
        )
      }))

    test("refuses a duplicate id without touching the stored key", (keys, store) =>
      Effect.gen(function* () {
        const { record } = yield* keys.issue({ name: "Acme" })
        const error = yield* Effect.flip(store.insert({ ...record, name: "Impostor", hash: "00" }))
        assert.strictEqual(error.reason, "Conflict")
        assert.strictEqual((yield* store.find(record.id))?.name, "Acme")
      }))

    test("refuses bad issue requests with a reason", (keys) =>
      Effect.gen(function* () {
        const bad = [
          { name: "  " },
          { name: "Acme", qps: 0 },
          { name: "Acme", daily: 1.5 },
          { name: "Acme", monthly: -3 },
          { name: "Acme", expiresAt: "2020-01-01T00:00:00Z" },
          { name: "Acme", expiresAt: "tomorrow" }
        ]
        for (const request of bad) {
          const error = yield* Effect.flip(keys.issue(request))
          assert.strictEqual(error._tag, "InvalidKeyRequest", JSON.stringify(request))
        }
        assert.lengthOf(yield* keys.list, 0)
      }))
  })
