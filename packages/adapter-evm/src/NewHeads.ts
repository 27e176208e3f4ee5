/**
 * New heads over a node's websocket: `eth_subscribe("newHeads")`, then each announced block's number. Through
 * Effect's socket on the `ws` client that `@effect/platform-node` ships (Node 20 has no WebSocket). Each frame is
 * decoded by a Schema: the subscription's answer (its id, or the node's refusal with its code), then the
 * announcements of that subscription; a frame of anything else is passed over.
 */
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { ChainData } from "@vigil/core"
import { Effect, Option, Schema, Stream } from "effect"
import { Socket } from "effect/socket"
import * as JsonRpc from "./JsonRpc.ts"

const ChainDataError = ChainData.ChainDataError

const HexNumber = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]+$/))

/** The answer to the subscription request: its id, or the node's refusal. */
const Answer = Schema.Struct({
  id: Schema.Literal(1),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown)
})
const ErrorObject = Schema.Struct({ code: Schema.Number, message: Schema.String })
const isErrorObject = Schema.is(ErrorObject)

/** An announcement of a new head. */
const Announcement = Schema.Struct({
  method: Schema.Literal("eth_subscription"),
  params: Schema.Struct({ subscription: Schema.String, result: Schema.Struct({ number: HexNumber }) })
})

const Frame = Schema.fromJsonString(Schema.Union([Answer, Announcement]))
const decodeFrame = Schema.decodeUnknownOption(Frame)
type Frame = typeof Frame.Type

const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

/** Where and how long to wait. */
export interface Options {
  readonly chainId: number
  readonly url: string
  /** To open the socket and to hear the subscription's answer. */
  readonly timeoutMillis: number
}

/** The block numbers the node announces, from subscribing until the socket closes (then a ChainDataError). */
export const subscribe = ({ chainId, url, timeoutMillis }: Options) =>
  Effect.gen(function* () {
    const fail = (reason: ChainData.ChainDataErrorReason, message: string) =>
      new ChainDataError({ reason, chainId, operation: "newHeads", message })
    const lost = (e: Socket.SocketError) =>
      fail(
        e.reason._tag === "SocketOpenError" && e.reason.kind === "Timeout" ? "Timeout" : "Unavailable",
        e.reason._tag === "SocketCloseError"
          ? `the websocket closed (${e.reason.code}${e.reason.closeReason ? `: ${e.reason.closeReason}` : ""})`
          : `the websocket failed: ${e.reason.message} (${JsonRpc.causeOf(errorOf(e.reason.cause))})`
      )
    const socket = yield* Socket.makeWebSocket(url, { openTimeout: `${timeoutMillis} millis` })
    const reader = yield* Effect.mapError(socket.reader, lost)
    const writer = yield* socket.writer
    yield* Effect.mapError(
      writer.write(encodeJson({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })),
      lost
    )
    const text = new TextDecoder()
    const frames = (raw: ReadonlyArray<string | Uint8Array>): ReadonlyArray<Frame> =>
      raw.flatMap((f) => Option.toArray(decodeFrame(typeof f === "string" ? f : text.decode(f))))
    // The answer to the subscription; announcements that came with it are kept for the stream.
    let early: ReadonlyArray<Frame> = []
    let subscription: string | undefined
    while (subscription === undefined) {
      const got = frames(
        yield* reader.pull.pipe(
          Effect.mapError(lost),
          Effect.timeoutOrElse({
            duration: `${timeoutMillis} millis`,
            orElse: () =>
              Effect.fail(fail("Timeout", `the node did not answer eth_subscribe within ${timeoutMillis} ms`))
          })
        )
      )
      const at = got.findIndex((f) => "id" in f)
      const answer = got[at]
      if (answer === undefined || !("id" in answer)) continue
      if (answer.error !== undefined) {
        if (!isErrorObject(answer.error))
          return yield* fail("Invalid", "eth_subscribe answered an error without a numeric code and a message")
        const { code, message } = answer.error
        return yield* fail(
          JsonRpc.classify(code, message) === "RateLimited" ? "RateLimited" : "Unsupported",
          `the node refused the newHeads subscription: ${message} (${code})`
        )
      }
      if (typeof answer.result !== "string")
        return yield* fail("Invalid", "eth_subscribe did not answer a subscription id")
      subscription = answer.result
      early = got.slice(at + 1)
    }
    const numbers = (fs: ReadonlyArray<Frame>) =>
      fs.flatMap((f) =>
        "method" in f && f.params.subscription === subscription ? [Number(BigInt(f.params.result.number))] : []
      )
    return Stream.concat(
      Stream.fromIterable(numbers(early)),
      Stream.fromEffectRepeat(Effect.mapError(reader.pull, lost)).pipe(
        Stream.map((raw) => numbers(frames(raw))),
        Stream.flattenIterable
      )
    )
  }).pipe(Effect.provide(NodeSocket.layerWebSocketConstructorWS))

/** The error a `ws` error event carries, or the cause as it is. */
const errorOf = (cause: unknown): unknown =>
  typeof cause === "object" && cause !== null && "error" in cause ? cause.error : cause
