/** The HTTPS transport on its own, against a real HTTPS receiver on loopback: what each answer means for a delivery. */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { HttpsWebhookTransport } from "@vigil/adapter-delivery"
import { WebhookTransport } from "@vigil/core"
import { Effect } from "effect"
import { createServer } from "node:net"
import * as Receiver from "@vigil/core-test/Receiver.ts"

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

const receiver = (behaviour?: Receiver.Behaviour) =>
  Effect.acquireRelease(
    Effect.promise(() => Receiver.start(certs, behaviour)),
    (r) => Effect.promise(() => r.close())
  )

const send = (url: string, headers: Record<string, string> = {}, body = "{}") =>
  Effect.flatMap(WebhookTransport.WebhookTransport, (t) => t.send({ url, headers, body, timeoutMillis: 5_000 }))

/** A loopback port nothing listens on (taken, then released). */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((done) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port
        s.close(() => done(port))
      })
    })
)

describe("HttpsWebhookTransport", () => {
  it.live(
    "sends the body and headers to the URL's path and query, and reads each status as the delivery's outcome",
    () =>
      Effect.gen(function* () {
        const statuses: Record<string, number> = { "/ok": 204, "/gone": 410, "/moved": 302, "/busy": 503 }
        const r = yield* receiver((_, path) => statuses[path.split("?")[0]!] ?? 200)
        const body = JSON.stringify({ event: "é", n: 1 })
        const sent = yield* send(r.url("/ok?a=1&b=%20"), { "webhook-id": "msg_1" }, body)
        assert.deepStrictEqual(sent, { _tag: "Delivered", detail: "HTTP 204" })
        const got = r.received[0]!
        assert.strictEqual(got.path, "/ok?a=1&b=%20")
        assert.strictEqual(got.body, body)
        assert.strictEqual(got.headers["webhook-id"], "msg_1")
        assert.strictEqual(got.headers["content-length"], String(Buffer.byteLength(body)))
        assert.deepStrictEqual(yield* send(r.url("/gone")), { _tag: "Gone", detail: "HTTP 410" })
        // A redirect is not followed: the receiver sees one request, and the delivery is tried again later.
        assert.deepStrictEqual(yield* send(r.url("/moved")), { _tag: "Retry", detail: "HTTP 302" })
        assert.deepStrictEqual(yield* send(r.url("/busy")), { _tag: "Retry", detail: "HTTP 503" })
        assert.deepStrictEqual(
          r.received.map((m) => m.path),
          ["/ok?a=1&b=%20", "/gone", "/moved", "/busy"]
        )
        // The same URL again (its parts are kept): still sent where it says.
        assert.strictEqual((yield* send(r.url("/ok?a=1&b=%20")))._tag, "Delivered")
        assert.strictEqual(r.received.length, 5)
      }).pipe(Effect.provide(HttpsWebhookTransport.layer({ allowHosts: ["127.0.0.1"], ca: certs.ca })))
  )

  it.live("retries with the reason when the certificate is not trusted or nothing listens", () =>
    Effect.gen(function* () {
      const r = yield* receiver()
      const untrusted = yield* send(r.url("/x"))
      assert.strictEqual(untrusted._tag, "Retry")
      assert.match(untrusted.detail, /^Tls: /)
      assert.lengthOf(r.received, 0)
      const refused = yield* send(`https://127.0.0.1:${yield* closedPort}/x`)
      assert.strictEqual(refused._tag, "Retry")
      assert.match(refused.detail, /^Network: ECONNREFUSED/)
    }).pipe(Effect.provide(HttpsWebhookTransport.layer({ allowHosts: ["127.0.0.1"] })))
  )

  it.live("refuses what the guard refuses before connecting, the same URL every time", () =>
    Effect.gen(function* () {
      const r = yield* receiver()
      for (const url of [r.url("/x"), r.url("/x"), `http://example.com/x`, `https://user:pw@example.com/x`]) {
        const outcome = yield* send(url)
        assert.strictEqual(outcome._tag, "Retry", url)
        assert.match(outcome.detail, /^Blocked: /, url)
      }
      assert.lengthOf(r.received, 0)
    }).pipe(Effect.provide(HttpsWebhookTransport.layer({ allowHosts: [], ca: certs.ca })))
  )
})
