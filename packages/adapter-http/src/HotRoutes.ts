/**
 * The two routes a screening client calls all day long, `POST /api/v3/intel` and `GET /api/v2/intel`, answered
 * straight from Node's `request` event instead of through the HttpApi router.
 *
 * The router's per-request machinery (request wrappers, route matching, middleware, fiber per layer) costs
 * more than the screening itself, and these routes are where throughput matters. What the lane runs is the
 * router's own work: the same key check (`Auth.authorize`), the same schemas and decoder the HttpApi endpoint
 * declares, the same 400 texts (`Edge.schemaIssue`) and error mapping (`HttpErrors`), the same route logic (`IntelHandlers.operations`),
 * and it counts in the same metrics. Only plain requests take the lane; anything unusual (a body without a
 * length or larger than the limit, another content type, `Expect: 100-continue`, a query with other parameters)
 * declines before reading a byte and goes through the router, which answers it as before. The HTTP tests compare
 * both paths' answers on the same requests.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { ApiKeys } from "@vigil/core"
import { Cause, Effect, Exit, Option, Schema, SchemaIssue } from "effect"
import { HttpServerResponse } from "effect/http"
import * as Auth from "./Auth.ts"
import * as Edge from "./Edge.ts"
import * as HttpErrors from "./HttpErrors.ts"
import { GatedServer, type Limits } from "./GatedServer.ts"
import { HttpMetrics } from "./HttpMetrics.ts"
import * as IntelHandlers from "./IntelHandlers.ts"
import type * as Responses from "./Responses.ts"
import * as Routes from "./Routes.ts"
import * as Schemas from "./Schemas.ts"

/** Answers the request and returns true, or returns false without touching it. */
export type Lane = (request: IncomingMessage, response: ServerResponse) => boolean

/** Decoders built exactly as the HttpApi builder builds them for these endpoints. */
const decodePayload = Schema.decodeUnknownExit(Schema.Union([Schemas.V3Request]))
const decodeQuery = Schema.decodeUnknownExit(Schema.toCodecArrayFromSingle(Schemas.V2Query))

/** The HttpApi body decoder's verdict on text that is not JSON. */
const malformedJson = new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })

const textDecoder = new TextDecoder()

const v3Path = Routes.path("v3", "intel")
const v2Path = Routes.path("v2", "intel")
const v2Prefix = `${v2Path}?`

/** `application/json`, with any parameters, in any case (the HttpApi decoder's normalisation); absent counts as JSON. */
const isJson = (contentType: string | undefined) => {
  if (contentType === undefined) return true
  const lower = contentType.toLowerCase().trim()
  const semicolon = lower.indexOf(";")
  return (semicolon === -1 ? lower : lower.slice(0, semicolon).trim()) === "application/json"
}

/** The single `address` of a query that holds nothing else, or undefined. */
const onlyAddress = (query: string): string | undefined => {
  if (query.includes("#")) return undefined
  const params = new URLSearchParams(query)
  let address: string | undefined
  for (const [name, value] of params) {
    if (name !== "address" || address !== undefined) return undefined
    address = value
  }
  return address
}

/** What the shared route code answers: a reply (the successes) or a response (everything else). */
type Answer = Responses.Reply | HttpServerResponse.HttpServerResponse

/** Writes an answer of the shared route code (always a complete body). */
const write = (response: ServerResponse, answer: Answer) => {
  if (response.destroyed || response.headersSent) return
  if (HttpServerResponse.isHttpServerResponse(answer)) {
    const body = answer.body
    response.writeHead(answer.status, answer.headers)
    response.end(body._tag === "Uint8Array" ? (body.text ?? body.body) : undefined)
  } else {
    answer.headers["content-length"] = String(Buffer.byteLength(answer.body))
    response.writeHead(answer.status, answer.headers)
    response.end(answer.body)
  }
}

