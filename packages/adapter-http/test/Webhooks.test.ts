/** Webhooks on the real server (SQLite, ephemeral port) delivering to a real HTTPS receiver on loopback. */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { HttpsWebhookTransport } from "@vigil/adapter-delivery"
import { Schemas } from "@vigil/adapter-http"
import { ApiKeys, WebhookSigning, WebhookStore, WebhookTransport } from "@vigil/core"
import { Effect, Schedule, Schema } from "effect"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { compileWebhooks } from "./OpenApiConformance.ts"
import * as TestServer from "./TestServer.ts"

const { call, issue, ingest } = TestServer

const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

const fast = { timeoutMillis: 800, retries: 3, backoffMillis: 20, pollMillis: 20 }

/** The server trusting the test CA, with 127.0.0.1 allowed (as a private deployment would configure it). */
const trusting = () =>
  TestServer.layer({
    webhooks: { allowHosts: ["127.0.0.1"], delivery: fast },
    outbound: { allowHosts: ["127.0.0.1"], ca: certs.ca }
  })

const live = (
  title: string,
  layer: () => ReturnType<typeof TestServer.layer>,
  body: () => Effect.Effect<void, unknown, any>
) => it.live(title, () => body().pipe(Effect.provide(layer())) as Effect.Effect<void, unknown>, 30_000)

const receiver = (behaviour?: Receiver.Behaviour) =>
  Effect.acquireRelease(
    Effect.promise(() => Receiver.start(certs, behaviour)),
    (r) => Effect.promise(() => r.close())
  )

const wait = (r: Receiver.Receiver, predicate: (received: ReadonlyArray<Receiver.Received>) => boolean) =>
  Effect.promise(() => r.until(predicate))

const register = (key: string, url: string) =>
  call("POST", "/api/v2/webhooks", { headers: { "x-api-key": key }, json: { url } })
const asyncIntel = (key: string, address: string) =>
  call("POST", "/api/v2/intel/webhook", { headers: { "x-api-key": key }, json: { address } })
const stats = (key: string) => call("GET", "/api/v2/webhooks/stats", { headers: { "x-api-key": key } })

/**
 * Reads `read` until `done` holds (the dispatcher records a settlement just after the receiver answers): a wait
 * for a state, never for a length of time. Gives up after 200 reads.
 */
const until = <A, R>(read: Effect.Effect<A, never, R>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.flatMap((a) => (done(a) ? Effect.succeed(a) : Effect.fail("not yet" as const))),
    Effect.retry({ schedule: Schedule.spaced("10 millis"), times: 200 }),
    Effect.orDie
  )

/** The stats of the key's webhooks once `done` holds. */
const statsUntil = (key: string, done: (s: any) => boolean) =>
  until(
    Effect.map(stats(key), (r) => r.json.stats),
    done
  )

const decodes = <S extends Schema.Top>(schema: S, value: unknown) =>
  assert.doesNotThrow(() => Schema.decodeUnknownSync(schema as any)(value), undefined, JSON.stringify(value))

