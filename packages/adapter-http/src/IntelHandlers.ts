/** Handlers of the intelligence routes: v3 single and batch, v2 intel and v2 status. */
import { randomBytes } from "node:crypto"
import { ApiKeys, type ApiKeyStore, Chain, Quota, ResultCache, Screening, V2 } from "@vigil/core"
import { Clock, DateTime, Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as Responses from "./Responses.ts"
import type * as Schemas from "./Schemas.ts"

/** How long results are kept: v3 results scoring 60 or more for 10 minutes (spec §4.2), v2 results for 24 hours (§4.3). */
export const lifetimes = { v3Millis: 10 * 60_000, v3MinScore: 60, v2Millis: 24 * 3_600_000 } as const

/** What the intelligence handlers need. */
export type Requirements = ApiKeys.ApiKeys | Quota.Quota | Screening.Screening | ResultCache.ResultCache | HttpMetrics

/** `req_<base36 ms>_<12 hex>`: unique enough to find a request in logs, sortable by time. */
export const correlationId = (now: number) => `req_${now.toString(36)}_${randomBytes(6).toString("hex")}`

/** Charges a key `cost` addresses, or gives the 429 (counted in the metrics) or 503 to answer instead. */
export const charging = Effect.gen(function* () {
  const quota = yield* Quota.Quota
  const metrics = yield* HttpMetrics
  return (flavour: Responses.Flavour, client: ApiKeyStore.ApiKeyRecord, cost: number) =>
    quota.charge(client, cost).pipe(
      Effect.map((decision): Quota.Decision | HttpServerResponse.HttpServerResponse => {
        if (decision.granted) return decision
        metrics.quotaRejected(decision.window.scope)
        return Responses.tooManyRequests(flavour, decision, cost)
      }),
      Effect.catchTag("StoreError", (e) => Effect.succeed(Responses.unavailable(flavour, e)))
    )
})

/** The UTC date (`YYYY-MM-DD`) of an epoch-ms instant; the day's text is kept until the day ends. */
const isoDay = (() => {
  let start = 0
  let end = 0
  let text = ""
  return (ms: number) => {
    if (ms < start || ms >= end) {
      start = Math.floor(ms / 86_400_000) * 86_400_000
      end = start + 86_400_000
      text = new Date(start).toISOString().slice(0, 10)
    }
    return text
  }
})()

const latencyHole = '"latency_ms":-0.5'
const timestampHole = '"timestamp":"\\u0000"'

/**
 * A cached result serialised once, around the two fields each answer refreshes (`latency_ms` and `timestamp`),
 * or null when the holes cannot be found (then the result is serialised whole every time).
 */
const templates = new WeakMap<Screening.Result, readonly [string, string, string] | null>()

const templateOf = (result: Screening.Result) => {
  let template = templates.get(result)
  if (template === undefined) {
    const json = JSON.stringify({ ...result, metadata: { ...result.metadata, latency_ms: -0.5, timestamp: "\u0000" } })
    const latency = json.indexOf(latencyHole)
    const timestamp = json.indexOf(timestampHole)
    template =
      latency === -1 || timestamp < latency || json.indexOf(latencyHole, latency + 1) !== -1
        ? null
        : [
            json.slice(0, latency + latencyHole.length - 4),
            json.slice(latency + latencyHole.length, timestamp + timestampHole.length - 8),
            json.slice(timestamp + timestampHole.length)
          ]
    templates.set(result, template)
  }
  return template
}

/** The v3 JSON of a result with a fresh latency and timestamp: `JSON.stringify` of it, without redoing the rest. */
const stampedJson = (result: Screening.Result, latency: number, timestamp: string) => {
  const template = templateOf(result)
  return template === null
    ? JSON.stringify({ ...result, metadata: { ...result.metadata, latency_ms: latency, timestamp } })
    : `${template[0]}${latency}${template[1]}${JSON.stringify(timestamp)}${template[2]}`
}

/** The v2 `data` JSON of a result (it holds no time), kept as long as the result is. */
const v2Data = new WeakMap<Screening.Result, string>()
const v2DataJson = (result: Screening.Result) => {
  let json = v2Data.get(result)
  if (json === undefined) {
    json = JSON.stringify(V2.project(result))
    v2Data.set(result, json)
  }
  return json
}

/** A screening served through the cache: the result, and when the request started and was answered. */
interface Screened extends ResultCache.Cached<Screening.Result> {
  readonly started: number
  readonly answeredAt: number
}

/** The result with its latency and timestamp as answered (a cached one is answered anew). */
const restamped = (s: Screened): Screening.Result =>
  s.hit
    ? {
        ...s.value,
        metadata: {
          ...s.value.metadata,
          latency_ms: s.answeredAt - s.started,
          timestamp: new Date(s.answeredAt).toISOString()
        }
      }
    : s.value

const intelServices = Effect.gen(function* () {
  const screening = yield* Screening.Screening
  const cache = yield* ResultCache.ResultCache
  const charge = yield* charging

  /** Screens through the cache; a result from the cache is answered with its own latency and timestamp. */
  const screen = (
    flavour: Responses.Flavour,
    address: string,
    chain: Chain.Network | "auto",
    detected: Chain.Valid,
    includeDetails: boolean
  ): Effect.Effect<Screened, Screening.InvalidAddress> =>
    Effect.flatMap(Clock.currentTimeMillis, (started) => {
      const today = isoDay(started)
      return cache
        .through(
          `${flavour}\u0000${address}\u0000${chain}\u0000${includeDetails ? 1 : 0}\u0000${today}`,
          screening.screen(address, { chain, detected, includeDetails, asOf: today }),
          (r) =>
            !r.metadata.is_complete
              ? 0
              : flavour === "v2"
                ? lifetimes.v2Millis
                : r.score >= lifetimes.v3MinScore
                  ? lifetimes.v3Millis
                  : 0
        )
        .pipe(
          Effect.flatMap((cached) =>
            Effect.map(Clock.currentTimeMillis, (answeredAt): Screened => ({
              value: cached.value,
              hit: cached.hit,
              storedAt: cached.storedAt,
              started,
              answeredAt
            }))
          )
        )
    })

  const cacheHeaders = (screened: Screened, headers: Record<string, string>): Record<string, string> => {
    headers["x-cache"] = screened.hit ? "HIT" : "MISS"
    if (screened.hit) headers["age"] = String(Math.floor((screened.answeredAt - screened.storedAt) / 1000))
    return headers
  }

  return { charge, screen, cacheHeaders }
})

/**
 * The intelligence routes after authentication and decoding (v3 single, v2, and the batch's parts): shared by
 * the HttpApi handlers and the hot lane.
 */
export const operations = Effect.gen(function* () {
  const { charge, screen, cacheHeaders } = yield* intelServices

  // Pipelines rather than generators: they run on every request.
  type Answer = Responses.Reply | HttpServerResponse.HttpServerResponse

  /** Checks the address, charges one unit, screens through the cache and answers `body` of the screening. */
  const single = (
    flavour: Responses.Flavour,
    client: ApiKeyStore.ApiKeyRecord,
    address: string,
    chain: Chain.Network | "auto",
    includeDetails: boolean,
    body: (s: Screened) => string
  ): Effect.Effect<Answer> => {
    const detected = Chain.detect(address, chain)
    if (!detected.valid) return Effect.succeed(Responses.validation(flavour, "address", detected.reason))
    return Effect.flatMap(charge(flavour, client, 1), (decision): Effect.Effect<Answer, Screening.InvalidAddress> => {
      if (HttpServerResponse.isHttpServerResponse(decision)) return Effect.succeed(decision)
      return Effect.map(screen(flavour, address, chain, detected, includeDetails), (s) =>
        Responses.replyJson(200, body(s), cacheHeaders(s, Responses.rateHeaders(decision)))
      )
    }).pipe(
      Effect.catchTag("InvalidAddress", (e) => Effect.succeed(Responses.validation(flavour, "address", e.message)))
    )
  }

  const v3Intel = (payload: typeof Schemas.V3Request.Type, client: ApiKeyStore.ApiKeyRecord) =>
    single(
      "v3",
      client,
      payload.address,
      payload.options?.chain ?? "auto",
      payload.options?.include_details === true,
      (s) =>
        s.hit
          ? stampedJson(s.value, s.answeredAt - s.started, new Date(s.answeredAt).toISOString())
          : JSON.stringify(s.value)
    )

  const v2Intel = (address: string, client: ApiKeyStore.ApiKeyRecord) =>
    single(
      "v2",
      client,
      address,
      "auto",
      false,
      // JSON.stringify({ success, data, message, timestamp, client }), with `data` serialised once per result.
      (s) =>
        `{"success":true,"data":${v2DataJson(s.value)},"message":"Address intelligence processed successfully","timestamp":${JSON.stringify(new Date(s.answeredAt).toISOString())},"client":${JSON.stringify(client.name)}}`
    )

  return { charge, screen, v3Intel, v2Intel }
})

/** The v3 group (bearer). */
export const v3Layer: Layer.Layer<HttpApiGroup.Service<"vigil", "v3">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "v3",
  Effect.fnUntraced(function* (handlers) {
    const { charge, screen, v3Intel } = yield* operations
    return handlers
      .handle("intel", ({ payload }) =>
        Effect.flatMap(Effect.service(CurrentClient), (client) =>
          Effect.map(v3Intel(payload, client), Responses.toResponse)
        )
      )
      .handle("batch", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const started = yield* Clock.currentTimeMillis
          const chain = payload.options?.chain ?? "auto"
          const includeDetails = payload.options?.include_details === true
          const decision = yield* charge("v3", client, payload.addresses.length)
          if (HttpServerResponse.isHttpServerResponse(decision)) return decision
          const results = yield* Effect.forEach(
            payload.addresses,
            (address) => {
              const detected = Chain.detect(address, chain)
              if (!detected.valid) {
                return Effect.succeed({
                  address,
                  error: { code: "invalid_address" as const, message: detected.reason }
                })
              }
              return screen("v3", address, chain, detected, includeDetails).pipe(
                Effect.map(restamped),
                Effect.catchTag("InvalidAddress", (e) =>
                  Effect.succeed({ address, error: { code: "invalid_address" as const, message: e.message } })
                )
              )
            },
            { concurrency: payload.options?.batch_size ?? 3 }
          )
          const summary = {
            total: results.length,
            successful: 0,
            failed: 0,
            critical: 0,
            high: 0,
            medium: 0,
            low: 0,
            minimal: 0
          }
          for (const r of results) {
            if ("error" in r) summary.failed++
            else {
              summary.successful++
              summary[r.risk_level]++
            }
          }
          const finished = yield* Clock.currentTimeMillis
          return Responses.json(
            200,
            {
              results,
              summary,
              metadata: {
                version: "v3",
                latency_ms: finished - started,
                correlation_id: correlationId(finished),
                timestamp: DateTime.formatIso(DateTime.makeUnsafe(finished))
              }
            },
            Responses.rateHeaders(decision)
          )
        })
      )
  })
).pipe(Layer.provide(Auth.bearerLayer))

