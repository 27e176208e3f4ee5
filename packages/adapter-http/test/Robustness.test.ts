/** The server under slow, early, many and oversized clients: real sockets against the real server. */
import { connect, type Socket } from "node:net"
import { request as httpRequest } from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { GatedServer } from "@vigil/adapter-http"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"

const { call, issue, ingest } = TestServer

const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

/** Resolves when `socket` closes; with whether the server sent anything first. */
const closed = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let received = ""
    socket.on("data", (chunk) => (received += chunk.toString()))
    socket.on("error", () => {})
    socket.on("close", () => resolve(received))
  })

const portOf = (url: string) => Number(new URL(url).port)

/** One GET over a fresh connection with Node's client: the status, or the error's code. */
const get = (port: number, path: string) =>
  new Promise<number | string>((resolve) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
    req.end()
  })

describe("GatedServer", () => {
  const limits = { headersTimeoutMillis: 10_000, requestTimeoutMillis: 30_000, maxConnections: 4_096 }
  const listening = (server: GatedServer.GatedServer) =>
    new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
    )

  it("holds requests that arrive before a handler is attached and answers them once it is", async () => {
    const server = new GatedServer.GatedServer(limits)
    const port = await listening(server)
    try {
      const early = [get(port, "/a"), get(port, "/b"), get(port, "/c")]
      // Every early request has reached the server (and is held) before the handler is attached.
      await new Promise<void>((resolve) => {
        let seen = 0
        server.on("connection", () => ++seen === early.length && setImmediate(resolve))
      })
      server.on("request", (req, res) => res.writeHead(req.url === "/b" ? 201 : 200).end())
      assert.deepStrictEqual(await Promise.all(early), [200, 201, 200])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it("answers 503 with Retry-After past the bound, and the held ones when it closes before a handler came", async () => {
    const server = new GatedServer.GatedServer(limits)
    const port = await listening(server)
    const held: Array<Promise<number | string>> = []
    for (let i = 0; i <= GatedServer.maxHeld; i++) held.push(get(port, "/"))
    // One more than the bound: that one is answered at once, the others stay held.
    assert.strictEqual(await Promise.race(held), 503)
    server.close()
    const all = await Promise.all(held)
    assert.deepStrictEqual([...new Set(all)], [503])
  }, 30_000)
})

describe("the server's limits", () => {
  it.live(
    "disconnects a client that sends its headers a byte at a time once the header timeout passes",
    () =>
      Effect.gen(function* () {
        const port = portOf(yield* TestServer.baseUrl)
        const outcome = yield* Effect.promise(async () => {
          const socket = connect(port, "127.0.0.1")
          const done = closed(socket)
          const headers = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(10_000)
          let i = 0
          // A byte every 20 ms: the connection is never idle, but its headers never end.
          const trickle = setInterval(() => {
            if (i < headers.length && !socket.destroyed) socket.write(headers[i++]!)
          }, 20)
          const received = await done
          clearInterval(trickle)
          return { received, sent: i }
        })
        // Closed long before the headers could have ended (10,000 bytes at 50 per second).
        assert.isBelow(outcome.sent, 1_000)
        assert.match(outcome.received, /^$|^HTTP\/1\.1 408/)
      }).pipe(
        Effect.provide(TestServer.layer({ connections: { headersTimeoutMillis: 500, requestTimeoutMillis: 1_000 } }))
      ),
    20_000
  )

  it.live(
    "refuses connections beyond the cap and serves again once they close",
    () =>
      Effect.gen(function* () {
        const port = portOf(yield* TestServer.baseUrl)
        const result = yield* Effect.promise(async () => {
          const open: Array<Socket> = []
          for (let i = 0; i < 16; i++) {
            const socket = connect(port, "127.0.0.1")
            socket.on("error", () => {})
            await new Promise<void>((resolve) => socket.on("connect", () => resolve()))
            open.push(socket)
          }
          const over = await get(port, "/health")
          for (const s of open) s.destroy()
          await Promise.all(open.map((s) => (s.closed ? Promise.resolve() : new Promise((r) => s.on("close", r)))))
          // The server counts a connection gone once it has seen it close; ask until it has.
          let after: number | string = 0
          for (let tries = 0; tries < 200 && after !== 200; tries++) after = await get(port, "/health")
          return { over, after }
        })
        assert.oneOf(result.over, ["ECONNRESET", "EPIPE", "socket hang up"])
        assert.strictEqual(result.after, 200)
      }).pipe(Effect.provide(TestServer.layer({ connections: { maxConnections: 16 } }))),
    20_000
  )
})

describe("bounded bodies", () => {
  const live = (title: string, body: () => Effect.Effect<void, unknown, any>, hotRoutes = true) =>
    it.live(title, () => body().pipe(Effect.provide(TestServer.layer({ hotRoutes }))) as Effect.Effect<void, unknown>)

  for (const hotRoutes of [true, false]) {
    live(
      `refuses bodies nested deeper than 8 levels and batch items over 128 characters, without charging (hot routes ${hotRoutes ? "on" : "off"})`,
      () =>
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" }
          const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
          for (const [path, body] of [
            ["/api/v3/intel", `{"address":"${CLEAN}","options":{"chain":${nested(20_000)}}}`],
            ["/api/v3/intel/batch", `{"addresses":${nested(20_000)}}`],
            ["/api/v2/webhooks", `{"url":${nested(9)}}`]
          ] as const) {
            const r = yield* call("POST", path, { headers: auth, body })
            assert.strictEqual(r.status, 400, path)
            assert.match(r.json.details.field ?? r.json.details.reason, /^body|nested deeper than 8 levels$/, path)
            assert.match(r.json.message ?? r.json.details.reason, /nested deeper than 8 levels/, path)
          }
          // Eight levels, and strings holding brackets, are fine.
          const fine = yield* call("POST", "/api/v3/intel", {
            headers: auth,
            body: `{"address":"${CLEAN}","options":{"chain":"[[[[[[[[[["}}`
          })
          assert.strictEqual(fine.status, 400)
          assert.strictEqual(fine.json.details.field, "options.chain")
          const long = yield* call("POST", "/api/v3/intel/batch", {
            headers: auth,
            json: { addresses: [CLEAN, "0x" + "a".repeat(200)] }
          })
          assert.strictEqual(long.status, 400)
          assert.strictEqual(long.json.details.field, "addresses.1")
          assert.match(long.json.message, /at most 128 characters/)
          const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
          assert.strictEqual(status.json.usage.dailyUsed, 0)
        }),
      hotRoutes
    )
  }

  live("charges a batch per address screened: invalid items are free, as a single invalid address is", () =>
    Effect.gen(function* () {
      yield* ingest("test-sanctions", "sanctions", [LAZARUS], "2022-04-14")
      const key = yield* issue({ name: "Acme" })
      const batch = (addresses: ReadonlyArray<string>) =>
        call("POST", "/api/v3/intel/batch", { headers: { authorization: `Bearer ${key}` }, json: { addresses } })
      const used = () =>
        Effect.map(
          call("GET", "/api/v2/status", { headers: { "x-api-key": key } }),
          (r) => r.json.usage.dailyUsed as number
        )
      const invalid = yield* batch(["not-an-address", "0x123"])
      assert.strictEqual(invalid.status, 200)
      assert.strictEqual(invalid.json.summary.failed, 2)
      assert.strictEqual(yield* used(), 0)
      const mixed = yield* batch([LAZARUS, "nope", CLEAN])
      assert.deepInclude(mixed.json.summary, { successful: 2, failed: 1 })
      assert.strictEqual(yield* used(), 2)
    })
  )
})
