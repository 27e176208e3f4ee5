/**
 * The hot routes answer exactly as the HttpApi router does. Two real servers share one SQLite file, one with
 * the lane in front of the router and one without; every generated request goes to both, and the answers
 * must agree in status, headers and body, except for what is meant to differ between two answers (the
 * time, the latency, what is left of the quota they share, the body length that follows from those).
 */
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { HotRoutes, HttpMetrics, VigilServer } from "@vigil/adapter-http"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { ApiKeys, ApiKeyStore, Engine } from "@vigil/core"
import { Outbound } from "@vigil/engine"
import { Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { assertConforms } from "./OpenApiConformance.ts"
import * as TestServer from "./TestServer.ts"

const SANCTIONED = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
const addresses = [
  SANCTIONED,
  CLEAN,
  SANCTIONED.toLowerCase(),
  "0x098B716B8Aaf21512996dC57EB0615e2383E2f97",
  "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH",
  "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
  "EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB",
  "11111111111111111111111111111111",
  "short",
  "x".repeat(129)
]

/** A key that expired long ago, made by hand so its plain text is known. */
const expiredKey = `vgl_00000000000000ee_${"1".repeat(44)}`

interface Sent {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  /** Send the body with chunked transfer encoding instead of a content-length. */
  readonly chunked?: boolean
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
}

const send = (base: URL, sent: Sent) =>
  Effect.promise(
    () =>
      new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(
          {
            host: base.hostname,
            port: base.port,
            method: sent.method,
            path: sent.path,
            headers:
              sent.body === undefined || sent.chunked
                ? sent.headers
                : { ...sent.headers, "content-length": String(Buffer.byteLength(sent.body)) }
          },
          (res) => {
            let text = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => (text += chunk))
            res.on("end", () => {
              const answer = { status: res.statusCode ?? 0, headers: res.headers, text }
              const headers = new Map(
                Object.entries(res.headers).map(([name, value]) => [
                  name,
                  Array.isArray(value) ? value.join(", ") : (value ?? "")
                ])
              )
              assertConforms(base.origin, sent.method, sent.path, answer.status, headers, text).then(
                () => resolve(answer),
                reject
              )
            })
          }
        )
        req.on("error", reject)
        if (sent.body !== undefined && sent.chunked) {
          req.write(sent.body.slice(0, 3))
          req.end(sent.body.slice(3))
        } else req.end(sent.body)
      })
  )

/** Headers whose values may differ between two answers to the same request. */
const volatileHeaders = new Set([
  "date",
  "connection",
  "keep-alive",
  "content-length",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "age"
])

/** What must agree: status, the stable headers (and which volatile ones are present), the body without times. */
const comparable = (answer: Answer) => {
  let body: unknown = answer.text
  try {
    const json = JSON.parse(answer.text)
    if (typeof json === "object" && json !== null) {
      delete json.timestamp
      if (typeof json.metadata === "object" && json.metadata !== null) {
        delete json.metadata.timestamp
        delete json.metadata.latency_ms
      }
    }
    body = json
  } catch {
    // not JSON: compared as text
  }
  const headers = Object.fromEntries(
    Object.entries(answer.headers)
      .filter(([name]) => !volatileHeaders.has(name) || name === "age" || name.startsWith("x-ratelimit"))
      .map(([name, value]) => [name, volatileHeaders.has(name) ? "present" : value])
  )
  return { status: answer.status, headers, body }
}

const ascii = (maxLength: number) =>
  fc.string({ unit: "binary-ascii", maxLength }).map((s) => s.replace(/[^\x20-\x7e]/g, ""))

const anything = fc.oneof(fc.jsonValue({ maxDepth: 2 }), ascii(30), fc.constantFrom(...addresses))