describe("webhook management", () => {
  live("registers up to 5 per key, lists, counts and deletes with the spec's texts", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver()
      const key = yield* issue({ name: "Acme" })
      const other = yield* issue({ name: "Other" })
      const first = yield* register(key, r.url("/1"))
      assert.strictEqual(first.status, 201)
      decodes(Schemas.WebhookRegistered, first.json)
      assert.match(first.json.webhook.id, /^wh_\d{13}_[a-z0-9]{9}$/)
      assert.match(first.json.webhook.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
      assert.strictEqual(first.json.message, "Webhook registered successfully")
      for (const n of [2, 3, 4, 5]) assert.strictEqual((yield* register(key, r.url(`/${n}`))).status, 201)
      const sixth = yield* register(key, r.url("/6"))
      assert.strictEqual(sixth.status, 409)
      assert.deepStrictEqual([sixth.json.success, sixth.json.error], [false, "Maximum 5 webhooks allowed per client"])
      assert.isString(sixth.json.timestamp)
      assert.strictEqual((yield* register(other, r.url("/o"))).status, 201, "the limit is per key")

      const list = yield* call("GET", "/api/v2/webhooks", { headers: { "x-api-key": key } })
      decodes(Schemas.WebhookList, list.json)
      assert.strictEqual(list.json.count, 5)
      assert.deepStrictEqual(Object.keys(list.json.webhooks[0]).sort(), [
        "created",
        "deliveryCount",
        "disabled",
        "id",
        "lastDelivery",
        "url"
      ])
      assert.notProperty(list.json.webhooks[0], "secret", "the secret is shown only at registration")

      const id = first.json.webhook.id
      const foreign = yield* call("DELETE", `/api/v2/webhooks/${id}`, { headers: { "x-api-key": other } })
      assert.strictEqual(foreign.status, 404)
      assert.strictEqual(foreign.json.error, "Webhook not found", "never reveals another key's webhook")
      const unknown = yield* call("DELETE", "/api/v2/webhooks/wh_0_nothing00", { headers: { "x-api-key": key } })
      assert.deepStrictEqual([unknown.status, unknown.json.error], [404, "Webhook not found"])
      const deleted = yield* call("DELETE", `/api/v2/webhooks/${id}`, { headers: { "x-api-key": key } })
      assert.deepStrictEqual([deleted.status, deleted.json.message], [200, "Webhook deleted successfully"])
      const s = yield* stats(key)
      decodes(Schemas.WebhookStats, s.json)
      assert.deepStrictEqual([s.json.stats.total, s.json.stats.totalDeliveries], [4, 0])
      const metrics = (yield* call("GET", "/metrics")).text
      assert.include(
        metrics,
        'vigil_http_requests_total{method="DELETE",route="/api/v2/webhooks/:webhookId",status="404"} 2'
      )
      assert.include(metrics, 'vigil_http_requests_total{method="POST",route="/api/v2/webhooks",status="409"} 1')
    })
  )

  live(
    "refuses http, private, loopback, link-local and metadata targets",
    () => TestServer.layer(),
    () =>
      Effect.gen(function* () {
        const key = yield* issue({ name: "Acme" })
        for (const [url, reason] of [
          ["http://hooks.example.com/x", /only https/],
          ["https://127.0.0.1:8443/x", /loopback/],
          ["https://localhost/x", /loopback/],
          ["https://10.0.0.7/x", /private/],
          ["https://192.168.1.20/x", /private/],
          ["https://169.254.169.254/latest/meta-data", /link-local/],
          ["https://[::1]/x", /loopback/],
          ["https://[fd00:ec2::254]/x", /metadata|unique-local/],
          ["https://100.64.1.1/x", /carrier-grade/],
          ["not a url", /valid absolute URL/]
        ] as const) {
          const r = yield* register(key, url)
          assert.strictEqual(r.status, 400, url)
          assert.deepStrictEqual([r.json.success, r.json.error], [false, "Invalid webhook URL provided"], url)
          assert.match(r.json.details.reason, reason, url)
        }
        assert.strictEqual((yield* call("GET", "/api/v2/webhooks", { headers: { "x-api-key": key } })).json.count, 0)
      })
  )

  live(
    "answers a missing or non-string url, or a body that is not JSON, with spec §7's invalid-URL failure",
    () => TestServer.layer(),
    () =>
      Effect.gen(function* () {
        const key = yield* issue({ name: "Acme" })
        const headers = { "x-api-key": key, "content-type": "application/json" }
        for (const [body, reason] of [
          ["{}", /^url: required$/],
          ['{"url":5}', /^url: Expected string/],
          ['{"url":null}', /^url: Expected string/],
          ["[]", /^must be a JSON object$/],
          ["{not json", /^malformed JSON$/],
          ["", /./]
        ] as const) {
          const r = yield* call("POST", "/api/v2/webhooks", { headers, body })
          assert.strictEqual(r.status, 400, body)
          const { timestamp, ...rest } = r.json
          assert.deepStrictEqual(Object.keys(rest).sort(), ["details", "error", "success"], body)
          assert.deepStrictEqual([rest.success, rest.error], [false, "Invalid webhook URL provided"], body)
          assert.match(rest.details.reason, reason, body)
          assert.isString(timestamp)
        }
        assert.strictEqual((yield* call("GET", "/api/v2/webhooks", { headers: { "x-api-key": key } })).json.count, 0)
      })
  )

  it.live("refuses a private target at delivery time too, whatever registration saw", () =>
    Effect.gen(function* () {
      const r = yield* receiver()
      const transport = yield* WebhookTransport.WebhookTransport
      for (const url of [r.url("/x"), `https://localhost:${r.port}/x`]) {
        const outcome = yield* transport.send({ url, headers: {}, body: "{}", timeoutMillis: 2_000 })
        assert.strictEqual(outcome._tag, "Retry", url)
        assert.match(outcome.detail, /^Blocked: /, url)
      }
    }).pipe(Effect.provide(HttpsWebhookTransport.layer({ allowHosts: [], ca: certs.ca })))
  )
})

