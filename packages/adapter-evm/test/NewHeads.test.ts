/**
 * The new-heads subscription against a local websocket node: a refusal classified by its code, frames that are not
 * this subscription's announcements passed over, and a node that never answers the subscription timed out.
 */
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { NewHeads } from "@vigil/adapter-evm"
import { Effect, Stream } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type WebSocket, WebSocketServer } from "ws"

/** What the node does with a subscription request. */
let onSubscribe: (socket: WebSocket) => void = () => {}
let url = ""
let server: WebSocketServer
beforeAll(async () => {
  server = await new Promise<WebSocketServer>((done) => {
    const listening: WebSocketServer = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () => done(listening))
  })
  server.on("connection", (socket) => socket.on("message", () => onSubscribe(socket)))
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const client of server.clients) client.terminate()
  await new Promise<void>((done) => server.close(() => done()))
})

const announce = (subscription: string, number: string) =>
  JSON.stringify({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription, result: { number } } })

const failure = (timeoutMillis = 5_000) =>
  Effect.runPromise(
    Effect.flip(Effect.scoped(NewHeads.subscribe({ chainId: 1, url, timeoutMillis }))).pipe(
      Effect.map((e) => [e.reason, e.message] as const)
    )
  )

describe("new heads over a websocket", () => {
  it("passes over what is not this subscription's announcement of a block number", async () => {
    onSubscribe = (socket) => {
      socket.send("not json")
      socket.send(announce("0xother", "0x1"))
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0xsub" }))
      socket.send(JSON.stringify({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: "0xsub" } }))
      socket.send(announce("0xsub", "0x10"))
      socket.send(announce("0xother", "0x2"))
      socket.send(announce("0xsub", "not a number"))
      socket.send(announce("0xsub", "0x11"))
    }
    const heads = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(NewHeads.subscribe({ chainId: 1, url, timeoutMillis: 5_000 }), (s) =>
          Stream.runCollect(Stream.take(s, 2))
        )
      )
    )
    assert.deepStrictEqual(heads, [16, 17])
  })

  it("tells a node's refusal by its code, and a malformed answer from a refusal", async () => {
    const answer = (error: unknown) => (socket: WebSocket) =>
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, error }))
    onSubscribe = answer({ code: -32601, message: "the method eth_subscribe does not exist" })
    assert.deepStrictEqual(await failure(), [
      "Unsupported",
      "the node refused the newHeads subscription: the method eth_subscribe does not exist (-32601)"
    ])
    onSubscribe = answer({ code: -32005, message: "too many subscriptions" })
    assert.deepStrictEqual(await failure(), [
      "RateLimited",
      "the node refused the newHeads subscription: too many subscriptions (-32005)"
    ])
    onSubscribe = answer({ code: "nope" })
    assert.deepStrictEqual(await failure(), [
      "Invalid",
      "eth_subscribe answered an error without a numeric code and a message"
    ])
    onSubscribe = (socket) => socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, result: 7 }))
    assert.deepStrictEqual(await failure(), ["Invalid", "eth_subscribe did not answer a subscription id"])
  })

  it("gives up on a node that never answers the subscription", async () => {
    onSubscribe = () => {}
    assert.deepStrictEqual(await failure(200), ["Timeout", "the node did not answer eth_subscribe within 200 ms"])
  })
})
