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

const intelServices = Effect.gen(function* () {
  const screening = yield* Screening.Screening
  const cache = yield* ResultCache.ResultCache
  const charge = yield* charging

  /** Screens through the cache; a served-from-cache result gets a fresh timestamp and latency. */
  const screen = (
    flavour: Responses.Flavour,
    address: string,
    chain: Chain.Network | "auto",
    detected: Chain.Valid,
    includeDetails: boolean
  ) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const today = DateTime.formatIsoDateUtc(DateTime.makeUnsafe(started))
      const cached = yield* cache.through(
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
      if (!cached.hit) return cached
      const now = yield* Clock.currentTimeMillis
      const value: Screening.Result = {
        ...cached.value,
        metadata: {
          ...cached.value.metadata,
          latency_ms: now - started,
          timestamp: DateTime.formatIso(DateTime.makeUnsafe(now))
        }
      }
      return { ...cached, value }
    })

  const cacheHeaders = (cached: ResultCache.Cached<unknown>, now: number): Record<string, string> => ({
    "x-cache": cached.hit ? "HIT" : "MISS",
    ...(cached.hit ? { age: String(Math.floor((now - cached.storedAt) / 1000)) } : {})
  })

  return { charge, screen, cacheHeaders }
})

/** The v3 group (bearer). */
export const v3Layer: Layer.Layer<HttpApiGroup.Service<"vigil", "v3">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "v3",
  Effect.fnUntraced(function* (handlers) {
    const { charge, screen, cacheHeaders } = yield* intelServices
    return handlers
      .handle("intel", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const chain = payload.options?.chain ?? "auto"
          const detected = Chain.detect(payload.address, chain)
          if (!detected.valid) return Responses.validation("v3", "address", detected.reason)
          const decision = yield* charge("v3", client, 1)
          if (HttpServerResponse.isHttpServerResponse(decision)) return decision
          const cached = yield* screen(
            "v3",
            payload.address,
            chain,
            detected,
            payload.options?.include_details === true
          )
          return Responses.json(200, cached.value, {
            ...Responses.rateHeaders(decision),
            ...cacheHeaders(cached, yield* Clock.currentTimeMillis)
          })
        }).pipe(
          Effect.catchTag("InvalidAddress", (e) => Effect.succeed(Responses.validation("v3", "address", e.message)))
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
                Effect.map((c) => c.value),
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
    const { charge, screen, cacheHeaders } = yield* intelServices
    return handlers.handle("intel", ({ query }) =>
      Effect.gen(function* () {
        const client = yield* CurrentClient
        const detected = Chain.detect(query.address)
        if (!detected.valid) return Responses.validation("v2", "address", detected.reason)
        const decision = yield* charge("v2", client, 1)
        if (HttpServerResponse.isHttpServerResponse(decision)) return decision
        const cached = yield* screen("v2", query.address, "auto", detected, false)
        const now = yield* Clock.currentTimeMillis
        return Responses.json(
          200,
          {
            success: true,
            data: V2.project(cached.value),
            message: "Address intelligence processed successfully",
            timestamp: DateTime.formatIso(DateTime.makeUnsafe(now)),
            client: client.name
          },
          { ...Responses.rateHeaders(decision), ...cacheHeaders(cached, now) }
        )
      }).pipe(
        Effect.catchTag("InvalidAddress", (e) => Effect.succeed(Responses.validation("v2", "address", e.message)))
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
        const auth = yield* keys.authenticate(Auth.presentedKey(request, "apiKey"))
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