describe("asynchronous intelligence", () => {
  live("delivers the v2 result, signed, to every webhook of the key, and counts it", trusting, () =>
    Effect.gen(function* () {
      yield* ingest("test-sanctions", "sanctions", [LAZARUS], "2022-04-14")
      const r = yield* receiver()
      const key = yield* issue({ name: "Acme Exchange" })
      const secrets = new Map<string, string>()
      for (const path of ["/a", "/b"]) {
        const w = (yield* register(key, r.url(path))).json.webhook
        secrets.set(w.id, w.secret)
      }
      const accepted = yield* asyncIntel(key, LAZARUS)
      assert.strictEqual(accepted.status, 202)
      decodes(Schemas.AsyncAccepted, accepted.json)
      assert.match(accepted.json.correlation_id, /^req_/)
      yield* wait(r, (got) => got.length >= 2)
      const sync = (yield* call("GET", `/api/v2/intel?address=${LAZARUS}`, { headers: { "x-api-key": key } })).json
      const described = compileWebhooks((yield* call("GET", "/openapi.json")).json)
      for (const got of r.received) {
        assert.deepStrictEqual(described("intelligence", got.headers, got.body), [], "as /openapi.json's webhooks say")
        const body = JSON.parse(got.body)
        assert.deepStrictEqual(Object.keys(body).sort(), ["correlation_id", "data", "timestamp", "webhook_id"])
        assert.strictEqual(body.correlation_id, accepted.json.correlation_id)
        assert.isTrue(secrets.has(body.webhook_id))
        assert.deepStrictEqual(Object.keys(body.data).sort(), [
          "data",
          "message",
          "processing_time_ms",
          "success",
          "timestamp",
          "webhook_delivery"
        ])
        assert.deepStrictEqual([body.data.success, body.data.webhook_delivery], [true, true])
        assert.deepStrictEqual(body.data.data, sync.data, "the same v2 result as the synchronous route")
        assert.strictEqual(got.headers["content-type"], "application/json")
        const id = String(got.headers["webhook-id"])
        assert.match(id, /^msg_/)
        const verified = WebhookSigning.verify(
          secrets.get(body.webhook_id)!,
          {
            id,
            timestamp: String(got.headers["webhook-timestamp"]),
            signature: String(got.headers["webhook-signature"])
          },
          got.body,
          Math.floor(Date.now() / 1000)
        )
        assert.isTrue(verified, "Standard Webhooks signature verifies with the webhook's secret")
      }
      const s = yield* statsUntil(key, (s) => s.totalDeliveries === 2)
      assert.strictEqual(s.totalDeliveries, 2)
      assert.isTrue(s.webhooks.every((w: any) => w.deliveryCount === 1 && typeof w.lastDelivery === "string"))
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.json.usage.dailyUsed, 2, "the async request and the sync one")
    })
  )

  live("answers 400 at once for an invalid address and 409 without webhooks, queueing nothing", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver()
      const key = yield* issue({ name: "Acme" })
      const none = yield* asyncIntel(key, CLEAN)
      assert.strictEqual(none.status, 409)
      assert.strictEqual(none.json.error, "No active webhooks registered for this client")
      yield* register(key, r.url("/a"))
      const bad = yield* asyncIntel(key, CLEAN.replace("0x", "0y"))
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.json.details.field, "address")
      const s = (yield* stats(key)).json.stats.webhooks[0]
      assert.deepStrictEqual([s.pending, s.failed, s.deliveryCount], [0, 0, 0])
      assert.lengthOf(r.received, 0)
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.json.usage.dailyUsed, 0, "refused requests are not charged")
    })
  )

  live("retries a failing receiver with the same delivery id until it answers 2xx", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver((n) => (n < 2 ? 503 : 204))
      const key = yield* issue({ name: "Acme" })
      yield* register(key, r.url("/flaky"))
      yield* asyncIntel(key, CLEAN)
      yield* wait(r, (got) => got.length >= 3)
      assert.strictEqual(
        new Set(r.received.map((g) => g.headers["webhook-id"])).size,
        1,
        "one delivery, three attempts"
      )
      const s = (yield* statsUntil(key, (s) => s.webhooks[0].pending === 0)).webhooks[0]
      assert.deepStrictEqual([s.deliveryCount, s.pending, s.failed], [1, 0, 0])
    })
  )

  live("dead-letters after the last attempt and shows it in stats", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver(() => 500)
      const key = yield* issue({ name: "Acme" })
      yield* register(key, r.url("/down"))
      yield* asyncIntel(key, CLEAN)
      yield* wait(r, (got) => got.length >= 4)
      // Once dead-lettered, the delivery is out of the outbox: no attempt can follow.
      const s = (yield* statsUntil(key, (s) => s.webhooks[0].failed === 1)).webhooks[0]
      assert.deepStrictEqual([s.deliveryCount, s.pending, s.failed], [0, 0, 1])
      assert.lengthOf(r.received, 4, "1 attempt + 3 retries, then no more")
    })
  )

  live("disables a webhook that answers 410 Gone", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver(() => 410)
      const key = yield* issue({ name: "Acme" })
      yield* register(key, r.url("/gone"))
      yield* asyncIntel(key, CLEAN)
      yield* wait(r, (got) => got.length >= 1)
      const list = yield* until(
        Effect.map(call("GET", "/api/v2/webhooks", { headers: { "x-api-key": key } }), (r) => r.json),
        (l) => l.webhooks[0].disabled === true
      )
      assert.isTrue(list.webhooks[0].disabled)
      assert.strictEqual((yield* asyncIntel(key, CLEAN)).status, 409, "nothing active to deliver to")
      assert.lengthOf(r.received, 1)
    })
  )

  live("parks the pending deliveries of a revoked key with the reason, sending them no more", trusting, () =>
    Effect.gen(function* () {
      // The first attempt hangs (past the 800 ms timeout), so the delivery is pending when the key is revoked.
      const r = yield* receiver((n, path) => (path === "/kept" ? 200 : n === 0 ? "hang" : 200))
      const key = yield* issue({ name: "Leaving" })
      const other = yield* issue({ name: "Staying" })
      yield* register(key, r.url("/parked"))
      yield* register(other, r.url("/kept"))
      yield* asyncIntel(key, CLEAN)
      yield* wait(r, (got) => got.some((g) => g.path === "/parked"))
      const id = /^vgl_([^_]+)_/.exec(key)![1]!
      yield* Effect.flatMap(Effect.service(ApiKeys.ApiKeys), (keys) => keys.revoke(id))
      const store = { ...(yield* WebhookStore.WebhookStore), ...(yield* WebhookStore.Destinations) }
      const parked = yield* until(Effect.orDie(store.stats(id)), (s) => s[0]?.failed === 1)
      assert.deepStrictEqual([parked[0]!.pending, parked[0]!.failed, parked[0]!.deliveryCount], [0, 1, 0])
      assert.match(parked[0]!.lastError ?? "", /^not sent: its API key \S+ was revoked at \d{4}-/)
      assert.lengthOf(
        r.received.filter((g) => g.path === "/parked"),
        1,
        "the hung attempt, and none after the revocation"
      )
      // Another key's deliveries go on.
      yield* asyncIntel(other, CLEAN)
      yield* wait(r, (got) => got.some((g) => g.path === "/kept" && g.status === 200))
    })
  )

  live("keeps delivering to other keys while one receiver hangs", trusting, () =>
    Effect.gen(function* () {
      const r = yield* receiver((_, path) => (path === "/slow" ? "hang" : 200))
      const slow = yield* issue({ name: "Slow" })
      const quick = yield* issue({ name: "Quick" })
      yield* register(slow, r.url("/slow"))
      yield* register(quick, r.url("/quick"))
      for (let i = 0; i < 5; i++) yield* asyncIntel(slow, CLEAN)
      const accepted = yield* asyncIntel(quick, CLEAN)
      assert.strictEqual(accepted.status, 202, "the API answers while deliveries hang")
      yield* wait(r, (got) => got.some((g) => g.path === "/quick"))
      const slowStats = (yield* stats(slow)).json.stats.webhooks[0]
      assert.strictEqual(slowStats.deliveryCount, 0, "the slow receiver has delivered nothing yet")
    })
  )
})