/** The v2 intel group (x-api-key). */
export const v2Layer: Layer.Layer<HttpApiGroup.Service<"vigil", "v2">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "v2",
  Effect.fnUntraced(function* (handlers) {
    const { v2Intel } = yield* operations
    return handlers.handle("intel", ({ query }) =>
      Effect.flatMap(Effect.service(CurrentClient), (client) =>
        Effect.map(v2Intel(query.address, client), Responses.toResponse)
      )
    )
  })
).pipe(Layer.provide(Auth.apiKeyLayer))

/** The v2 status group: reads the key itself and always answers 200 with its state. */
export const statusLayer: Layer.Layer<
  HttpApiGroup.Service<"vigil", "status">,
  never,
  Requirements
> = HttpApiBuilder.group(
  VigilApi,
  "status",
  Effect.fnUntraced(function* (handlers) {
    const keys = yield* ApiKeys.ApiKeys
    const quota = yield* Quota.Quota
    return handlers.handle("status", () =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const auth = yield* keys.authenticate(Auth.presentedKey(request.headers, "apiKey"))
        const timestamp = DateTime.formatIso(DateTime.makeUnsafe(yield* Clock.currentTimeMillis))
        if (auth.status === "invalid") {
          return Responses.json(200, {
            status: "invalid",
            client: { name: "unknown", qps: 0, dailyLimit: 0, monthlyLimit: 0 },
            usage: { dailyUsed: 0, monthlyUsed: 0, recentRequests: 0, dailyRemaining: 0, monthlyRemaining: 0 },
            timestamp
          })
        }
        const key = auth.key
        const usage = yield* quota.usage(key)
        return Responses.json(200, {
          status: auth.status,
          client: { name: key.name, qps: key.qps, dailyLimit: key.daily, monthlyLimit: key.monthly },
          usage,
          timestamp
        })
      }).pipe(Effect.catchTag("StoreError", (e) => Effect.succeed(Responses.unavailable("v2", e))))
    )
  })
)
