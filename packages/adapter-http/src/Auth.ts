/** API-key authentication of the intelligence routes: either header is accepted on every route. */
import { type ApiKeyStore, ApiKeys, Quota } from "@vigil/core"
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { ApiKeyAuth, BearerAuth, CurrentClient, KeyRateAuth } from "./Api.ts"
import * as HttpErrors from "./HttpErrors.ts"
import type * as Responses from "./Responses.ts"
import * as Routes from "./Routes.ts"

const bearerPrefix = /^bearer\s+/i

/** Request headers as Node gives them: lower-case names. */
export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name]
  return typeof value === "string" ? value : undefined
}

/** The key a request presents: `Authorization: Bearer …` or `x-api-key`, whichever `prefer` names first. */
export const presentedKey = (headers: Headers, prefer: "bearer" | "apiKey"): string => {
  const authorization = header(headers, "authorization")
  const bearer =
    authorization !== undefined && bearerPrefix.test(authorization)
      ? authorization.replace(bearerPrefix, "").trim()
      : ""
  const apiKey = (header(headers, "x-api-key") ?? "").trim()
  return prefer === "bearer" ? bearer || apiKey : apiKey || bearer
}

/** The key's record, or why not: 401 (missing, unknown, revoked or expired) or 503. */
export const authorize = (
  keys: ApiKeys.ApiKeys["Service"],
  presented: string,
  flavour: Responses.Flavour
): Effect.Effect<ApiKeyStore.ApiKeyRecord, HttpErrors.Unauthorized | HttpErrors.Unavailable> =>
  keys.authenticate(presented).pipe(
    Effect.mapError(HttpErrors.fromStoreError(flavour)),
    Effect.flatMap((outcome) =>
      outcome.status === "authenticated"
        ? Effect.succeed(outcome.key)
        : Effect.fail(new HttpErrors.Unauthorized({ flavour, expired: outcome.status === "expired" }))
    )
  )

const guard =
  (
    keys: ApiKeys.ApiKeys["Service"],
    prefer: "bearer" | "apiKey",
    admit: (
      client: ApiKeyStore.ApiKeyRecord,
      flavour: Responses.Flavour
    ) => Effect.Effect<void, HttpErrors.TooManyRequests | HttpErrors.Unavailable> = () => Effect.void
  ) =>
  <E, R>(
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    options: { readonly credential: Redacted.Redacted<string> }
  ) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const credential = Redacted.value(options.credential).trim()
      const flavour = Routes.flavourOf(request.url)
      return yield* authorize(keys, credential || presentedKey(request.headers, prefer), flavour).pipe(
        Effect.tap((client) => admit(client, flavour)),
        Effect.matchEffect({
          onFailure: HttpErrors.respond,
          onSuccess: (client) => Effect.provideService(httpEffect, CurrentClient, client)
        })
      )
    })

/** BearerAuth (v3) over the ApiKeys service. */
export const bearerLayer: Layer.Layer<BearerAuth, never, ApiKeys.ApiKeys> = Layer.effect(BearerAuth)(
  Effect.map(Effect.service(ApiKeys.ApiKeys), (keys) => BearerAuth.of({ bearer: guard(keys, "bearer") }))
)

/** KeyRateAuth (monitoring's `/v1`) over the ApiKeys and Quota services: each request charged to the key's qps. */
export const keyRateLayer: Layer.Layer<KeyRateAuth, never, ApiKeys.ApiKeys | Quota.Quota> = Layer.effect(KeyRateAuth)(
  Effect.gen(function* () {
    const keys = yield* ApiKeys.ApiKeys
    const quota = yield* Quota.Quota
    const admit = (client: ApiKeyStore.ApiKeyRecord, flavour: Responses.Flavour) =>
      quota.admit(client).pipe(
        Effect.mapError(HttpErrors.fromStoreError(flavour)),
        Effect.flatMap((decision) =>
          decision.granted ? Effect.void : Effect.fail(new HttpErrors.TooManyRequests({ flavour, decision, cost: 1 }))
        )
      )
    return KeyRateAuth.of({ apiKey: guard(keys, "apiKey", admit) })
  })
)

/** ApiKeyAuth (v2) over the ApiKeys service. */
export const apiKeyLayer: Layer.Layer<ApiKeyAuth, never, ApiKeys.ApiKeys> = Layer.effect(ApiKeyAuth)(
  Effect.map(Effect.service(ApiKeys.ApiKeys), (keys) => ApiKeyAuth.of({ apiKey: guard(keys, "apiKey") }))
)
