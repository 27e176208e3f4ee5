/** The behaviour every WebhookStore adapter must show. Each test gets a fresh store from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { WebhookStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

const hook = (
  id: string,
  keyId = "key-a",
  created = `2026-01-01T00:00:0${id.length % 10}.000Z`
): WebhookStore.Webhook => ({
  id,
  keyId,
  url: `https://example.com/${id}`,
  secret: "whsec_c2VjcmV0",
  created,
  deliveryCount: 0
})

const delivery = (id: string, webhookId: string, keyId = "key-a", nextAttemptAt = 0): WebhookStore.Delivery => ({
  id,
  webhookId,
  keyId,
  correlationId: `corr-${id}`,
  body: `{"n":"${id}"}`,
  attempts: 0,
  nextAttemptAt,
  status: "pending"
})

/** Stores how attempt `attempt` of delivery `id` ended: a claim of nothing that only settles. */
export const settled = (
  store: WebhookStore.WebhookStore["Service"],
  id: string,
  attempt: number,
  settlement: WebhookStore.Settlement
) => store.claim({ now: 0, limit: 0, perKey: 0, leaseUntil: 0, settle: [{ id, attempt, settlement }] })

/** Registers the WebhookStore contract against an adapter's layer (built anew for every test). */
export const suite = (
  name: string,
  layer: Layer.Layer<WebhookStore.WebhookStore | WebhookStore.Destinations, unknown>
) =>
  describe(`WebhookStore contract: ${name}`, () => {
    const test = (title: string, body: (store: WebhookStore.Both) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body({ ...(yield* WebhookStore.WebhookStore), ...(yield* WebhookStore.Destinations) })
        }).pipe(Effect.provide(layer))
      )

    test("registers up to the limit per key, and keys apart", (store) =>
      Effect.gen(function* () {
        for (const id of ["w1", "w2", "w3"]) assert.isTrue(yield* store.register(hook(id), 3))
        assert.isFalse(yield* store.register(hook("w4"), 3))
        assert.isTrue(yield* store.register(hook("w5", "key-b"), 3))
        assert.deepStrictEqual(
          (yield* store.list("key-a")).map((w) => w.id),
          ["w1", "w2", "w3"]
        )
        assert.deepStrictEqual(
          (yield* store.list("key-b")).map((w) => [w.id, w.url, w.secret, w.deliveryCount]),
          [["w5", "https://example.com/w5", "whsec_c2VjcmV0", 0]]
        )
      }))

    test("stores deliveries only for webhooks that still exist and are enabled", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.register(hook("w2"), 5)
        yield* store.remove("key-a", "w2")
        assert.strictEqual(yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w2")]), 1)
        assert.deepStrictEqual(
          (yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })).map((c) => c.delivery.id),
          ["d1"]
        )
        assert.deepStrictEqual(
          (yield* store.stats("key-a")).map((s) => [s.id, s.pending]),
          [["w1", 1]]
        )
      }))

    test("removes only the owner's webhook, with its undelivered deliveries", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1")])
        assert.isFalse(yield* store.remove("key-b", "w1"), "another key cannot remove it")
        assert.isFalse(yield* store.remove("key-a", "nope"))
        assert.isTrue(yield* store.remove("key-a", "w1"))
        assert.lengthOf(yield* store.list("key-a"), 0)
        assert.lengthOf(yield* store.claim({ now: 10, limit: 10, perKey: 10, leaseUntil: 100 }), 0)
        assert.isTrue(yield* store.register(hook("w1"), 5), "the slot is free again")
      }))

    test("leases due deliveries, counts attempts, and hands them out again when a lease runs out", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1", "key-a", 0), delivery("d2", "w1", "key-a", 50)])
        const first = yield* store.claim({ now: 10, limit: 10, perKey: 10, leaseUntil: 1_000 })
        assert.deepStrictEqual(
          first.map((c) => [c.delivery.id, c.delivery.attempts, c.delivery.body, c.webhook.id]),
          [["d1", 1, '{"n":"d1"}', "w1"]]
        )
        assert.lengthOf(
          yield* store.claim({ now: 500, limit: 10, perKey: 10, leaseUntil: 1_500 }),
          1,
          "d2 is due, d1 is leased"
        )
        const again = yield* store.claim({ now: 1_000, limit: 10, perKey: 10, leaseUntil: 2_000 })
        assert.deepStrictEqual(
          again.map((c) => [c.delivery.id, c.delivery.attempts]),
          [["d1", 2]],
          "d1's lease ran out (a crash), so it is due again"
        )
      }))

    test("limits each key's share of a claim so one key cannot starve another", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("wa", "key-a"), 5)
        yield* store.register(hook("wb", "key-b"), 5)
        yield* store.enqueue([
          ...Array.from({ length: 6 }, (_, i) => delivery(`a${i}`, "wa", "key-a", i)),
          delivery("b0", "wb", "key-b", 10)
        ])
        const claimed = yield* store.claim({ now: 100, limit: 4, perKey: 2, leaseUntil: 1_000 })
        assert.deepStrictEqual(claimed.map((c) => c.delivery.id).sort(), ["a0", "a1", "b0"])
        /** What a claim of up to 3 per key leases while key-a already has `held` in flight. */
        const holding = (held: number) =>
          Effect.map(
            store.claim({ now: 100, limit: 10, perKey: 3, leaseUntil: 1_000, inFlight: { keys: { "key-a": held } } }),
            (claimed) => claimed.map((c) => c.delivery.id)
          )
        assert.deepStrictEqual(yield* holding(3), [], "a key already holding its share is left out")
        assert.deepStrictEqual(yield* holding(2), ["a2"], "and a key holding part of it gets only the rest")
      }))

    test("claims fairly: a key's old backlog never keeps another key's newer deliveries out, nor a stalled destination its key's others", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("stalled", "key-a"), 5)
        yield* store.register(hook("live", "key-a"), 5)
        yield* store.register(hook("other", "key-b"), 5)
        // 500 old deliveries of one destination, then one newer each of the others.
        yield* store.enqueue([
          ...Array.from({ length: 500 }, (_, i) => delivery(`s${i}`, "stalled", "key-a", i)),
          delivery("l0", "live", "key-a", 600),
          delivery("o0", "other", "key-b", 700)
        ])
        const first = (yield* store.claim({
          now: 1_000,
          limit: 3,
          perKey: 8,
          leaseUntil: 5_000,
          inFlight: {},
          perDestination: 4
        })).map((c) => c.delivery.id)
        assert.sameMembers(first, ["s0", "l0", "o0"], "every key and destination has its turn")
        // The stalled destination already has 4 in flight: its key's other destination and other keys still go.
        yield* store.enqueue([delivery("l1", "live", "key-a", 800), delivery("o1", "other", "key-b", 900)])
        const second = (yield* store.claim({
          now: 1_000,
          limit: 10,
          perKey: 8,
          leaseUntil: 5_000,
          inFlight: {
            keys: { "key-a": 5, "key-b": 1 },
            destinations: { stalled: 4, live: 1, other: 1 }
          },
          perDestination: 4
        })).map((c) => c.delivery.id)
        assert.sameMembers(second, ["l1", "o1"])
      }))

    test("parks a destination's pending deliveries: dead-lettered with the reason, sent again on redelivery", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.register(hook("w2"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1"), delivery("d3", "w2")])
        assert.strictEqual(yield* store.park("key-b", ["w1"], "no bot sends here"), 0, "another key's")
        assert.strictEqual(yield* store.park("key-a", ["w1"], "no bot sends here"), 2)
        const parked = yield* store.deliveriesOf(["d1", "d2", "d3"].map((id) => `corr-${id}`))
        assert.deepStrictEqual(
          parked.map((d) => [d.id, d.status, d.lastError ?? ""]),
          [
            ["d1", "dead", "no bot sends here"],
            ["d2", "dead", "no bot sends here"],
            ["d3", "pending", ""]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })).map((c) => c.delivery.id),
          ["d3"]
        )
        assert.strictEqual(yield* store.redeliver("key-a", "w1", 0), 2)
      }))

    test("settles: delivered counts on the webhook, retry waits, dead is kept and counted as failed", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1"), delivery("d3", "w1")])
        yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })
        yield* settled(store, "d1", 1, { _tag: "Delivered", at: "2026-01-01T00:00:05.000Z" })
        yield* settled(store, "d2", 1, { _tag: "Retry", at: 5_000, error: "HTTP 503" })
        yield* settled(store, "d3", 1, { _tag: "Dead", error: "HTTP 500 after 4 attempts" })
        const [w] = yield* store.list("key-a")
        assert.deepStrictEqual([w?.deliveryCount, w?.lastDelivery], [1, "2026-01-01T00:00:05.000Z"])
        assert.lengthOf(yield* store.claim({ now: 4_999, limit: 10, perKey: 10, leaseUntil: 6_000 }), 0)
        assert.deepStrictEqual(
          (yield* store.claim({ now: 5_000, limit: 10, perKey: 10, leaseUntil: 6_000 })).map((c) => [
            c.delivery.id,
            c.delivery.attempts,
            c.delivery.lastError
          ]),
          [["d2", 2, "HTTP 503"]]
        )
        const [stats] = yield* store.stats("key-a")
        assert.deepStrictEqual(stats, {
          id: "w1",
          url: "https://example.com/w1",
          deliveryCount: 1,
          lastDelivery: "2026-01-01T00:00:05.000Z",
          pending: 1,
          failed: 1,
          disabled: false,
          lastError: "HTTP 500 after 4 attempts"
        })
      }))

    test("a claim stores the settlements handed to it first, in its own transaction, stale ones changing nothing", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1"), delivery("d3", "w1"), delivery("d4", "w1")])
        assert.lengthOf(yield* store.claim({ now: 0, limit: 3, perKey: 10, leaseUntil: 1_000 }), 3)
        const next = yield* store.claim({
          now: 10,
          limit: 10,
          perKey: 10,
          leaseUntil: 1_000,
          settle: [
            { id: "d1", attempt: 1, settlement: { _tag: "Delivered", at: "2026-01-01T00:00:05.000Z" } },
            { id: "d2", attempt: 1, settlement: { _tag: "Retry", at: 10, error: "HTTP 503" } },
            // Not the attempt leased (a sender whose lease ran out): nothing changes.
            { id: "d3", attempt: 7, settlement: { _tag: "Dead", error: "HTTP 500" } }
          ]
        })
        assert.deepStrictEqual(
          next.map((c) => [c.delivery.id, c.delivery.attempts, c.delivery.lastError]).sort(),
          [
            ["d2", 2, "HTTP 503"],
            ["d4", 1, undefined]
          ],
          "the retry, due at once, is claimed by the same call; the stale settlement left d3 leased"
        )
        // A claim of nothing only settles.
        const none = yield* store.claim({
          now: 20,
          limit: 0,
          perKey: 10,
          leaseUntil: 1_000,
          settle: [{ id: "d3", attempt: 1, settlement: { _tag: "Dead", error: "HTTP 500 (not retried)" } }]
        })
        assert.deepStrictEqual(none, [])
        const [stats] = yield* store.stats("key-a")
        assert.deepStrictEqual(
          [stats?.deliveryCount, stats?.lastDelivery, stats?.pending, stats?.failed, stats?.lastError],
          [1, "2026-01-01T00:00:05.000Z", 2, 1, "HTTP 500 (not retried)"]
        )
      }))

    test("a destination that recovered shows no last error; a newer failure shows again", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1")])
        assert.lengthOf(yield* store.claim({ now: 0, limit: 2, perKey: 10, leaseUntil: 1_000 }), 2)
        const settle = (id: string, settlement: WebhookStore.Settle["settlement"]) =>
          store.claim({ now: 10, limit: 0, perKey: 10, leaseUntil: 1_000, settle: [{ id, attempt: 1, settlement }] })
        yield* settle("d1", { _tag: "Dead", error: "HTTP 500" })
        assert.strictEqual((yield* store.stats("key-a"))[0]?.lastError, "HTTP 500")
        yield* settle("d2", { _tag: "Delivered", at: "2026-01-01T00:00:05.000Z" })
        const [recovered] = yield* store.stats("key-a")
        assert.deepStrictEqual([recovered?.failed, recovered?.lastError], [1, undefined])
        yield* store.enqueue([delivery("d3", "w1")])
        assert.lengthOf(yield* store.claim({ now: 20, limit: 1, perKey: 10, leaseUntil: 1_000 }), 1)
        yield* settle("d3", { _tag: "Retry", at: 30, error: "HTTP 503" })
        assert.strictEqual((yield* store.stats("key-a"))[0]?.lastError, "HTTP 503")
      }))

    test("settles only the attempt still leased: a sender whose lease ran out overwrites nothing", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.enqueue([delivery("d1", "w1")])
        assert.deepStrictEqual(
          (yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })).map((c) => c.delivery.attempts),
          [1]
        )
        // The first sender stalls past its lease; the delivery is claimed again (here, or by another instance).
        assert.deepStrictEqual(
          (yield* store.claim({ now: 100, limit: 10, perKey: 10, leaseUntil: 200 })).map((c) => c.delivery.attempts),
          [2]
        )
        yield* settled(store, "d1", 1, { _tag: "Dead", error: "HTTP 500 (after 4 attempts)" })
        yield* settled(store, "d1", 1, { _tag: "Delivered", at: "2026-01-01T00:00:01.000Z" })
        const [before] = yield* store.stats("key-a")
        assert.deepStrictEqual([before?.pending, before?.failed, before?.deliveryCount], [1, 0, 0], "unchanged")
        yield* settled(store, "d1", 2, { _tag: "Delivered", at: "2026-01-01T00:00:02.000Z" })
        yield* settled(store, "d1", 2, { _tag: "Delivered", at: "2026-01-01T00:00:03.000Z" })
        const [after] = yield* store.stats("key-a")
        assert.deepStrictEqual(
          [after?.pending, after?.failed, after?.deliveryCount, after?.lastDelivery],
          [0, 0, 1, "2026-01-01T00:00:02.000Z"],
          "settled once, by the attempt that held it"
        )
      }))

    test("redelivers the owner's dead letters afresh, due now; not another key's, nor a disabled webhook's", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.register(hook("w2"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1"), delivery("d3", "w1")])
        yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })
        yield* settled(store, "d1", 1, { _tag: "Dead", error: "HTTP 503 (after 4 attempts)" })
        yield* settled(store, "d2", 1, { _tag: "Delivered", at: "2026-01-01T00:00:05.000Z" })
        yield* settled(store, "d3", 1, { _tag: "Dead", error: "HTTP 503 (after 4 attempts)" })
        assert.strictEqual(yield* store.redeliver("key-b", "w1", 7_000), undefined, "another key's")
        assert.strictEqual(yield* store.redeliver("key-a", "w1", 7_000, "channels"), undefined, "another scope")
        assert.strictEqual(yield* store.redeliver("key-a", "w1", 7_000), 2)
        assert.deepStrictEqual(
          (yield* store.stats("key-a")).map((x) => [x.id, x.pending, x.failed]),
          [
            ["w1", 2, 0],
            ["w2", 0, 0]
          ]
        )
        assert.lengthOf(
          yield* store.claim({ now: 6_999, limit: 10, perKey: 10, leaseUntil: 8_000 }),
          0,
          "due at the time given"
        )
        assert.deepStrictEqual(
          (yield* store.claim({ now: 7_000, limit: 10, perKey: 10, leaseUntil: 8_000 })).map((c) => [
            c.delivery.id,
            c.delivery.attempts
          ]),
          [
            ["d1", 1],
            ["d3", 1]
          ]
        )
        assert.strictEqual(yield* store.redeliver("key-a", "w1", 9_000), 0, "nothing dead any more")
        yield* store.enqueue([delivery("d4", "w2", "key-a", 9_000)])
        yield* store.claim({ now: 9_000, limit: 10, perKey: 10, leaseUntil: 10_000 })
        yield* settled(store, "d4", 1, { _tag: "Gone", at: "2026-01-01T00:00:06.000Z", error: "HTTP 410" })
        assert.strictEqual(yield* store.redeliver("key-a", "w2", 9_000), 0, "a disabled webhook gets nothing")
        assert.deepStrictEqual(
          (yield* store.stats("key-a")).map((x) => [x.id, x.failed]),
          [
            ["w1", 0],
            ["w2", 1]
          ]
        )
      }))

    test("redelivers the owner's dead letters of some events afresh, due now; none to a disabled webhook", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.register(hook("w2"), 5)
        yield* store.enqueue([
          delivery("d1", "w1"),
          delivery("d2", "w2"),
          delivery("d3", "w1"),
          { ...delivery("d4", "w1"), correlationId: "corr-d1" },
          delivery("d5", "w1")
        ])
        yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })
        for (const id of ["d1", "d2", "d3", "d4"]) yield* settled(store, id, 1, { _tag: "Dead", error: "HTTP 503" })
        yield* settled(store, "d5", 1, { _tag: "Delivered", at: "2026-01-01T00:00:05.000Z" })
        const events = ["corr-d1", "corr-d2", "corr-d5"]
        assert.strictEqual(yield* store.redeliverEvents("key-b", events, 7_000), 0, "another key's")
        assert.strictEqual(yield* store.redeliverEvents("key-a", [], 7_000), 0, "no events")
        assert.strictEqual(yield* store.redeliverEvents("key-a", events, 7_000), 3, "d1, d4 and d2; not d5")
        assert.deepStrictEqual(
          (yield* store.claim({ now: 7_000, limit: 10, perKey: 10, leaseUntil: 8_000 }))
            .map((c) => [c.delivery.id, c.delivery.attempts])
            .sort(),
          [
            ["d1", 1],
            ["d2", 1],
            ["d4", 1]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.deliveriesOf(["corr-d3"])).map((d) => d.status),
          ["dead"],
          "another event's dead letter stays"
        )
        yield* settled(store, "d2", 1, { _tag: "Gone", at: "2026-01-01T00:00:06.000Z", error: "HTTP 410" })
        assert.strictEqual(yield* store.redeliverEvents("key-a", ["corr-d2"], 9_000), 0, "a disabled webhook's")
        yield* store.claim({ now: 9_000, limit: 10, perKey: 10, leaseUntil: 9_500 })
        // d1's second attempt (its first lease ran out at 8,000).
        yield* settled(store, "d1", 2, { _tag: "Dead", error: "HTTP 503" })
        assert.isTrue(yield* store.remove("key-a", "w1"))
        assert.strictEqual(yield* store.redeliverEvents("key-a", ["corr-d1"], 10_000), 0, "a removed webhook's")
      }))

    test("a 410 disables the webhook and dead-letters what it still had pending", (store) =>
      Effect.gen(function* () {
        yield* store.register(hook("w1"), 5)
        yield* store.register(hook("w2"), 5)
        yield* store.enqueue([delivery("d1", "w1"), delivery("d2", "w1", "key-a", 1_000), delivery("d3", "w2")])
        yield* store.claim({ now: 0, limit: 1, perKey: 10, leaseUntil: 100 })
        yield* settled(store, "d1", 1, { _tag: "Gone", at: "2026-01-01T00:00:01.000Z", error: "HTTP 410" })
        const stats = yield* store.stats("key-a")
        assert.deepStrictEqual(
          stats.map((s) => [s.id, s.disabled, s.pending, s.failed]),
          [
            ["w1", true, 0, 2],
            ["w2", false, 1, 0]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.claim({ now: 5_000, limit: 10, perKey: 10, leaseUntil: 6_000 })).map((c) => c.delivery.id),
          ["d3"]
        )
      }))

    test("keeps notification channels apart from webhooks: limits, lists, removal, stats; claims carry their settings", (store) =>
      Effect.gen(function* () {
        const channel = (id: string, settings: WebhookStore.Channel): WebhookStore.Webhook => ({
          ...hook(id),
          url: settings.type === "email" ? "mailto:ops@example.com" : `https://chat.example.com/${id}`,
          channel: settings
        })
        assert.isTrue(yield* store.register(hook("w1"), 1))
        assert.isTrue(yield* store.register(channel("c1", { type: "slack", name: "ops" }), 2), "limits count per scope")
        const email = { type: "email" as const, name: "mail", to: ["ops@example.com"], template: "{{title}}" }
        assert.isTrue(yield* store.register(channel("c2", email), 2))
        assert.isFalse(yield* store.register(channel("c3", { type: "discord", name: "d" }), 2))
        assert.isFalse(yield* store.register(hook("w2"), 1))
        assert.deepStrictEqual(
          (yield* store.list("key-a")).map((w) => w.id),
          ["w1"]
        )
        const channels = yield* store.list("key-a", "channels")
        assert.deepStrictEqual(
          channels.map((w) => [w.id, w.channel]),
          [
            ["c1", { type: "slack", name: "ops" }],
            ["c2", email]
          ]
        )
        assert.isFalse(yield* store.remove("key-a", "c1"), "a channel is not removed as a webhook")
        assert.isFalse(yield* store.remove("key-a", "w1", "channels"), "nor a webhook as a channel")
        yield* store.enqueue([delivery("d1", "c2"), delivery("d2", "w1")])
        const claimed = yield* store.claim({ now: 0, limit: 10, perKey: 10, leaseUntil: 100 })
        assert.deepStrictEqual(
          claimed.map((c) => [c.delivery.id, c.webhook.channel]),
          [
            ["d1", email],
            ["d2", undefined]
          ]
        )
        yield* settled(store, "d1", 1, { _tag: "Retry", at: 50, error: "SMTP 421: try later" })
        assert.deepStrictEqual(
          (yield* store.stats("key-a", "channels")).map((s) => [s.id, s.pending, s.lastError]),
          [
            ["c1", 0, undefined],
            ["c2", 1, "SMTP 421: try later"]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.stats("key-a")).map((s) => s.id),
          ["w1"]
        )
        assert.isTrue(yield* store.remove("key-a", "c2", "channels"))
        assert.deepStrictEqual(
          (yield* store.claim({ now: 1_000, limit: 10, perKey: 10, leaseUntil: 2_000 })).map((c) => c.delivery.id),
          ["d2"],
          "the removed channel's pending delivery went with it; the webhook's (lease run out) is due again"
        )
      }))
  })
