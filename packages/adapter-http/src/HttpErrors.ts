/**
 * The failures of the HTTP edge, as typed errors owned by this adapter. Routes (and the hot lane, which runs the
 * same route code) fail with them; each domain error has one mapping to them (`from*`), and `respond` is the one
 * place their statuses, bodies and headers are decided, in the flavour of the route: `{error, message, details}`
 * on v3 and general routes, with `success:false` and `timestamp` on v2 and webhook routes.
 *
 * The endpoints' declared error schemas (`Schemas.V3Errors`, `Schemas.V2Errors`, the webhook failures) describe
 * exactly these bodies; every answer the test suite receives is checked against the served document. They are
 * rendered here rather than encoded by HttpApi because the hot lane must answer byte for byte as the router does,
 * and several carry headers (`Retry-After`, `X-RateLimit-*`, `WWW-Authenticate`).
 */
import type {
  AbiSource,
  Alerts,
  Bots,
  ChainData,
  Contracts,
  History,
  Notifications,
  Quota,
  Screening,
  StoreError,
  Webhooks
} from "@vigil/core"
import { Data, Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import * as Responses from "./Responses.ts"

/** Which body shape a route's errors take. */
export type Flavour = Responses.Flavour

/** 400: a request field is wrong; `field` is its path. */
export class BadRequest extends Data.TaggedError("BadRequest")<{
  readonly flavour: Flavour
  readonly field: string
  readonly message: string
  readonly details?: Record<string, unknown>
}> {
  readonly status = 400
}

/** 401: no key, or one that is unknown, revoked or expired. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly flavour: Flavour
  readonly expired: boolean
}> {
  readonly status = 401
}

/** 429: the quota decision that refused the request, and what the request would have cost. */
export class TooManyRequests extends Data.TaggedError("TooManyRequests")<{
  readonly flavour: Flavour
  readonly decision: Quota.Decision
  readonly cost: number
}> {
  readonly status = 429
}

/** 503: storage did not answer. */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly flavour: Flavour
  readonly error: StoreError.StoreError
}> {
  readonly status = 503
}

/** A failure of the webhook routes with the text of spec §7 (`Invalid webhook URL provided`, …). */
export class WebhookFailure extends Data.TaggedError("WebhookFailure")<{
  readonly status: 400 | 404 | 409
  readonly text: string
  readonly details?: Record<string, unknown>
}> {}

/** A refusal of a resource route: its status, the status text as `error`, a message and details for programs. */
export class Refused extends Data.TaggedError("Refused")<{
  readonly flavour: Flavour
  readonly status: 404 | 409 | 422 | 502
  readonly message: string
  readonly details?: Record<string, unknown>
}> {}

/** 404: no route for the method and path. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly flavour: Flavour
  readonly method: string
  readonly path: string
}> {
  readonly status = 404
}

/** 413: the body is over the limit (the connection is closed after the answer). */
export class PayloadTooLarge extends Data.TaggedError("PayloadTooLarge")<{
  readonly flavour: Flavour
  readonly limitBytes: number
}> {
  readonly status = 413
}

/** 415: a body that is not JSON. */
export class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType")<{
  readonly flavour: Flavour
  readonly contentType: string | null
}> {
  readonly status = 415
}

/** 500: a bug; what it was goes to the log, not to the client. */
export class Internal extends Data.TaggedError("Internal")<{ readonly flavour: Flavour }> {
  readonly status = 500
}

/** Every failure a route or the edge can end with. */
export type HttpError =
  | BadRequest
  | Unauthorized
  | TooManyRequests
  | Unavailable
  | WebhookFailure
  | NotFound
  | PayloadTooLarge
  | UnsupportedMediaType
  | Internal
  | Refused

/** The domain errors the routes meet, each with one mapping below. */
export type DomainError =
  | StoreError.StoreError
  | Screening.InvalidAddress
  | Webhooks.InvalidWebhookUrl
  | Webhooks.WebhookLimitReached
  | Webhooks.WebhookNotFound
  | Webhooks.NoWebhooks
  | Contracts.InvalidContract
  | Contracts.ContractLabelTaken
  | Contracts.ContractLimitReached
  | Contracts.ContractNotFound
  | AbiSource.AbiNotFound
  | Bots.InvalidBot
  | Bots.BotNotFound
  | Bots.BotConflict
  | Bots.BotLimitReached
  | History.InvalidHistoryRequest
  | History.HistoryNotReady
  | ChainData.ChainDataError
  | Notifications.InvalidChannel
  | Notifications.ChannelNotFound
  | Notifications.ChannelLimitReached
  | Notifications.ChannelInUse
  | Alerts.InvalidAlertQuery
  | Alerts.AlertNotFound

/** StoreError → 503. */
export const fromStoreError = (flavour: Flavour) => (error: StoreError.StoreError) =>
  new Unavailable({ flavour, error })

/** An invalid address (core's `InvalidAddress`, or a detection's `{ message: reason }`) → 400 on `address`. */
export const fromInvalidAddress = (flavour: Flavour) => (e: { readonly message: string }) =>
  new BadRequest({ flavour, field: "address", message: e.message })

