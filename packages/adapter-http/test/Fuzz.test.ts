/** Property: no request, however malformed, gets a 5xx from the real server; every error body is JSON that says what is wrong. */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"

const addresses = [
  "0x098B716B8Aaf21512996dC57EB0615e2383E2f96",
  "0x098b716b8aaf21512996dc57eb0615e2383e2f96",
  "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH",
  "EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB",
  "DD4KSSuBJqcjuTcvUg1CgUKeurPUFeEZkE",
  "11111111111111111111111111111111"
]

const ascii = (maxLength: number) =>
  fc.string({ unit: "binary-ascii", maxLength }).map((s) => s.replace(/[^\x20-\x7e]/g, ""))

const anything = fc.oneof(fc.jsonValue({ maxDepth: 3 }), ascii(40), fc.constantFrom(...addresses))

const address = fc.oneof(fc.constantFrom(...addresses), fc.string({ maxLength: 140 }), anything)

const options = fc.dictionary(
  fc.constantFrom("include_details", "chain", "enable_agentic", "batch_size", "other"),
  fc.oneof(
    anything,
    fc.constantFrom("auto", "ethereum", "bitcoin", "ton"),
    fc.integer({ min: -5, max: 30 }),
    fc.boolean()
  )
)

/** URLs that need no name resolution (the test machine may have no DNS), valid or not. */
const url = fc.oneof(
  fc.constantFrom("http://hooks.example/x", "https://127.0.0.1/x", "https://10.1.2.3/", "https://[::1]/", "not a url"),
  anything
)

const body = fc.oneof(
  fc.record({ url }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc.record({ address, options }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc
    .record({ addresses: fc.array(address, { maxLength: 30 }), options }, { requiredKeys: [] })
    .map((v) => JSON.stringify(v)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constant("")
)

const contentType = fc.oneof(
  fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded"
  ),
  ascii(30)
)

const route = fc.oneof(
  fc.constantFrom(
    ["POST", "/api/v3/intel"],
    ["POST", "/api/v3/intel/batch"],
    ["GET", "/api/v2/intel"],
    ["GET", "/api/v2/status"],
    ["GET", "/health"],
    ["GET", "/metrics"],
    ["PUT", "/api/v3/intel"],
    ["DELETE", "/api/v2/intel"],
    ["POST", "/api/v2/webhooks"],
    ["GET", "/api/v2/webhooks"],
    ["GET", "/api/v2/webhooks/stats"],
    ["DELETE", "/api/v2/webhooks/wh_1_abcdefghi"],
    ["POST", "/api/v2/intel/webhook"]
  ),
  fc.tuple(
    fc.constantFrom("GET", "POST", "PATCH"),
    ascii(30).map((p) => `/${encodeURIComponent(p)}`)
  )
)

describe("fuzzing the routes", () => {
  it.live(
    "never answers 5xx, and every error is JSON naming the error",
    () =>
      Effect.gen(function* () {
        const key = yield* TestServer.issue({ name: "Fuzz", qps: 1_000_000, daily: 1_000_000, monthly: 1_000_000 })
        const url = yield* TestServer.baseUrl
        const credential = fc.oneof(fc.constant(key), ascii(60), fc.constant(`${key}x`), fc.constant(""))
        const request = fc.record({
          route,
          query: fc.option(address.map((a) => (typeof a === "string" ? a : JSON.stringify(a)))),
          authorization: fc.option(
            fc.oneof(
              credential.map((c) => `Bearer ${c}`),
              ascii(60)
            )
          ),
          apiKey: fc.option(credential),
          contentType: fc.option(contentType),
          body
        })
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(request, async (r) => {
              const [method, path] = r.route as readonly [string, string]
              const headers: Record<string, string> = {}
              if (r.authorization !== null) headers["authorization"] = r.authorization
              if (r.apiKey !== null) headers["x-api-key"] = r.apiKey
              if (r.contentType !== null) headers["content-type"] = r.contentType
              const query = r.query === null ? "" : `?address=${encodeURIComponent(r.query)}`
              const response = await fetch(`${url}${path}${query}`, {
                method,
                headers,
                ...(method === "GET" ? {} : { body: r.body })
              })
              const text = await response.text()
              assert.isBelow(
                response.status,
                500,
                `${method} ${path}${query} ${JSON.stringify(headers)} ${r.body} → ${text}`
              )
              if (response.status >= 400) {
                const parsed = JSON.parse(text)
                assert.isString(parsed.error, text)
                // Webhook operations answer the spec's `{success:false, error, timestamp}`; all others carry a message.
                if (parsed.success !== false || parsed.message !== undefined) assert.isString(parsed.message, text)
              }
            }),
            { numRuns: 400 }
          )
        )
      }).pipe(Effect.provide(TestServer.layer())),
    60_000
  )
})
