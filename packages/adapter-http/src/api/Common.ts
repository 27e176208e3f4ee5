/** What every group shares: the errors any route can answer, and the authentication middleware. */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { ApiKeyStore } from "@vigil/core"
import * as S from "../Schemas.ts"

/** What the edge itself can answer on any route: a body over the limit, a bug. */
export const edgeErrors = (errors: typeof S.V3Errors) => [errors.PayloadTooLarge, errors.InternalError] as const

/** What a route that reads a JSON body can also answer: it is not JSON. */
export const bodyErrors = (errors: typeof S.V3Errors) => [...edgeErrors(errors), errors.UnsupportedMediaType] as const

/** The errors of a charged screening route. */
export const intelErrors = (errors: typeof S.V3Errors) =>
  [errors.ValidationError, errors.TooManyRequests, errors.ServiceUnavailable] as const

/** The API key of the current request, once authenticated. */
export class CurrentClient extends Context.Service<CurrentClient, ApiKeyStore.ApiKeyRecord>()(
  "@vigil/adapter-http/CurrentClient"
) {}

/** v3 authentication: `Authorization: Bearer <API_KEY>` (an `x-api-key` header is accepted too). */
export class BearerAuth extends HttpApiMiddleware.Service<BearerAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/BearerAuth",
  { security: { bearer: HttpApiSecurity.bearer }, error: [S.V3Errors.Unauthorized, S.V3Errors.ServiceUnavailable] }
) {}

/** v2 authentication: `x-api-key: <API_KEY>` (an `Authorization: Bearer` header is accepted too). */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/ApiKeyAuth",
  {
    security: { apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }) },
    error: [S.V2Errors.Unauthorized, S.V2Errors.ServiceUnavailable]
  }
) {}

/**
 * Monitoring (`/v1`) authentication: `x-api-key` (an `Authorization: Bearer` header is accepted too), and each
 * request charged to the key's per-second rate (`qps`; no address volume): 429 past it.
 */
export class KeyRateAuth extends HttpApiMiddleware.Service<KeyRateAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/KeyRateAuth",
  {
    security: { apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }) },
    error: [S.V2Errors.Unauthorized, S.V2Errors.TooManyRequests, S.V2Errors.ServiceUnavailable]
  }
) {}
