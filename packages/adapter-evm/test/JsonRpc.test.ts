/**
 * The one JSON-RPC client: node error codes classified by code (the words of the message only under the generic
 * codes), a batch's answers in the calls' order whatever order the node sends them in, and a request's own failures
 * (HTTP 429 and 5xx, no connection, no answer in time, not JSON-RPC) told apart from a node's refusal.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { JsonRpc } from "@vigil/adapter-evm"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"

type Handler = (body: unknown, res: ServerResponse) => void
let handler: Handler = (_, res) => res.end()
let url = ""
const server = createServer((req: IncomingMessage, res) => {
  if (req.method !== "POST") {
    res.statusCode = 404
    res.end()
    return
  }
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => handler(JSON.parse(Buffer.concat(chunks).toString("utf8")), res))
})
beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((done) => server.close(() => done()))
})

const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.statusCode = status
  res.setHeader("content-type", "application/json")
  res.end(JSON.stringify(body))
}

interface Request {
  readonly id: number
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

describe("JsonRpc.classify", () => {
  it("reads the standard codes, whatever the message says", () => {
    assert.strictEqual(JsonRpc.classify(-32601, "the method debug_traceBlockByNumber does not exist"), "Unsupported")
    assert.strictEqual(JsonRpc.classify(-32004, "method not supported"), "Unsupported")
    assert.strictEqual(JsonRpc.classify(-32005, "query returned more than 10000 results"), "RateLimited")
    assert.strictEqual(JsonRpc.classify(429, "slow down"), "RateLimited")
    assert.strictEqual(JsonRpc.classify(-32002, "resource unavailable"), "Unavailable")
    // A specific code is not overruled by its words.
    assert.strictEqual(JsonRpc.classify(-32602, "invalid params: limit exceeded, method not supported"), "Invalid")
    assert.strictEqual(JsonRpc.classify(-32001, "header not found"), "Invalid")
  })

  it("falls back to the message's words only under the generic codes", () => {
    assert.strictEqual(JsonRpc.classify(-32000, "the method trace_filter is not available"), "Unsupported")
    assert.strictEqual(JsonRpc.classify(-32600, "Unsupported method: debug_traceBlockByNumber"), "Unsupported")
    assert.strictEqual(JsonRpc.classify(-32603, "rate limit reached"), "RateLimited")
    assert.strictEqual(JsonRpc.classify(-32007, "daily request limit reached"), "RateLimited")
    // geth's missing block is not a missing method.
    assert.strictEqual(JsonRpc.classify(-32000, "header not found"), "Invalid")
    assert.strictEqual(JsonRpc.classify(-32000, "execution reverted"), "Invalid")
  })
})

describe("JsonRpc.batch", () => {
  it.effect("pairs answers with calls by id, whatever order the node sends them in, each result or refusal", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      handler = (body, res) => {
        seen.push(body)
        const calls = body as ReadonlyArray<Request>
        json(
          res,
          calls
            .map((c) =>
              c.method === "eth_missing"
                ? {
                    jsonrpc: "2.0",
                    id: c.id,
                    error: { code: -32601, message: "the method eth_missing does not exist" }
                  }
                : c.method === "eth_forgotten"
                  ? undefined
                  : { jsonrpc: "2.0", id: c.id, result: `${c.method}:${String(c.params[0])}` }
            )
            .filter((a) => a !== undefined)
            .reverse()
        )
      }
      const answers = yield* JsonRpc.batch(url, [
        { method: "eth_a", params: [1] },
        { method: "eth_missing", params: [] },
        { method: "eth_b", params: [2] },
        { method: "eth_forgotten", params: [] }
      ])
      assert.deepStrictEqual(answers, [
        { ok: true, result: "eth_a:1" },
        { ok: false, code: -32601, message: "the method eth_missing does not exist", reason: "Unsupported" },
        { ok: true, result: "eth_b:2" },
        { ok: false, code: 0, message: "no answer to eth_forgotten", reason: "Invalid" }
      ])
      assert.strictEqual((seen[0] as ReadonlyArray<Request>).length, 4)
    })
  )

  it.effect("fails as a whole when the node refuses the batch, answers HTTP 429 or 5xx, or not JSON-RPC", () =>
    Effect.gen(function* () {
      const failure = (answer: (res: ServerResponse) => void) => {
        handler = (_, res) => answer(res)
        return Effect.flip(JsonRpc.batch(url, [{ method: "eth_blockNumber", params: [] }]))
      }
      const refused = yield* failure((res) =>
        json(res, { jsonrpc: "2.0", id: null, error: { code: -32005, message: "too many requests" } })
      )
      assert.strictEqual(refused.reason, "RateLimited")
      assert.strictEqual(refused.message, "the node refused the batch: too many requests (-32005)")
      assert.strictEqual((yield* failure((res) => json(res, {}, 429))).reason, "RateLimited")
      const down = yield* failure((res) => json(res, {}, 503))
      assert.deepInclude(down, { reason: "Unavailable", message: "the node answered HTTP 503" })
      assert.isTrue(JsonRpc.retryable(down.reason))
      const teapot = yield* failure((res) => json(res, {}, 418))
      assert.deepInclude(teapot, { reason: "Invalid", message: "the node answered HTTP 418" })
      assert.isFalse(JsonRpc.retryable(teapot.reason))
      assert.strictEqual((yield* failure((res) => res.end("<html>"))).message, "the node's answer is not JSON")
      assert.strictEqual(
        (yield* failure((res) => json(res, { jsonrpc: "2.0", id: 1, result: "0x1" }))).message,
        "the node's answer to a batch is not a list"
      )
    })
  )

  it.effect("tells a node that cannot be reached, or does not answer in time, from one that refuses", () =>
    Effect.gen(function* () {
      const unreachable = yield* Effect.flip(
        JsonRpc.batch("http://127.0.0.1:9", [{ method: "eth_chainId", params: [] }])
      )
      assert.deepInclude(unreachable, { reason: "Unavailable", message: "the node cannot be reached: ECONNREFUSED" })
      assert.isUndefined(unreachable.code)
      handler = () => undefined
      const late = yield* Effect.flip(
        JsonRpc.batch(url, [{ method: "eth_chainId", params: [] }], { timeoutMillis: 50 })
      )
      assert.deepInclude(late, { reason: "Timeout", message: "the node did not answer within 50 ms" })
    })
  )
})

describe("JsonRpc.call", () => {
  it.effect("sends one call on its own; its result, or the node's refusal with its code", () =>
    Effect.gen(function* () {
      handler = (body, res) => {
        const c = body as Request
        assert.isFalse(Array.isArray(body))
        json(
          res,
          c.method === "eth_getLogs"
            ? { jsonrpc: "2.0", id: c.id, error: { code: -32602, message: "block range too wide" } }
            : { jsonrpc: "2.0", id: c.id, result: null }
        )
      }
      assert.isNull(yield* JsonRpc.call(url, "eth_getBlockByNumber", ["0x99", false]))
      const refused = yield* Effect.flip(JsonRpc.call(url, "eth_getLogs", [{}]))
      assert.deepInclude(refused, {
        reason: "Invalid",
        message: "eth_getLogs: block range too wide (-32602)",
        code: -32602
      })
    })
  )
})
