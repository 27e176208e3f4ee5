/**
 * Handlers of the intelligence routes: v3 single and batch, v2 intel and v2 status. The screening policy (cache
 * lifetimes, batches, failed items) is core's `Intelligence`; what is here is authentication, charging and
 * serialisation.
 */
import {
  ApiKeys,
  type ApiKeyStore,
  Chain,
  ChainActivity,
  Exposure,
  Instant,
  Intelligence,
  type IntelResult,
  Quota,
  Status,
  V2
} from "@vigil/core"
import { Clock, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as HttpErrors from "./HttpErrors.ts"
import * as Responses from "./Responses.ts"
import * as Schemas from "./Schemas.ts"

/** What the intelligence handlers need. */
export type Requirements =
  | ApiKeys.ApiKeys
  | Quota.Quota
  | Intelligence.Intelligence
  | ChainActivity.ChainActivity
  | Exposure.Exposure
  | HttpMetrics

/** Charges a key `cost` addresses: the granted decision, or 429 (counted in the metrics) or 503. */
export const charging = Effect.gen(function* () {
  const quota = yield* Quota.Quota
  const metrics = yield* HttpMetrics
  return (
    flavour: Responses.Flavour,
    client: ApiKeyStore.ApiKeyRecord,
    cost: number
  ): Effect.Effect<Quota.Decision, HttpErrors.TooManyRequests | HttpErrors.Unavailable> =>
    quota.charge(client, cost).pipe(
      Effect.mapError(HttpErrors.fromStoreError(flavour)),
      Effect.flatMap((decision) => {
        if (decision.granted) return Effect.succeed(decision)
        metrics.quotaRejected(decision.window.scope)
        return Effect.fail(new HttpErrors.TooManyRequests({ flavour, decision, cost }))
      })
    )
})

const latencyHole = '"latency_ms":-0.5'
const timestampHole = '"timestamp":"\\u0000"'

/**
 * A cached result serialised once, around the two fields each answer refreshes (`latency_ms` and `timestamp`),
 * or null when the holes cannot be found (then the result is serialised whole every time).
 */
const templates = new WeakMap<Intelligence.Screened["result"], readonly [string, string, string] | null>()

const templateOf = (result: Intelligence.Screened["result"]) => {
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
const stampedJson = (result: Intelligence.Screened["result"], latency: number, timestamp: string) => {
  const template = templateOf(result)
  return template === null
    ? JSON.stringify({ ...result, metadata: { ...result.metadata, latency_ms: latency, timestamp } })
    : `${template[0]}${latency}${template[1]}${JSON.stringify(timestamp)}${template[2]}`
}

/** The v2 `data` JSON of a result (it holds no time), kept as long as the result is. */
const v2Data = new WeakMap<Intelligence.Screened["result"], string>()
const v2DataJson = (result: Intelligence.Screened["result"]) => {
  let json = v2Data.get(result)
  if (json === undefined) {
    json = JSON.stringify(V2.project(result, ChainActivity.noNode))
    v2Data.set(result, json)
  }
  return json
}

const intelServices = Effect.gen(function* () {
  const intelligence = yield* Intelligence.Intelligence
  const activity = yield* ChainActivity.ChainActivity
  const exposure = yield* Exposure.Exposure
  const charge = yield* charging

  const cacheHeaders = (screened: Intelligence.Screened, headers: Record<string, string>): Record<string, string> => {
    headers["x-cache"] = screened.hit ? "HIT" : "MISS"
    if (screened.hit) headers["age"] = String(Math.floor((screened.answeredAt - screened.storedAt) / 1000))
    return headers
  }

  return { charge, intelligence, activity, exposure, cacheHeaders }
})

/** Fails with a 400 on `options.as_of` when `asOf` is after today (by the Effect Clock). */
const notAfterToday = (flavour: Responses.Flavour, asOf: string) =>
  Effect.flatMap(Instant.today, (today) =>
    asOf > today
      ? Effect.fail(
          new HttpErrors.BadRequest({ flavour, field: "options.as_of", message: `${asOf} is after today (${today})` })
        )
      : Effect.void
  )

/**
 * The intelligence routes after authentication and decoding (v3 single, v2, and the batch's parts): shared by
 * the HttpApi handlers and the hot lane.
 */
export const operations = Effect.gen(function* () {
  const { charge, intelligence, activity, exposure, cacheHeaders } = yield* intelServices

  // Pipelines rather than generators: they run on every request.

  /** Checks the address, charges one unit, screens through the cache and answers `body` of the screening. */
  const single = (
    flavour: Responses.Flavour,
    client: ApiKeyStore.ApiKeyRecord,
    address: string,
    chain: Chain.Network | "auto",
    includeDetails: boolean,
    asOf: string | undefined,
    agentic: boolean,
    body: (s: Intelligence.Screened) => string,
    /**
     * On-chain evidence read beside the screening (within its own budget): the body of both. Absent: nothing is
     * read and `body` answers.
     */
    evidence?: Effect.Effect<(s: Intelligence.Screened) => string>
  ): Effect.Effect<Responses.Reply, HttpErrors.HttpError> => {
    const detected = Chain.detect(address, chain)
    if (!detected.valid) return Effect.fail(HttpErrors.fromInvalidAddress(flavour)({ message: detected.reason }))
    const options = {
      policy: flavour,
      chain,
      detected,
      includeDetails,
      ...(agentic ? {} : { agentic }),
      ...(asOf === undefined ? {} : { asOf })
    }
    return Effect.flatMap(charge(flavour, client, 1), (decision) =>
      evidence === undefined
        ? Effect.map(intelligence.single(address, options), (s) =>
            Responses.replyJson(200, body(s), cacheHeaders(s, Responses.rateHeaders(decision)))
          )
        : Effect.zipWith(
            intelligence.single(address, options),
            evidence,
            (s, answer) => Responses.replyJson(200, answer(s), cacheHeaders(s, Responses.rateHeaders(decision))),
            { concurrent: true }
          )
    ).pipe(Effect.mapError(HttpErrors.fromDomain(flavour)))
  }

  /**
   * How a v3 result is completed with what the nodes say: on-chain activity when details are asked for (and a node
   * is configured), counterparty exposure when asked for; undefined when nothing is to be read.
   */
  const v3Evidence = (
    address: string,
    options: (typeof Schemas.V3Request.Type)["options"]
  ): Effect.Effect<(r: IntelResult.IntelResult) => IntelResult.IntelResult> | undefined => {
    const chain = options?.chain ?? "auto"
    // Details always say what was checked: with no node, that nothing was (at once, no node is asked).
    const withActivity = options?.include_details === true
    const request = Schemas.exposureRequest(options?.exposure)
    if (!withActivity && request === undefined) return undefined
    const asOf = options?.as_of
    const found = Effect.all(
      [
        withActivity
          ? Effect.map(activity.of(address, chain), (a) => (r: IntelResult.IntelResult) => ChainActivity.annotate(r, a))
          : Effect.succeed((r: IntelResult.IntelResult) => r),
        request !== undefined
          ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.map(
                exposure.of(address, asOf ?? Intelligence.isoDay(now), chain, request),
                (e) => (r: IntelResult.IntelResult) => Exposure.annotate(r, e)
              )
            )
          : Effect.succeed((r: IntelResult.IntelResult) => r)
      ],
      { concurrency: "unbounded" }
    )
    return Effect.map(
      found,
      ([withA, withE]) =>
        (r: IntelResult.IntelResult) =>
          withE(withA(r))
    )
  }

  /** A result as answered: a cached one restamped with this answer's latency and time. */
  const answered = (s: Intelligence.Screened, result: IntelResult.IntelResult) =>
    s.hit
      ? {
          ...result,
          metadata: { ...result.metadata, latency_ms: s.answeredAt - s.started, timestamp: Instant.iso(s.answeredAt) }
        }
      : result

  const v3Single = (payload: typeof Schemas.V3Request.Type, client: ApiKeyStore.ApiKeyRecord) => {
    const evidence = v3Evidence(payload.address, payload.options)
    return single(
      "v3",
      client,
      payload.address,
      payload.options?.chain ?? "auto",
      payload.options?.include_details === true,
      payload.options?.as_of,
      payload.options?.enable_agentic !== false,
      (s) =>
        s.hit ? stampedJson(s.result, s.answeredAt - s.started, Instant.iso(s.answeredAt)) : JSON.stringify(s.result),
      evidence === undefined
        ? undefined
        : Effect.map(
            evidence,
            (complete) => (s: Intelligence.Screened) => JSON.stringify(answered(s, complete(s.result)))
          )
    )
  }

  /** v3 single; a past `options.as_of` screens against the lists of that day, a future one is a 400. */
  const v3Intel = (payload: typeof Schemas.V3Request.Type, client: ApiKeyStore.ApiKeyRecord) => {
    const asOf = payload.options?.as_of
    if (asOf === undefined) return v3Single(payload, client)
    return Effect.flatMap(notAfterToday("v3", asOf), () => v3Single(payload, client))
  }

  const v2Json = (s: Intelligence.Screened, data: string, client: ApiKeyStore.ApiKeyRecord) =>
    `{"success":true,"data":${data},"message":${JSON.stringify(V2.processedMessage)},"timestamp":${JSON.stringify(Instant.iso(s.answeredAt))},"client":${JSON.stringify(client.name)}}`

  const v2Intel = (address: string, client: ApiKeyStore.ApiKeyRecord) =>
    single(
      "v2",
      client,
      address,
      "auto",
      false,
      undefined,
      true,
      // JSON.stringify({ success, data, message, timestamp, client }), with `data` serialised once per result.
      (s) => v2Json(s, v2DataJson(s.result), client),
      activity.enabled
        ? Effect.map(
            activity.of(address, "auto"),
            (found) => (s: Intelligence.Screened) => v2Json(s, JSON.stringify(V2.project(s.result, found)), client)
          )
        : undefined
    )

  return { charge, v3Intel, v2Intel, v3Evidence }
})

/** The v3 group (bearer). */
export const v3Layer: Layer.Layer<HttpApiGroup.Service<"vigil", "v3">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "v3",
  Effect.fnUntraced(function* (handlers) {
    const { charge, v3Intel, v3Evidence } = yield* operations
    const intelligence = yield* Intelligence.Intelligence
    return handlers
      .handle("intel", ({ payload }) =>
        Effect.flatMap(Effect.service(CurrentClient), (client) =>
          Effect.map(v3Intel(payload, client), Responses.toResponse).pipe(HttpErrors.answer("v3"))
        )
      )
      .handle("batch", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const options = payload.options
          if (options?.as_of !== undefined) yield* notAfterToday("v3", options.as_of)
          // Charged per address screened: an invalid one is a failed item and free, as a single invalid address is.
          const chain = options?.chain ?? "auto"
          const screened = payload.addresses.filter((a) => Chain.detect(a, chain).valid).length
          const decision = yield* charge("v3", client, screened)
          const screening = intelligence.batch(payload.addresses, {
            ...(options?.chain === undefined ? {} : { chain: options.chain }),
            includeDetails: options?.include_details === true,
            ...(options?.enable_agentic === false ? { agentic: false } : {}),
            ...(options?.as_of === undefined ? {} : { asOf: options.as_of }),
            ...(options?.batch_size === undefined ? {} : { concurrency: options.batch_size })
          })
          // On-chain evidence as for a single address: every item's read at once, each in the one budget.
          const evidence = payload.addresses.map((address) => v3Evidence(address, options))
          const result =
            evidence[0] === undefined
              ? yield* screening
              : yield* Effect.zipWith(
                  screening,
                  Effect.forEach(evidence, (e) => e ?? Effect.succeed((r: IntelResult.IntelResult) => r), {
                    concurrency: "unbounded"
                  }),
                  (batch, complete) => ({
                    ...batch,
                    results: batch.results.map((r, i) => ("score" in r ? complete[i]!(r) : r))
                  }),
                  { concurrent: true }
                )
          return Responses.json(200, result, Responses.rateHeaders(decision))
        }).pipe(HttpErrors.answer("v3"))
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
        Effect.map(v2Intel(query.address, client), Responses.toResponse).pipe(HttpErrors.answer("v2"))
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
        const usage = auth.status === "invalid" ? undefined : yield* quota.usage(auth.key)
        const timestamp = yield* Instant.now
        return Responses.json(200, Status.report(auth, usage, timestamp))
      }).pipe(HttpErrors.answer("v2"))
    )
  })
)
