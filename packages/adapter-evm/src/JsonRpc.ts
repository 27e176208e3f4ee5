/**
 * The one JSON-RPC client of the EVM adapter: every reader of a chain's node (blocks for monitoring, accounts and
 * transfers for screening, freeze logs for the list refresh) posts through it, on keep-alive connections. A request
 * carries one call or a batch; a batch's answers come back in the calls' order, each a result or the node's refusal.
 *
 * Failures are classified once, here. A request that fails as a whole (no answer in time, no connection, HTTP 429
 * or 5xx, an answer that is not JSON-RPC) is an `RpcFailure` with its reason; a node's error object is classified by
 * its JSON-RPC code through ox's `RpcResponse` error classes (method not found or not supported: `Unsupported`;
 * limit exceeded: `RateLimited`; resource unavailable: `Unavailable`). Only the generic codes (-32000 invalid input,
 * -32600 invalid request, -32603 internal error, or a code no standard names), which providers use for everything,
 * fall back to the words of the message. Whether to try again is the caller's choice, by `retryable`.
 */
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Effect, Schema } from "effect"
import * as RpcResponse from "ox/RpcResponse"

/** Why a call or a request failed. */
export const Reason = Schema.Literals(["Timeout", "RateLimited", "Unavailable", "Unsupported", "Invalid"])
export type Reason = typeof Reason.Type

/** A request that failed as a whole, or (from `call`) a node's refusal of the one call, with its error code. */
export class RpcFailure extends Schema.TaggedError<RpcFailure>()("RpcFailure", {
  reason: Reason,
  message: Schema.String,
  /** The node's JSON-RPC error code, when the node answered and refused; absent when the request failed. */
  code: Schema.optionalKey(Schema.Number)
}) {}

/** True for the failures the same request may get past later: timeouts, limits, an unreachable or failing node. */
export const retryable = (reason: Reason): boolean =>
  reason === "Timeout" || reason === "RateLimited" || reason === "Unavailable"

/** One call of a method. */
export interface Call {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

/** A call's answer: its result, or the node's error object with its classification. */
export type Answer =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: number; readonly message: string; readonly reason: Reason }

/** Options of a request. */
export interface Options {
  /** The whole request's deadline; default none (the caller's own budget interrupts it). */
  readonly timeoutMillis?: number
}

/** The words some providers put under a generic code for what the standard codes say. */
const unsupportedWords =
  /method\b.*\b(not (found|supported|available)|does not exist)|unsupported|not supported|disabled/i
const limitWords = /rate|limit|too many/i

/** The meaning of a node's error object, by its code first. */
export const classify = (code: number, message: string): Reason => {
  if (code === 429) return "RateLimited"
  const error = RpcResponse.parseError({ code, message })
  if (error instanceof RpcResponse.MethodNotFoundError || error instanceof RpcResponse.MethodNotSupportedError)
    return "Unsupported"
  if (error instanceof RpcResponse.LimitExceededError) return "RateLimited"
  if (error instanceof RpcResponse.ResourceUnavailableError) return "Unavailable"
  // parseError makes an InternalError of -32603 and of every code no standard names.
  const generic =
    error instanceof RpcResponse.InvalidInputError ||
    error instanceof RpcResponse.InvalidRequestError ||
    error instanceof RpcResponse.InternalError
  if (!generic) return "Invalid"
  return unsupportedWords.test(message) ? "Unsupported" : limitWords.test(message) ? "RateLimited" : "Invalid"
}

const Json = Schema.fromJsonString(Schema.Unknown)
const encodeJson = Schema.encodeSync(Json)
const decodeJson = Schema.decodeUnknownEffect(Json)

/** An error object as a node sends it. */
const ErrorObject = Schema.Struct({ code: Schema.Number, message: Schema.String })
const isErrorObject = Schema.is(ErrorObject)
/** One answer of a batch (or the answer to a single call). */
const Reply = Schema.Struct({
  id: Schema.optionalKey(Schema.Unknown),
  result: Schema.optionalKey(Schema.Unknown),
  error: Schema.optionalKey(Schema.Unknown)
})
const isReply = Schema.is(Reply)

const timedOut = (e: unknown) => e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")

/** The code (ECONNREFUSED…) or message of what made a connection fail. */
export const causeOf = (e: unknown): string => {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e
  return cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(cause)
}

/** Connections to nodes are kept open between requests (a follower asks every poll interval). */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }

/** POSTs `body` as JSON to `url`; resolves with the response once its headers arrive. */
const postJson = (url: string, body: string, signal: AbortSignal) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const target = new URL(url)
    const https = target.protocol === "https:"
    const req = (https ? httpsRequest : httpRequest)(
      target,
      {
        method: "POST",
        agent: https ? agents.https : agents.http,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        signal
      },
      resolve
    )
    req.on("error", reject)
    req.end(body)
  })

