/**
 * Handlers of the intelligence routes: v3 single and batch, v2 intel and v2 status. What an answer holds (cache
 * lifetimes, batches, failed items, the evidence read beside a screening, a cached answer restamped) is core's
 * `Answers`; what is here is authentication, charging and serialisation.
 */
import {
  Answers,
  ApiKeys,
  type ApiKeyStore,
  Chain,
  ChainActivity,
  Instant,
  type Intelligence,
  Quota,
  type Screening,
  Status,
  V2
} from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as HttpErrors from "./HttpErrors.ts"
import * as Responses from "./Responses.ts"
import * as Schemas from "./Schemas.ts"

/** What the intelligence handlers need. */
export type Requirements = ApiKeys.ApiKeys | Quota.Quota | Answers.Answers | HttpMetrics

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

/** The cache's headers of an answer: `x-cache`, and the `age` of a cached result. */
const cacheHeaders = (screened: Intelligence.Screened, headers: Record<string, string>): Record<string, string> => {
  headers["x-cache"] = screened.hit ? "HIT" : "MISS"
  if (screened.hit) headers["age"] = String(Math.floor((screened.answeredAt - screened.storedAt) / 1000))
  return headers
}

/** Fails with a 400 on `options.as_of` when `asOf` is after today (by the Effect Clock). */
const notAfterToday = (flavour: Responses.Flavour, asOf: string) =>
  Effect.flatMap(Instant.today, (today) =>
    asOf > today
      ? Effect.fail(
          new HttpErrors.BadRequest({ flavour, field: "options.as_of", message: `${asOf} is after today (${today})` })
        )
      : Effect.void
  )

/** The v3 JSON of an answer: the result completed with its evidence, or the screening restamped. */
const v3Json = (a: Answers.V3Answer) =>
  a.completed !== undefined
    ? JSON.stringify(a.completed)
    : a.hit
      ? stampedJson(a.result, a.answeredAt - a.started, Instant.iso(a.answeredAt))
      : JSON.stringify(a.result)

/** The v2 JSON of an answer: `JSON.stringify({ success, data, message, timestamp, client })`, `data` kept per result. */
const v2Json = (a: Answers.V2Answer, client: ApiKeyStore.ApiKeyRecord) =>
  `{"success":true,"data":${a.activity === undefined ? v2DataJson(a.result) : JSON.stringify(V2.project(a.result, a.activity))},"message":${JSON.stringify(V2.processedMessage)},"timestamp":${JSON.stringify(Instant.iso(a.answeredAt))},"client":${JSON.stringify(client.name)}}`

/**
 * The hot lanes' hand-written encoders of the v3 and v2 answers (serialised once per result, the time filled in
 * per answer), which a property test holds equal to the endpoints' success Schemas' encoding.
 */
export const hotEncoders = { v3Json, v2Json }

/**
 * The intelligence routes after authentication and decoding (v3 single, v2, and the batch's charge): shared by
 * the HttpApi handlers and the hot lane. Each checks the address, charges, asks `Answers` and serialises.
 */
export const operations = Effect.gen(function* () {
  const answers = yield* Answers.Answers
  const charge = yield* charging

  // Pipelines rather than generators: they run on every request.

  /** Checks the address on `chain`, charges one unit, and answers 200 with `body` of what `answer` gives. */
  const single = <A extends Intelligence.Screened>(
    flavour: Responses.Flavour,
    client: ApiKeyStore.ApiKeyRecord,
    address: string,
    chain: Chain.Network | "auto",
    answer: (detected: Chain.Valid) => Effect.Effect<A, Screening.InvalidAddress>,
    body: (a: A) => string
  ): Effect.Effect<Responses.Reply, HttpErrors.HttpError> => {
    const detected = Chain.detect(address, chain)
    if (!detected.valid) return Effect.fail(HttpErrors.fromInvalidAddress(flavour)({ message: detected.reason }))
    return Effect.flatMap(charge(flavour, client, 1), (decision) =>
      Effect.map(answer(detected), (a) =>
        Responses.replyJson(200, body(a), cacheHeaders(a, Responses.rateHeaders(decision)))
      )
    ).pipe(Effect.mapError(HttpErrors.fromDomain(flavour)))
  }

  const v3Single = (payload: typeof Schemas.V3Request.Type, client: ApiKeyStore.ApiKeyRecord) => {
    const options = payload.options
    const chain = options?.chain ?? "auto"
    const exposure = Schemas.exposureRequest(options?.exposure)
    return single(
      "v3",
      client,
      payload.address,
      chain,
      (detected) =>
        answers.v3(payload.address, {
          chain,
          detected,
          includeDetails: options?.include_details === true,
          ...(options?.enable_agentic === false ? { agentic: false } : {}),
          ...(options?.as_of === undefined ? {} : { asOf: options.as_of }),
          ...(exposure === undefined ? {} : { exposure })
        }),
      v3Json
    )
  }

  /** v3 single; a past `options.as_of` screens against the lists of that day, a future one is a 400. */
  const v3Intel = (payload: typeof Schemas.V3Request.Type, client: ApiKeyStore.ApiKeyRecord) => {
    const asOf = payload.options?.as_of
    if (asOf === undefined) return v3Single(payload, client)
    return Effect.flatMap(notAfterToday("v3", asOf), () => v3Single(payload, client))
  }

  const v2Intel = (address: string, client: ApiKeyStore.ApiKeyRecord) =>
    single(
      "v2",
      client,
      address,
      "auto",
      (detected) => answers.v2(address, detected),
      (a) => v2Json(a, client)
    )

  return { charge, answers, v3Intel, v2Intel }
})

/** The v3 group (bearer). */
export const v3Layer: Layer.Layer<HttpApiGroup.Service<"vigil", "v3">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "v3",
  Effect.fnUntraced(function* (handlers) {
    const { charge, answers, v3Intel } = yield* operations
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
          const exposure = Schemas.exposureRequest(options?.exposure)
          const result = yield* answers.v3Batch(payload.addresses, {
            ...(options?.chain === undefined ? {} : { chain: options.chain }),
            includeDetails: options?.include_details === true,
            ...(options?.enable_agentic === false ? { agentic: false } : {}),
            ...(options?.as_of === undefined ? {} : { asOf: options.as_of }),
            ...(options?.batch_size === undefined ? {} : { concurrency: options.batch_size }),
            ...(exposure === undefined ? {} : { exposure })
          })
          return HttpApiSchema.withHeaders({ body: result, headers: Responses.rateHeaders(decision) })
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
        return Status.report(auth, usage, timestamp)
      }).pipe(HttpErrors.answer("v2"))
    )
  })
)
