/**
 * The behaviour every FollowStore adapter must show, with the WebhookStore of the same storage (a step's
 * deliveries land in its outbox). Each test gets a fresh store from `layer`.
 */
import { assert, describe, it } from "@effect/vitest"
import { type FollowStore, FollowStore as Port, WebhookStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

const mark = (number: number, branch = "a"): FollowStore.Mark => ({
  number,
  hash: `0x${branch}${number}`,
  parentHash: `0x${branch}${number - 1}`
})

const alert = (id: string, blockNumber: number, overrides: Partial<FollowStore.Alert> = {}): FollowStore.Alert => ({
  id,
  keyId: "key-a",
  botId: "bot-1",
  chainId: 1,
  blockNumber,
  blockHash: `0xa${blockNumber}`,
  blockTime: 1_700_000_000 + blockNumber * 12,
  rule: 0,
  expression: "system.emitted(tx1.Token.E.Transfer)",
  transactions: { tx1: `0xt${id}` },
  evidence: { transactions: {}, frames: {}, occurrences: {}, held: ["x"] },
  created: "2026-11-24T00:00:00.000Z",
  ...overrides
})

const channel: WebhookStore.Webhook = {
  id: "nc_1",
  keyId: "key-a",
  url: "https://chat.example.com/x",
  secret: "",
  created: "2026-11-24T00:00:00.000Z",
  deliveryCount: 0,
  channel: { type: "slack", name: "ops" }
}

const delivery = (id: string, correlationId: string): WebhookStore.Delivery => ({
  id,
  webhookId: "nc_1",
  keyId: "key-a",
  correlationId,
  body: `{"text":"${id}"}`,
  attempts: 0,
  nextAttemptAt: 0,
  status: "pending"
})

type Stores = Port.FollowStore | Port.AlertLog | WebhookStore.WebhookStore | WebhookStore.Destinations

/** Registers the FollowStore contract against an adapter's layer (built anew for every test). */
export const suite = (name: string, layer: Layer.Layer<Stores, unknown>) =>
  describe(`FollowStore contract: ${name}`, () => {
    const test = (title: string, body: (store: Port.Both, outbox: WebhookStore.Both) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          const outbox = { ...(yield* WebhookStore.WebhookStore), ...(yield* WebhookStore.Destinations) }
          yield* outbox.register(channel, 20)
          yield* body({ ...(yield* Port.FollowStore), ...(yield* Port.AlertLog) }, outbox)
        }).pipe(Effect.provide(layer))
      )

    test("records how far each bot was run with the step, and a step without blocks leaves the cursor", (store, outbox) =>
      Effect.gen(function* () {
        assert.deepStrictEqual([...(yield* store.coverage(1))], [])
        yield* store.advance(1, undefined, {
          blocks: [mark(10)],
          alerts: [],
          deliveries: [],
          keep: 5,
          coverage: [{ botId: "bot-1", from: 9, through: 10 }]
        })
        // A bot run over blocks it lacks: its alerts and coverage, the cursor where it was.
        const caught = yield* store.advance(1, mark(10), {
          blocks: [],
          alerts: [alert("al_b", 8, { botId: "bot-2" })],
          deliveries: [delivery("d_b", "al_b")],
          keep: 5,
          coverage: [{ botId: "bot-2", from: 7, through: 8 }]
        })
        assert.deepStrictEqual(caught, { outcome: "advanced", stored: ["al_b"] })
        assert.deepStrictEqual(yield* store.cursor(1), mark(10))
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(["al_b"])).map((d) => d.id),
          ["d_b"]
        )
        const refused = yield* store.advance(1, mark(9), {
          blocks: [],
          alerts: [],
          deliveries: [],
          keep: 5,
          coverage: [{ botId: "bot-2", from: 7, through: 10 }]
        })
        assert.strictEqual(refused.outcome, "moved")
        yield* store.advance(1, mark(10), {
          blocks: [mark(11)],
          alerts: [],
          deliveries: [],
          keep: 5,
          coverage: [
            { botId: "bot-1", from: 9, through: 11 },
            { botId: "bot-2", from: 7, through: 11 }
          ]
        })
        assert.deepStrictEqual(
          [...(yield* store.coverage(1)).values()].sort((a, b) => (a.botId < b.botId ? -1 : 1)),
          [
            { botId: "bot-1", from: 9, through: 11 },
            { botId: "bot-2", from: 7, through: 11 }
          ]
        )
        assert.deepStrictEqual([...(yield* store.coverage(2))], [], "per chain")
      }))

    test("re-anchors: every mark forgotten, the cursor set, alerts retracted or unverified once, with their notices", (store, outbox) =>
      Effect.gen(function* () {
        yield* store.advance(1, undefined, {
          blocks: [mark(10), mark(11), mark(12)],
          alerts: [alert("al_1", 11), alert("al_2", 12), alert("al_3", 12, { transactions: { tx1: "0xt3" } })],
          deliveries: [],
          keep: 5
        })
        yield* store.reset(1, mark(40, "b"), {
          retract: ["al_1"],
          unverify: ["al_2", "al_missing"],
          at: "2026-11-25T00:00:00.000Z",
          deliveries: [delivery("d_r", "al_1:retraction"), delivery("d_u", "al_2:unverified")]
        })
        assert.deepStrictEqual(yield* store.cursor(1), mark(40, "b"))
        assert.deepStrictEqual(yield* store.marks(1, 0), [mark(40, "b")])
        const [a1, a2, a3] = yield* Effect.forEach(["al_1", "al_2", "al_3"], (id) => store.alert("key-a", "bot-1", id))
        assert.deepStrictEqual(
          [a1?.retractedAt, a2?.unverifiedAt, a2?.retractedAt, a3?.retractedAt, a3?.unverifiedAt],
          ["2026-11-25T00:00:00.000Z", "2026-11-25T00:00:00.000Z", undefined, undefined, undefined]
        )
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 10, state: "unverified" })).map((a) => a.id),
          ["al_2"]
        )
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 10, state: "active" })).map((a) => a.id),
          ["al_3"]
        )
        assert.strictEqual(yield* store.retracted(1), 1, "a re-anchoring's retractions count (unverified ones do not)")
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(["al_1:retraction", "al_2:unverified"])).map((d) => d.id),
          ["d_r", "d_u"]
        )
        // Again: nothing changes twice, so no notice is queued twice.
        yield* store.reset(1, mark(40, "b"), {
          retract: ["al_1"],
          unverify: ["al_2"],
          at: "2026-11-26T00:00:00.000Z",
          deliveries: [delivery("d_r2", "al_1:retraction"), delivery("d_u2", "al_2:unverified")]
        })
        assert.lengthOf(yield* outbox.deliveriesOf(["al_1:retraction", "al_2:unverified"]), 2)
      }))

    test("advances from where it is, keeps recent marks, and refuses a step from a cursor that moved", (store) =>
      Effect.gen(function* () {
        assert.isUndefined(yield* store.cursor(1))
        const first = yield* store.advance(1, undefined, {
          blocks: [mark(10), mark(11)],
          alerts: [],
          deliveries: [],
          keep: 2
        })
        assert.deepStrictEqual(first, { outcome: "advanced", stored: [] })
        assert.deepStrictEqual(yield* store.cursor(1), mark(11))
        assert.deepStrictEqual(
          (yield* store.advance(1, undefined, { blocks: [mark(12)], alerts: [], deliveries: [], keep: 2 })).outcome,
          "moved",
          "another process took the first step"
        )
        assert.deepStrictEqual(
          (yield* store.advance(1, mark(10), { blocks: [mark(12)], alerts: [], deliveries: [], keep: 2 })).outcome,
          "moved"
        )
        // The same height on another branch (a reorg another process followed) is a cursor that moved too.
        assert.deepStrictEqual(
          (yield* store.advance(1, mark(11, "b"), {
            blocks: [mark(12)],
            alerts: [],
            deliveries: [],
            keep: 2
          })).outcome,
          "moved"
        )
        yield* store.advance(1, mark(11), {
          blocks: [mark(12), mark(13), mark(14)],
          alerts: [],
          deliveries: [],
          keep: 2
        })
        assert.deepStrictEqual(
          (yield* store.marks(1, 0)).map((m) => m.number),
          [12, 13, 14],
          "marks more than `keep` below the cursor are forgotten"
        )
        assert.deepStrictEqual(
          (yield* store.marks(1, 13)).map((m) => m.number),
          [13, 14]
        )
        assert.isUndefined(yield* store.cursor(2), "chains apart")
      }))

    test("stores a step's alerts once, and the deliveries of the new ones only, with the cursor", (store, outbox) =>
      Effect.gen(function* () {
        yield* store.advance(1, undefined, {
          blocks: [mark(10)],
          alerts: [alert("al_1", 10)],
          deliveries: [delivery("d1", "al_1")],
          keep: 10
        })
        const again = yield* store.advance(1, mark(10), {
          blocks: [mark(11)],
          alerts: [alert("al_1", 10), alert("al_2", 11)],
          deliveries: [delivery("d2", "al_1"), delivery("d3", "al_2")],
          keep: 10
        })
        assert.deepStrictEqual(again, { outcome: "advanced", stored: ["al_2"] })
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(["al_1", "al_2"])).map((d) => d.id),
          ["d1", "d3"],
          "an alert stored before gets no second delivery"
        )
        const moved = yield* store.advance(1, mark(10), {
          blocks: [mark(11)],
          alerts: [alert("al_3", 11)],
          deliveries: [delivery("d4", "al_3")],
          keep: 10
        })
        assert.deepStrictEqual(moved, { outcome: "moved", stored: [] })
        assert.deepStrictEqual(yield* outbox.deliveriesOf(["al_3"]), [], "a refused step writes nothing")
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 10 })).map((a) => a.id),
          ["al_2", "al_1"]
        )
        assert.deepStrictEqual(yield* store.alerts("key-b", "bot-1", { limit: 10 }), [], "keys apart")
        assert.deepStrictEqual((yield* store.alerts("key-a", "bot-1", { limit: 10 }))[1], alert("al_1", 10))
        assert.deepStrictEqual(yield* store.alert("key-a", "bot-1", "al_1"), alert("al_1", 10), "one by id")
        assert.isUndefined(yield* store.alert("key-b", "bot-1", "al_1"), "another key's")
        assert.isUndefined(yield* store.alert("key-a", "bot-2", "al_1"), "another bot's")
        assert.isUndefined(yield* store.alert("key-a", "bot-1", "al_9"), "no such alert")
      }))

    test("stores the deliveries of a step's new alerts in the order given, among hundreds", (store, outbox) =>
      Effect.gen(function* () {
        const ids = Array.from({ length: 300 }, (_, i) => `al_${String((i * 7919) % 1000).padStart(3, "0")}`)
        const earlier = ids.filter((_, i) => i % 6 === 0)
        yield* store.advance(1, undefined, {
          blocks: [mark(10)],
          alerts: earlier.map((id) => alert(id, 10)),
          deliveries: earlier.map((id) => delivery(`d_${id}_1`, id)),
          keep: 10
        })
        // Deliveries not in the alerts' order: the last alert's first.
        const given = [...ids].reverse().map((id) => delivery(`d_${id}_2`, id))
        const step = yield* store.advance(1, mark(10), {
          blocks: [mark(11)],
          alerts: ids.map((id) => alert(id, 11)),
          deliveries: given,
          keep: 10
        })
        assert.deepStrictEqual(
          [...(step.outcome === "advanced" ? step.stored : [])].sort(),
          ids.filter((id) => !earlier.includes(id)).sort()
        )
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(ids)).map((d) => d.id),
          [
            ...earlier.map((id) => `d_${id}_1`),
            ...given.filter((d) => !earlier.includes(d.correlationId)).map((d) => d.id)
          ],
          "the deliveries of the alerts stored now, in the order given, after those of the first step"
        )
      }))

    test("rewinds to an ancestor: orphaned alerts retracted once, with their notices, and the cursor back", (store, outbox) =>
      Effect.gen(function* () {
        yield* store.advance(1, undefined, {
          blocks: [mark(10), mark(11), mark(12)],
          alerts: [alert("al_1", 10), alert("al_2", 11), alert("al_3", 12)],
          deliveries: [],
          keep: 10
        })
        const orphaned = yield* store.orphaned(1, 10)
        assert.deepStrictEqual(
          orphaned.map((a) => a.id),
          ["al_2", "al_3"]
        )
        assert.strictEqual(
          yield* store.rewind(1, mark(11), {
            ancestor: mark(10),
            retract: ["al_2"],
            at: "2026-11-24T00:00:05.000Z",
            deliveries: []
          }),
          "moved"
        )
        assert.strictEqual(
          yield* store.rewind(1, mark(12), {
            ancestor: mark(10),
            retract: ["al_2", "al_3"],
            at: "2026-11-24T00:00:05.000Z",
            deliveries: [delivery("r2", "al_2:retraction"), delivery("r3", "al_3:retraction")]
          }),
          "advanced"
        )
        assert.deepStrictEqual(yield* store.cursor(1), mark(10))
        assert.deepStrictEqual(
          (yield* store.marks(1, 0)).map((m) => m.number),
          [10]
        )
        assert.deepStrictEqual(yield* store.orphaned(1, 10), [])
        assert.deepStrictEqual([yield* store.retracted(1), yield* store.retracted(2)], [2, 0], "retracted, by chain")
        const listed = yield* store.alerts("key-a", "bot-1", { limit: 10 })
        assert.deepStrictEqual(
          listed.map((a) => [a.id, a.retractedAt]),
          [
            ["al_3", "2026-11-24T00:00:05.000Z"],
            ["al_2", "2026-11-24T00:00:05.000Z"],
            ["al_1", undefined]
          ]
        )
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 10, state: "active" })).map((a) => a.id),
          ["al_1"]
        )
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 10, state: "retracted" })).map((a) => a.id),
          ["al_3", "al_2"]
        )
        assert.deepStrictEqual(
          (yield* store.alerts("key-a", "bot-1", { limit: 1, before: "al_3" })).map((a) => a.id),
          ["al_2"],
          "paged by the last alert seen"
        )
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(["al_2:retraction", "al_3:retraction"])).map((d) => d.id),
          ["r2", "r3"]
        )
        // The new branch: the same transaction in another block is another alert; a retraction is not repeated.
        yield* store.advance(1, mark(10), {
          blocks: [mark(11, "b")],
          alerts: [alert("al_4", 11, { blockHash: "0xb11" })],
          deliveries: [],
          keep: 10
        })
        yield* store.rewind(1, mark(11, "b"), {
          ancestor: mark(10),
          retract: ["al_2", "al_4"],
          at: "2026-11-24T00:00:09.000Z",
          deliveries: [delivery("r2b", "al_2:retraction"), delivery("r4", "al_4:retraction")]
        })
        assert.deepStrictEqual(
          (yield* outbox.deliveriesOf(["al_2:retraction", "al_4:retraction"])).map((d) => d.id),
          ["r2", "r4"]
        )
      }))

    test("keeps a step's alerts in the order given: those of one block time are listed as they were stored", (store) =>
      Effect.gen(function* () {
        // Ids out of their alphabetical order, so an order by id would show.
        const ids = ["al_k", "al_c", "al_x", "al_a", "al_m"]
        const step = yield* store.advance(1, undefined, {
          blocks: [mark(10)],
          alerts: [...ids.map((id) => alert(id, 10)), alert("al_c", 10)],
          deliveries: [],
          keep: 10
        })
        assert.deepStrictEqual([...step.stored].sort(), [...ids].sort(), "an id twice in a step is stored once")
        yield* store.advance(1, mark(10), {
          blocks: [mark(11)],
          alerts: [alert("al_b", 10), alert("al_k", 10)],
          deliveries: [],
          keep: 10
        })
        assert.deepStrictEqual(
          (yield* store.recent("bot-1", 0)).map((a) => a.id),
          [...ids, "al_b"]
        )
      }))

    test("lists a bot's recent alerts by block time, suppressed ones kept as such, retracted ones left out", (store) =>
      Effect.gen(function* () {
        yield* store.advance(1, undefined, {
          blocks: [mark(10), mark(11), mark(12)],
          alerts: [
            alert("al_1", 10),
            alert("al_2", 11, { suppressed: "threshold" }),
            alert("al_3", 12, { suppressed: "interval" }),
            alert("al_4", 12, { botId: "bot-2" })
          ],
          deliveries: [],
          keep: 10
        })
        assert.deepStrictEqual(
          (yield* store.recent("bot-1", 1_700_000_000 + 11 * 12)).map((a) => [a.id, a.suppressed]),
          [
            ["al_2", "threshold"],
            ["al_3", "interval"]
          ]
        )
        assert.deepStrictEqual((yield* store.recent("bot-1", 0))[0], alert("al_1", 10))
        yield* store.rewind(1, mark(12), {
          ancestor: mark(11),
          retract: ["al_3"],
          at: "2026-11-24T00:00:05.000Z",
          deliveries: []
        })
        assert.deepStrictEqual(
          (yield* store.recent("bot-1", 0)).map((a) => a.id),
          ["al_1", "al_2"]
        )
      }))
  })
