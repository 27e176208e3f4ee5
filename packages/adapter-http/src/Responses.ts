/** JSON responses of the API, errors included, in the wire shapes of the spec; only this adapter knows statuses. */
import { Instant, type Quota, type StoreError } from "@vigil/core"
import { Context, Effect } from "effect"
import { HttpServerResponse } from "effect/http"

const jsonType = "application/json"

/** A JSON response serialised once with JSON.stringify. */
const json = (status: number, body: unknown, headers?: Record<string, string>): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: jsonType, ...(headers ? { headers } : {}) })

/**
 * A JSON answer not yet turned into an HttpServerResponse: what the hot routes' successes are built as, since
 * the lane writes it to Node directly and only the router needs the response object ({@link toResponse}).
 */
export interface Reply {
  readonly _tag: "Reply"
  readonly status: number
  readonly body: string
  /** Lower-case names; `content-type` included. */
  readonly headers: Record<string, string>
}

/** A {@link Reply} of JSON text (`headers` is taken over, not copied). */
export const replyJson = (status: number, json: string, headers: Record<string, string>): Reply => {
  headers["content-type"] = jsonType
  return { _tag: "Reply", status, body: json, headers }
}

/** The router's form of a reply (responses pass through). */
export const toResponse = (
  answer: Reply | HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.isHttpServerResponse(answer)
    ? answer
    : HttpServerResponse.text(answer.body, { status: answer.status, contentType: jsonType, headers: answer.headers })

/** Where an error happened: v2 bodies add `success:false` and `timestamp` (spec §7's webhook shape, superset). */
export type Flavour = "v2" | "v3"

/**
 * The flavour of error body of a group's routes, annotated on each group that is not v3's (the v2 and monitoring
 * groups); `Routes.flavourOf` tells a path's from it.
 */
export const FlavourOfGroup = Context.Reference<Flavour>("@vigil/adapter-http/Responses/FlavourOfGroup", {
  defaultValue: () => "v3"
})

/** `{error, message, details}`, plus `success:false, timestamp` on v2 routes (the time is the Effect `Clock`'s). */
export const error = (
  flavour: Flavour,
  status: number,
  error: string,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  flavour === "v2"
    ? Effect.map(Instant.now, (timestamp) =>
        json(status, { success: false, error, message, ...(details ? { details } : {}), timestamp }, headers)
      )
    : Effect.succeed(json(status, { error, message, ...(details ? { details } : {}) }, headers))

/** `{success:false, error, details, timestamp}`: a failure of the webhook routes with the text of spec §7. */
export const webhookFailure = (
  status: number,
  error: string,
  details?: Record<string, unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(Instant.now, (timestamp) =>
    json(status, { success: false, error, ...(details ? { details } : {}), timestamp })
  )

/** 400 naming the offending field. */
export const validation = (flavour: Flavour, field: string, message: string, details: Record<string, unknown> = {}) =>
  error(flavour, 400, "Validation Error", `${field}: ${message}`, { field, ...details })

/** 401 for a missing, malformed, unknown, revoked or expired key (an expired key is told so). */
export const unauthorized = (flavour: Flavour, expired = false) =>
  error(flavour, 401, "Unauthorized", expired ? "API key expired" : "Invalid or missing API key", undefined, {
    "www-authenticate": 'Bearer realm="vigil"'
  })

/** 503 when storage does not answer. */
export const unavailable = (flavour: Flavour, e: StoreError.StoreError) =>
  error(
    flavour,
    503,
    "Service Unavailable",
    `storage unavailable: ${e.message}`,
    { reason: e.reason },
    e.reason === "Busy" ? { "retry-after": "1" } : undefined
  )

/** The `X-RateLimit-*` headers of a quota decision (Reset in seconds from now). */
export const rateHeaders = (
  decision: Quota.Decision
): { "x-ratelimit-limit": string; "x-ratelimit-remaining": string; "x-ratelimit-reset": string } => ({
  "x-ratelimit-limit": String(decision.window.limit),
  "x-ratelimit-remaining": String(decision.window.remaining),
  "x-ratelimit-reset": String(decision.window.resetSeconds)
})

const limitNames: Record<Quota.Scope, string> = {
  qps: "per-second request limit",
  daily: "daily address limit",
  monthly: "monthly address limit"
}

/** 429 with `Retry-After` and the rate-limit headers of the refusing window. */
export const tooManyRequests = (flavour: Flavour, decision: Quota.Decision, cost: number) => {
  const w = decision.window
  const message = decision.exceedsLimit
    ? `this request needs ${cost} addresses but the ${limitNames[w.scope]} is ${w.limit}; send fewer addresses per request`
    : `${limitNames[w.scope]} of ${w.limit} reached; retry in ${decision.retryAfterSeconds} s`
  return error(
    flavour,
    429,
    "Too Many Requests",
    message,
    { limit: w.scope, limit_value: w.limit, retry_after_seconds: decision.retryAfterSeconds ?? w.resetSeconds },
    { ...rateHeaders(decision), "retry-after": String(decision.retryAfterSeconds ?? w.resetSeconds) }
  )
}