/** The webhook context's refusals → their spec §7 texts and statuses. */
const fromWebhookError = (
  e: Webhooks.InvalidWebhookUrl | Webhooks.WebhookLimitReached | Webhooks.WebhookNotFound | Webhooks.NoWebhooks
): WebhookFailure => {
  switch (e._tag) {
    case "InvalidWebhookUrl":
      return new WebhookFailure({ status: 400, text: e.message, details: { reason: e.reason } })
    case "WebhookLimitReached":
      return new WebhookFailure({ status: 409, text: e.message, details: { max: e.max } })
    case "WebhookNotFound":
      return new WebhookFailure({ status: 404, text: e.message })
    case "NoWebhooks":
      return new WebhookFailure({ status: 409, text: e.message })
  }
}

/** The one mapping of each domain error (HTTP failures pass through). */
export const fromDomain =
  (flavour: Flavour) =>
  (e: DomainError | HttpError): HttpError => {
    switch (e._tag) {
      case "StoreError":
        return fromStoreError(flavour)(e)
      case "InvalidAddress":
        return fromInvalidAddress(flavour)(e)
      case "InvalidWebhookUrl":
      case "WebhookLimitReached":
      case "WebhookNotFound":
      case "NoWebhooks":
        return fromWebhookError(e)
      case "InvalidContract":
        return new BadRequest({ flavour, field: e.field, message: e.message })
      case "ContractLabelTaken":
        return new Refused({
          flavour,
          status: 409,
          message: e.message,
          details: { label: e.label, chainId: e.chainId }
        })
      case "ContractNotFound":
        return new Refused({ flavour, status: 404, message: e.message, details: { id: e.id } })
      case "InvalidBot":
        return new BadRequest({
          flavour,
          field: e.field,
          message: e.message,
          ...(e.problems === undefined ? {} : { details: { problems: e.problems } })
        })
      case "BotNotFound":
        return new Refused({ flavour, status: 404, message: e.message, details: { id: e.id } })
      case "AlertNotFound":
        return new Refused({ flavour, status: 404, message: e.message, details: { botId: e.botId, id: e.id } })
      case "BotConflict":
        return new Refused({ flavour, status: 409, message: e.message, details: { id: e.id } })
      case "InvalidHistoryRequest":
        return new BadRequest({ flavour, field: e.field, message: e.message })
      case "HistoryNotReady":
        return new Refused({ flavour, status: 409, message: e.message })
      case "ChainDataError":
        return new Refused({
          flavour,
          status: 502,
          message: e.message,
          details: { reason: e.reason, chainId: e.chainId }
        })
      case "AbiNotFound":
        return new Refused({ flavour, status: 422, message: e.message, details: { tried: e.tried } })
      case "InvalidAlertQuery":
      case "InvalidChannel":
        return new BadRequest({ flavour, field: e.field, message: e.message })
      case "ChannelNotFound":
        return new Refused({ flavour, status: 404, message: e.message, details: { id: e.id } })
      case "ChannelLimitReached":
      case "ContractLimitReached":
      case "BotLimitReached":
        return new Refused({ flavour, status: 409, message: e.message, details: { max: e.max } })
      case "ChannelInUse":
        return new Refused({ flavour, status: 409, message: e.message, details: { bots: e.bots } })
      default:
        return e
    }
  }

/** Ends a route: its failures, domain or HTTP, become their answers through {@link fromDomain} and {@link respond}. */
export const answer =
  (flavour: Flavour) =>
  <A, R>(
    route: Effect.Effect<A, DomainError | HttpError, R>
  ): Effect.Effect<A | HttpServerResponse.HttpServerResponse, never, R> =>
    Effect.catch(route, (e) => respond(fromDomain(flavour)(e)))

const statusText = {
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Entity",
  502: "Bad Gateway"
} as const

/** The response of a failure: the one place an error's status, body and headers are decided. */
export const respond = (e: HttpError): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  switch (e._tag) {
    case "BadRequest":
      return Responses.validation(e.flavour, e.field, e.message, e.details)
    case "Unauthorized":
      return Responses.unauthorized(e.flavour, e.expired)
    case "TooManyRequests":
      return Responses.tooManyRequests(e.flavour, e.decision, e.cost)
    case "Unavailable":
      return Responses.unavailable(e.flavour, e.error)
    case "WebhookFailure":
      return Responses.webhookFailure(e.status, e.text, e.details)
    case "NotFound":
      return Responses.error(e.flavour, 404, "Not Found", `no route for ${e.method} ${e.path}`, {
        method: e.method,
        path: e.path
      })
    case "PayloadTooLarge":
      return Responses.error(
        e.flavour,
        413,
        "Payload Too Large",
        `request body exceeds ${e.limitBytes} bytes`,
        { limit_bytes: e.limitBytes },
        { connection: "close" }
      )
    case "UnsupportedMediaType":
      return Responses.error(
        e.flavour,
        415,
        "Unsupported Media Type",
        "the body must be JSON (Content-Type: application/json)",
        { content_type: e.contentType }
      )
    case "Refused":
      return Responses.error(e.flavour, e.status, statusText[e.status], e.message, e.details)
    case "Internal":
      return Responses.error(
        e.flavour,
        500,
        "Internal Server Error",
        "an unexpected error occurred; it has been logged"
      )
  }
}