const v3Body = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...addresses).map((address) => JSON.stringify({ address })) },
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          address: fc.oneof(fc.constantFrom(...addresses), anything),
          options: fc.dictionary(
            fc.constantFrom("include_details", "chain", "enable_agentic", "other"),
            fc.oneof(anything, fc.constantFrom("auto", "ethereum", "bitcoin", "tron"), fc.boolean())
          )
        },
        { requiredKeys: [] }
      )
      .map((v) => JSON.stringify(v))
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "{",
      "null",
      "[]",
      "42",
      `\uFEFF{"address":"${CLEAN}"}`,
      `{"address":"${CLEAN}","address":"${SANCTIONED}"}`,
      `  {"address" : "${SANCTIONED}" }  `
    )
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) }
)

const auth = (key: string, revoked: string) =>
  fc.constantFrom<Record<string, string>>(
    {},
    { authorization: `Bearer ${key}` },
    { "x-api-key": key },
    { authorization: `bearer   ${key}  ` },
    { authorization: `Bearer\t${key}` },
    { authorization: `Bearer ${expiredKey}` },
    { authorization: `Bearer ${revoked}` },
    { authorization: "Bearer nonsense" },
    { authorization: `Basic ${key}` },
    { "x-api-key": "wrong", authorization: `Bearer ${key}` },
    { "x-api-key": ` ${key} ` }
  )

const v3Request = (key: string, revoked: string) =>
  fc
    .record({
      headers: auth(key, revoked),
      contentType: fc.constantFrom<string | undefined>(
        "application/json",
        "application/json",
        undefined,
        "Application/JSON; charset=utf-8",
        "text/plain"
      ),
      body: v3Body,
      chunked: fc.constantFrom(false, false, false, false, true),
      path: fc.constantFrom("/api/v3/intel", "/api/v3/intel", "/api/v3/intel", "/api/v3/intel?debug=1")
    })
    .map((r): Sent => ({
      method: "POST",
      path: r.path,
      headers: r.contentType === undefined ? r.headers : { ...r.headers, "content-type": r.contentType },
      body: r.body,
      chunked: r.chunked
    }))

const v2Query = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...addresses).map((a) => `address=${encodeURIComponent(a)}`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      "address=",
      `address=${CLEAN}&address=${SANCTIONED}`,
      `address=${CLEAN}&other=1`,
      `other=1`,
      `address=%20${CLEAN}`,
      `address=${CLEAN}+`,
      `address=${CLEAN}#fragment`,
      `address=%zz`
    )
  },
  { weight: 1, arbitrary: ascii(40).map((q) => `address=${q.replace(/ /g, "+")}`) }
)

const v2Request = (key: string, revoked: string) =>
  fc
    .record({
      headers: auth(key, revoked),
      query: v2Query,
      path: fc.constantFrom("/api/v2/intel", "/api/v2/intel", "/api/v2/intel/")
    })
    .map((r): Sent => ({ method: "GET", path: `${r.path}?${r.query}`, headers: r.headers }))