/** The whole body of a response, as text; rejects with the deadline's reason when it passes first. */
const textOf = (response: IncomingMessage, deadline: AbortSignal | undefined) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    response.on("data", (c: Buffer) => chunks.push(c))
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    response.on("error", (e) => reject(deadline?.aborted === true ? deadline.reason : e))
    response.on("close", () => {
      if (!response.complete) reject(deadline?.aborted === true ? deadline.reason : new Error("the connection closed"))
    })
  })

let nextId = 1

/** Posts `payload` (one call or a batch); the answer parsed as JSON, or the request's failure. */
const exchange = (url: string, payload: unknown, options: Options): Effect.Effect<unknown, RpcFailure> =>
  Effect.gen(function* () {
    const fail = (reason: Reason, message: string) => new RpcFailure({ reason, message })
    const body = encodeJson(payload)
    const timeoutMillis = options.timeoutMillis
    const deadline = timeoutMillis === undefined ? undefined : AbortSignal.timeout(timeoutMillis)
    const response = yield* Effect.tryPromise({
      try: (signal) => postJson(url, body, deadline === undefined ? signal : AbortSignal.any([signal, deadline])),
      catch: (e) =>
        timedOut(e) && deadline?.aborted === true
          ? fail("Timeout", `the node did not answer within ${timeoutMillis} ms`)
          : fail("Unavailable", `the node cannot be reached: ${causeOf(e)}`)
    })
    const status = response.statusCode ?? 0
    // An answer not read to its end would keep its connection from being used again.
    if (status === 429 || status >= 500) response.resume()
    if (status === 429) return yield* fail("RateLimited", "the node answered HTTP 429 (too many requests)")
    if (status >= 500) return yield* fail("Unavailable", `the node answered HTTP ${status}`)
    const text = yield* Effect.tryPromise({
      try: () => textOf(response, deadline),
      catch: (e) =>
        timedOut(e) && deadline?.aborted === true
          ? fail("Timeout", `the node did not finish its answer within ${timeoutMillis} ms`)
          : fail("Unavailable", `the node's answer was cut off: ${causeOf(e)}`)
    })
    if (status !== 200) return yield* fail("Invalid", `the node answered HTTP ${status}`)
    return yield* Effect.mapError(decodeJson(text), () => fail("Invalid", "the node's answer is not JSON"))
  })

/** A reply as an answer: its result, or its error object classified. */
const answerOf = (reply: typeof Reply.Type, method: string): Answer => {
  if (reply.error !== undefined) {
    const error = isErrorObject(reply.error) ? reply.error : { code: 0, message: `${method}: a malformed error` }
    return { ok: false, code: error.code, message: error.message, reason: classify(error.code, error.message) }
  }
  if (!("result" in reply)) return { ok: false, code: 0, message: `no answer to ${method}`, reason: "Invalid" }
  return { ok: true, result: reply.result }
}

/** One request carrying `calls` as a batch; the answers in the order of the calls. */
export const batch = (
  url: string,
  calls: ReadonlyArray<Call>,
  options: Options = {}
): Effect.Effect<ReadonlyArray<Answer>, RpcFailure> => {
  const ids = calls.map(() => nextId++)
  return Effect.flatMap(
    exchange(
      url,
      calls.map((c, i) => ({ jsonrpc: "2.0", id: ids[i], method: c.method, params: c.params })),
      options
    ),
    (parsed) => {
      // A node may answer a batch with one error object (some refuse batches, or are rate limiting).
      if (isReply(parsed) && !Array.isArray(parsed) && isErrorObject(parsed.error)) {
        const { code, message } = parsed.error
        return Effect.fail(
          new RpcFailure({
            reason: classify(code, message),
            message: `the node refused the batch: ${message} (${code})`
          })
        )
      }
      if (!Array.isArray(parsed))
        return Effect.fail(new RpcFailure({ reason: "Invalid", message: "the node's answer to a batch is not a list" }))
      const byId = new Map<unknown, typeof Reply.Type>()
      for (const a of parsed) if (isReply(a)) byId.set(a.id, a)
      return Effect.succeed(
        ids.map((id, i): Answer => {
          const reply = byId.get(id)
          return reply === undefined
            ? { ok: false, code: 0, message: `no answer to ${calls[i]!.method}`, reason: "Invalid" }
            : answerOf(reply, calls[i]!.method)
        })
      )
    }
  )
}

/** One call on its own (not in a batch); its result, or the request's failure or the node's refusal, in words. */
export const call = (
  url: string,
  method: string,
  params: ReadonlyArray<unknown>,
  options: Options = {}
): Effect.Effect<unknown, RpcFailure> =>
  Effect.flatMap(exchange(url, { jsonrpc: "2.0", id: nextId++, method, params }, options), (parsed) => {
    if (!isReply(parsed) || Array.isArray(parsed))
      return Effect.fail(new RpcFailure({ reason: "Invalid", message: `${method}: the node's answer is not JSON-RPC` }))
    const answer = answerOf(parsed, method)
    return answer.ok
      ? Effect.succeed(answer.result)
      : Effect.fail(
          new RpcFailure({
            reason: answer.reason,
            message: `${method}: ${answer.message} (${answer.code})`,
            code: answer.code
          })
        )
  })
