/** API-key authentication of the intelligence routes: either header is accepted on every route. */
import { ApiKeys } from "@vigil/core"
import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { ApiKeyAuth, BearerAuth, CurrentClient } from "./Api.ts"
import * as Responses from "./Responses.ts"

const bearerPrefix = /^bearer\s+/i

/** The key a request presents: `Authorization: Bearer …` or `x-api-key`, whichever `prefer` names first. */
export const presentedKey = (request: HttpServerRequest.HttpServerRequest, prefer: "bearer" | "apiKey"): string => {
  const authorization = request.headers["authorization"]
  const bearer =
    authorization !== undefined && bearerPrefix.test(authorization)
      ? authorization.replace(bearerPrefix, "").trim()
      : ""
  const apiKey = (request.headers["x-api-key"] ?? "").trim()
  return prefer === "bearer" ? bearer || apiKey : apiKey || bearer
}

const guard =
  (keys: ApiKeys.ApiKeys["Service"], prefer: "bearer" | "apiKey") =>
  <E, R>(
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    options: { readonly credential: Redacted.Redacted<string> }
  ) =>
    Effect.gen(function* () {
      const credential = Redacted.value(options.credential).trim()
      const key = credential || presentedKey(yield* HttpServerRequest.HttpServerRequest, prefer)
      const auth = yield* Effect.result(keys.authenticate(key))
      if (auth._tag === "Failure") {
        const request = yield* HttpServerRequest.HttpServerRequest
        return Responses.unavailable(Responses.flavourOf(request.url), auth.failure)
      }
      const outcome = auth.success
      if (outcome.status !== "authenticated") return Responses.unauthorized(outcome.status === "expired")
      return yield* Effect.provideService(httpEffect, CurrentClient, outcome.key)
    })

/** BearerAuth (v3) over the ApiKeys service. */
export const bearerLayer: Layer.Layer<BearerAuth, never, ApiKeys.ApiKeys> = Layer.effect(BearerAuth)(
  Effect.map(Effect.service(ApiKeys.ApiKeys), (keys) => BearerAuth.of({ bearer: guard(keys, "bearer") }))
)

/** ApiKeyAuth (v2) over the ApiKeys service. */
export const apiKeyLayer: Layer.Layer<ApiKeyAuth, never, ApiKeys.ApiKeys> = Layer.effect(ApiKeyAuth)(
  Effect.map(Effect.service(ApiKeys.ApiKeys), (keys) => ApiKeyAuth.of({ apiKey: guard(keys, "apiKey") }))
)
