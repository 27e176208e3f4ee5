/**
 * The outermost layer of every request: body-size limit (413), JSON bodies for what the router and the
 * HttpApi decoder would otherwise answer empty or as text (400, 404, 415), a logged JSON 500 for bugs,
 * and request metrics.
 */
import { ByteSize, Cause, Effect, type Layer, SchemaIssue } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import type * as Types from "effect/Types"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as HttpErrors from "./HttpErrors.ts"
import type * as Responses from "./Responses.ts"
import * as Routes from "./Routes.ts"

/** The deepest nesting of arrays and objects a JSON body may have; no route needs more than 3. */
const maxJsonDepth = 8

/**
 * True when JSON `text` nests arrays or objects deeper than {@link maxJsonDepth}: checked on the raw text before it
 * is parsed, so a body of nested brackets costs one pass over its bytes instead of a parse and a decoding.
 */
export const tooDeep = (text: string): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > maxJsonDepth) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** The 400 of a body nested deeper than {@link maxJsonDepth}. */
export const tooDeepError = (flavour: Responses.Flavour) =>
  new HttpErrors.BadRequest({ flavour, field: "body", message: `nested deeper than ${maxJsonDepth} levels` })

/** The route of POST that registers a v2 webhook, whose refusals are spec §7's texts. */
const webhookRegistration = Routes.path("webhooks", "register")

const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const fieldOf = (path: ReadonlyArray<unknown> | undefined, kind: string) =>
  path === undefined || path.length === 0
    ? kind === "Query"
      ? "query"
      : "body"
    : path.map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p))).join(".")

/** The first issue of a request part (`Payload`, `Query`…) that its schema refused: its field path and message. */
const firstIssue = (issue: SchemaIssue.Issue, kind: string): { readonly field: string; readonly message: string } => {
  const first = formatter(issue).issues[0]
  if (first === undefined) return { field: "body", message: "invalid request" }
  const whole = first.path === undefined || first.path.length === 0
  const message =
    first.message === "Expected a valid JSON body"
      ? "malformed JSON"
      : first.message === "Missing key"
        ? "required"
        : whole && first.message.startsWith("Expected ")
          ? "must be a JSON object"
          : first.message
  return { field: fieldOf(first.path, kind), message }
}

/** The 400 for a request part that its schema refused: the first issue, with its field path. */
export const schemaIssue = (flavour: Responses.Flavour, issue: SchemaIssue.Issue, kind: string) => {
  const { field, message } = firstIssue(issue, kind)
  return new HttpErrors.BadRequest({ flavour, field, message, details: { location: kind.toLowerCase() } })
}

/** Registering a webhook with no usable `url` is spec §7's "Invalid webhook URL provided", whatever was wrong. */
const webhookUrlIssue = (issue: SchemaIssue.Issue, kind: string) => {
  const { field, message } = firstIssue(issue, kind)
  return new HttpErrors.WebhookFailure({
    status: 400,
    text: "Invalid webhook URL provided",
    details: { reason: field === "body" ? message : `${field}: ${message}` }
  })
}

/** The 500 for a bug (the failure itself goes to the log, not to the client). */
export const internalError = (flavour: Responses.Flavour) => HttpErrors.respond(new HttpErrors.Internal({ flavour }))

/** The `_tag` of an HttpServerError's `reason` (e.g. `RouteNotFound`, `RequestParseError`), if `u` is one. */
const reasonOf = (u: unknown): { readonly _tag?: unknown; readonly reason?: unknown } | undefined =>
  typeof u === "object" && u !== null && "reason" in u && typeof u.reason === "object" && u.reason !== null
    ? u.reason
    : undefined

/** The global middleware; `maxBodyBytes` caps every request body. */
export const layer = (maxBodyBytes: number): Layer.Layer<never, never, HttpRouter.HttpRouter | HttpMetrics> =>
  HttpRouter.middleware(
    Effect.gen(function* () {
      const metrics = yield* HttpMetrics
      const limit = ByteSize.bytes(maxBodyBytes)
      const tooLarge = (flavour: Responses.Flavour) =>
        HttpErrors.respond(new HttpErrors.PayloadTooLarge({ flavour, limitBytes: maxBodyBytes }))

      /** Reads the body (kept by the request for the handler) and checks its nesting; an unreadable one is left to the handler. */
      const bodyTooDeep = (request: HttpServerRequest.HttpServerRequest) =>
        request.text.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, limit),
          Effect.map(tooDeep),
          Effect.orElseSucceed(() => false)
        )

      const render = (
        request: HttpServerRequest.HttpServerRequest,
        flavour: Responses.Flavour,
        cause: Cause.Cause<unknown>
      ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
        const failure = Cause.findErrorOption(cause)
        if (failure._tag === "Some" && reasonOf(failure.value)?._tag === "RouteNotFound") {
          return HttpErrors.respond(
            new HttpErrors.NotFound({ flavour, method: request.method, path: pathOf(request.url) })
          )
        }
        const defect = Cause.findDefect(cause)
        if (defect._tag === "Success") {
          const d = defect.success
          if (HttpApiError.HttpApiSchemaError.is(d) && d.kind !== "Body" && d.kind !== "ResponseHeaders") {
            return HttpErrors.respond(
              d.kind === "Payload" && request.method === "POST" && pathOf(request.url) === webhookRegistration
                ? webhookUrlIssue(d.cause.issue, d.kind)
                : schemaIssue(flavour, d.cause.issue, d.kind)
            )
          }
          if (HttpApiError.HttpApiPayloadTooLarge.is(d)) return tooLarge(flavour)
          const reason = reasonOf(d)
          if (reason?._tag === "RequestParseError") {
            return reason.reason === "BodyTooLarge"
              ? tooLarge(flavour)
              : HttpErrors.respond(
                  new HttpErrors.BadRequest({ flavour, field: "body", message: "the request body could not be read" })
                )
          }
        }
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        return Effect.andThen(
          Effect.logError("unexpected failure while answering a request", cause),
          internalError(flavour)
        )
      }

      // Every failure becomes a response here; the router's marker type says no error is left unhandled.
      return (
        httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
      ): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const started = performance.now()
          const path = pathOf(request.url)
          const flavour = Routes.flavourOf(path)
          let response: HttpServerResponse.HttpServerResponse
          if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
            response = yield* tooLarge(flavour)
          } else if (request.method === "POST" && (yield* bodyTooDeep(request))) {
            response = yield* HttpErrors.respond(
              path === webhookRegistration
                ? new HttpErrors.WebhookFailure({
                    status: 400,
                    text: "Invalid webhook URL provided",
                    details: { reason: tooDeepError(flavour).message }
                  })
                : tooDeepError(flavour)
            )
          } else {
            response = yield* httpEffect.pipe(
              Effect.provideService(HttpIncomingMessage.MaxBodySize, limit),
              Effect.catchCause((cause) => render(request, flavour, cause))
            )
          }
          if (response.status === 415) {
            response = yield* HttpErrors.respond(
              new HttpErrors.UnsupportedMediaType({ flavour, contentType: request.headers["content-type"] ?? null })
            )
          }
          metrics.request(request.method, Routes.label(path), response.status, (performance.now() - started) / 1000)
          return response
        })
    }),
    { global: true }
  )