/** Builds the lane over the server's services; `maxBodyBytes` is the router's body limit. */
export const make = (maxBodyBytes: number) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<IntelHandlers.Requirements>()
    const keys = yield* ApiKeys.ApiKeys
    const metrics = yield* HttpMetrics
    const { v3Intel, v2Intel } = yield* IntelHandlers.operations
    const run = Effect.runCallbackWith(context)

    const answer = (
      request: IncomingMessage,
      response: ServerResponse,
      route: string,
      flavour: Responses.Flavour,
      started: number,
      program: Effect.Effect<Answer, HttpErrors.HttpError, IntelHandlers.Requirements>
    ) =>
      run(
        // Failures are answered through the router's own mapping; a defect is logged and answered 500, as the
        // router's edge does; only an interruption ends unanswered.
        Effect.catchCause(HttpErrors.answer(flavour)(program), (cause) =>
          Effect.andThen(
            Effect.logError("unexpected failure while answering a request", cause),
            Edge.internalError(flavour)
          )
        ),
        {
          onExit: (exit) => {
            if (!Exit.isSuccess(exit)) return void response.destroy()
            write(response, exit.value)
            metrics.request(request.method ?? "GET", route, exit.value.status, (performance.now() - started) / 1000)
          }
        }
      )

    const authorized = (
      request: IncomingMessage,
      prefer: "bearer" | "apiKey",
      flavour: Responses.Flavour,
      then: (client: Parameters<typeof v3Intel>[1]) => Effect.Effect<Answer, HttpErrors.HttpError>
    ) => Effect.flatMap(Auth.authorize(keys, Auth.presentedKey(request.headers, prefer), flavour), then)

    // As at the edge of the router: a body nested too deep is refused before anything else looks at it.
    const v3 = (request: IncomingMessage, text: string) =>
      Edge.tooDeep(text)
        ? Effect.fail(Edge.tooDeepError("v3"))
        : authorized(request, "bearer", "v3", (client) => {
            let input: unknown
            try {
              input = text === "" ? undefined : JSON.parse(text)
            } catch {
              return Effect.fail(Edge.schemaIssue("v3", malformedJson, "Payload"))
            }
            const payload = decodePayload(input)
            return Exit.isSuccess(payload)
              ? v3Intel(payload.value, client)
              : Effect.fail(Edge.schemaIssue("v3", schemaIssue(payload), "Payload"))
          })

    const v2 = (request: IncomingMessage, address: string) =>
      authorized(request, "apiKey", "v2", (client) => {
        const query = decodeQuery({ address })
        return Exit.isSuccess(query)
          ? v2Intel(query.value.address, client)
          : Effect.fail(Edge.schemaIssue("v2", schemaIssue(query), "Query"))
      })

    const lane: Lane = (request, response) => {
      const url = request.url ?? ""
      const headers = request.headers
      if (request.method === "POST" && url === v3Path) {
        const length = headers["content-length"]
        if (
          length === undefined ||
          !/^\d{1,9}$/.test(length) ||
          Number(length) > maxBodyBytes ||
          headers["transfer-encoding"] !== undefined ||
          !isJson(headers["content-type"])
        ) {
          return false
        }
        const started = performance.now()
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.once("end", () => {
          const text = textDecoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))
          answer(request, response, v3Path, "v3", started, v3(request, text))
        })
        return true
      }
      if (request.method === "GET" && url.startsWith(v2Prefix)) {
        if (headers["content-length"] !== undefined || headers["transfer-encoding"] !== undefined) return false
        const address = onlyAddress(url.slice(v2Prefix.length))
        if (address === undefined) return false
        answer(request, response, v2Path, "v2", performance.now(), v2(request, address))
        return true
      }
      return false
    }
    return lane
  })

/** The issue of a failed decoding. */
const schemaIssue = (exit: Exit.Failure<unknown, Schema.SchemaError>): SchemaIssue.Issue => {
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? error.value.issue : new SchemaIssue.InvalidValue({ message: "invalid request" })
}

/** A Node HTTP server whose `request` events are offered to `lane` first, and reach the router when it declines. */
export class LaneServer extends GatedServer {
  readonly #lane: Lane
  constructor(lane: Lane, limits: Limits) {
    super(limits)
    this.#lane = lane
  }
  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event === "request" && this.#lane(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
    return super.emit(event, ...args)
  }
}