describe("hot routes", () => {
  it.effect("take plain requests and leave the rest to the router without reading them", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        HttpMetrics.HttpMetrics.layer.pipe(
          Layer.provideMerge(Engine.layer().pipe(Layer.provide(Outbound.layer()))),
          Layer.provideMerge(SqliteAdapter.layer({ filename: ":memory:" }))
        )
      )
      const lane = yield* Effect.provide(HotRoutes.make(1000), context)
      const taken: Array<string> = []
      const server = new HotRoutes.LaneServer(
        (request, response) => {
          const answered = lane(request, response)
          if (answered) taken.push(`${request.method} ${request.url}`)
          return answered
        },
        { headersTimeoutMillis: 10_000, requestTimeoutMillis: 30_000, maxConnections: 1_024 }
      )
      // What the lane declines reaches the server's own listeners, as the router's would.
      server.on("request", (_request, response) => response.writeHead(299).end())
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const { port } = server.address() as { port: number }
      const base = new URL(`http://127.0.0.1:${port}`)
      const json = { "content-type": "application/json" }
      const body = JSON.stringify({ address: CLEAN })
      const cases: ReadonlyArray<[Sent, boolean]> = [
        [{ method: "POST", path: "/api/v3/intel", headers: json, body }, true],
        [{ method: "POST", path: "/api/v3/intel", headers: {}, body }, true],
        [{ method: "GET", path: `/api/v2/intel?address=${CLEAN}`, headers: {} }, true],
        [{ method: "POST", path: "/api/v3/intel", headers: json, body, chunked: true }, false],
        [{ method: "POST", path: "/api/v3/intel", headers: { "content-type": "text/plain" }, body }, false],
        [{ method: "POST", path: "/api/v3/intel", headers: json, body: " ".repeat(1001) }, false],
        [{ method: "POST", path: "/api/v3/intel?x=1", headers: json, body }, false],
        [{ method: "POST", path: "/api/v3/intel/batch", headers: json, body }, false],
        [{ method: "GET", path: `/api/v2/intel?address=${CLEAN}&x=1`, headers: {} }, false],
        [{ method: "GET", path: "/api/v2/intel", headers: {} }, false],
        [{ method: "GET", path: "/api/v2/status", headers: {} }, false]
      ]
      for (const [sent, expected] of cases) {
        const before = taken.length
        const answer = yield* send(base, sent)
        assert.strictEqual(taken.length > before, expected, JSON.stringify(sent))
        assert.strictEqual(answer.status === 299, !expected, JSON.stringify(sent))
      }
      // A client that goes away in the middle of a body it announced leaves the server answering the next one.
      yield* Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            const socket = connect(port, "127.0.0.1", () => {
              // Gone as soon as the partial body is handed to the network.
              socket.write(
                `POST /api/v3/intel HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"addr`,
                () => socket.destroy()
              )
            })
            socket.on("close", () => resolve())
          })
      )
      const after = yield* send(base, cases[0]![0])
      assert.strictEqual(after.status, 401, "the next request is answered (no key: 401)")
    }).pipe(Effect.scoped)
  )

  it.effect(
    "answer every request as the HttpApi router does",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "vigil-hot-"))),
          (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
        )
        const filename = join(dir, "vigil.db")
        const server = (hotRoutes: boolean) =>
          Layer.build(
            VigilServer.layer({ host: "127.0.0.1", port: 0, hotRoutes }).pipe(
              Layer.provideMerge(Engine.layer().pipe(Layer.provide(Outbound.layer()))),
              Layer.provideMerge(SqliteAdapter.layer({ filename }))
            )
          )
        const lane = yield* server(true)
        const router = yield* server(false)
        const urlOf = (context: Context.Context<HttpServer.HttpServer>) =>
          new URL(HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address))

        const { key, revoked } = yield* Effect.gen(function* () {
          // The TestClock reads 1970-01-01: the list is dated that day, so it is in force and not in the future.
          yield* TestServer.ingest("sanctions", "sanctions", [SANCTIONED], "1970-01-01")
          const key = yield* TestServer.issue({ name: "Acme", qps: 1e9, daily: 1e9, monthly: 1e9 })
          const revoked = yield* TestServer.issue({ name: "Gone" })
          const keys = yield* ApiKeys.ApiKeys
          yield* keys.revoke(revoked.slice(4, 20))
          const store = yield* ApiKeyStore.ApiKeyStore
          yield* store.insert({
            id: expiredKey.slice(4, 20),
            name: "Old",
            hash: ApiKeys.hashKey(expiredKey),
            qps: 10,
            daily: 10,
            monthly: 10,
            createdAt: "2019-01-01T00:00:00.000Z",
            expiresAt: "2020-01-01T00:00:00.000Z"
          })
          return { key, revoked }
        }).pipe(Effect.provide(lane))

        const requests = fc.sample(fc.oneof(v3Request(key, revoked), v2Request(key, revoked)), {
          numRuns: 300,
          seed: 20261123
        })
        const statuses = new Set<number>()
        for (const sent of requests) {
          const viaLane = yield* send(urlOf(lane), sent)
          const viaRouter = yield* send(urlOf(router), sent)
          statuses.add(viaLane.status)
          assert.deepStrictEqual(comparable(viaLane), comparable(viaRouter), JSON.stringify(sent))
        }
        assert.includeMembers([...statuses], [200, 400, 401, 415], "the sample reaches successes and each refusal")
      }).pipe(Effect.scoped),
    120_000
  )
})
