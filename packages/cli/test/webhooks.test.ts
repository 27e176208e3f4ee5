/**
 * End to end: `vigil serve` killed with SIGKILL mid-delivery loses no webhook delivery; and plain HTTP to a receiver
 * on this machine, granted for development to a server on loopback only.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runVigil, serve, tempDir } from "./VigilProcess.ts"

const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

describe("webhook deliveries across a crash", () => {
  it("delivers every accepted request exactly once after dedup by webhook-id, through kill -9 and restarts", async () => {
    const cwd = tempDir()
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", "--name", "Acme", "--qps", "1000"])
    const key = JSON.parse(created.stdout).key as string
    const env = {
      VIGIL_DB: "v.db",
      VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      VIGIL_WEBHOOK_CA_FILE: certs.caFile,
      VIGIL_WEBHOOK_TIMEOUT_MS: "1000",
      VIGIL_WEBHOOK_RETRIES: "20",
      VIGIL_WEBHOOK_BACKOFF_MS: "100"
    }
    // The receiver answers the first attempts with 503 and is then stopped, so deliveries are in every state.
    let receiver = await Receiver.start(certs, (n) => (n < 3 ? 503 : 200))
    const port = receiver.port
    let server = await serve(cwd, env)
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    assert.strictEqual((await post("/api/v2/webhooks", { url: receiver.url("/hook") })).status, 201)
    const correlations: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const accepted = await post("/api/v2/intel/webhook", { address: CLEAN })
      assert.strictEqual(accepted.status, 202)
      correlations.push(((await accepted.json()) as { correlation_id: string }).correlation_id)
    }
    await receiver.until((got) => got.length >= 3)
    await receiver.close()
    const before = receiver.received.slice()
    server.child.kill("SIGKILL")
    await server.exited

    receiver = await Receiver.start(certs, () => 200, port)
    server = await serve(cwd, env)
    const stats = async () =>
      ((await (await fetch(`${server.url}/api/v2/webhooks/stats`, { headers: { "x-api-key": key } })).json()) as any)
        .stats
    for (let waited = 0; (await stats()).totalDeliveries < 10 && waited < 20_000; waited += 100) {
      await new Promise((done) => setTimeout(done, 100))
    }
    const final = await stats()
    assert.deepStrictEqual([final.totalDeliveries, final.webhooks[0].pending, final.webhooks[0].failed], [10, 0, 0])
    const delivered = [...before, ...receiver.received].filter((g) => g.status === 200)
    const byId = new Map<string, string>()
    for (const got of delivered) byId.set(String(got.headers["webhook-id"]), JSON.parse(got.body).correlation_id)
    assert.strictEqual(byId.size, 10, "ten deliveries after dedup by webhook-id")
    assert.deepStrictEqual([...new Set(byId.values())].sort(), [...correlations].sort())
    await receiver.close()
  }, 60_000)

  it("refuses to start with an unreadable CA file or a bad delivery setting, in one line", async () => {
    const cwd = tempDir()
    for (const [env, message] of [
      [{ VIGIL_WEBHOOK_CA_FILE: "missing.pem" }, /VIGIL_WEBHOOK_CA_FILE missing\.pem/],
      [{ VIGIL_WEBHOOK_RETRIES: "many" }, /VIGIL_WEBHOOK_RETRIES/],
      [{ VIGIL_WEBHOOK_TIMEOUT_MS: "5" }, /VIGIL_WEBHOOK_TIMEOUT_MS/],
      [{ VIGIL_WEBHOOK_PER_KEY: "0" }, /VIGIL_WEBHOOK_PER_KEY/],
      [{ VIGIL_WEBHOOK_PER_DESTINATION: "many" }, /VIGIL_WEBHOOK_PER_DESTINATION/]
    ] as const) {
      const r = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_PORT: "0", ...env }, ["serve"])
      assert.strictEqual(r.code, 1, JSON.stringify(env))
      assert.match(r.stderr, message)
    }
  })
})

describe("plain HTTP to this machine while developing (VIGIL_WEBHOOK_LOOPBACK_HTTP)", () => {
  it("delivers to http://127.0.0.1 only when granted, on a server that listens on loopback, and nowhere else", async () => {
    const cwd = tempDir()
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", "--name", "Dev", "--qps", "1000"])
    const key = JSON.parse(created.stdout).key as string
    // A receiver without a certificate, as a first one on a laptop is.
    const got: Array<{ path: string; signature: string | undefined; body: string }> = []
    const receiver = createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        got.push({ path: req.url ?? "", signature: req.headers["webhook-signature"] as string | undefined, body })
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done))
    const url = (path: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`
    const post = (server: { url: string }, path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body)
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))
    try {
      // Not granted: refused, and the answer says how to grant it.
      const plain = await serve(cwd, { VIGIL_DB: "v.db" })
      const refused = await post(plain, "/api/v2/webhooks", { url: url("/hook") })
      plain.child.kill("SIGTERM")
      await plain.exited
      assert.strictEqual(refused.status, 400)
      assert.include(JSON.stringify(refused.json), "VIGIL_WEBHOOK_LOOPBACK_HTTP=1")

      const dev = await serve(cwd, { VIGIL_DB: "v.db", VIGIL_WEBHOOK_LOOPBACK_HTTP: "1" })
      try {
        assert.strictEqual((await post(dev, "/api/v2/webhooks", { url: url("/hook") })).status, 201)
        const channel = await post(dev, "/v1/notifications", { type: "webhook", name: "local", url: url("/channel") })
        assert.strictEqual(channel.status, 201, JSON.stringify(channel.json))
        // Plain HTTP anywhere else stays refused.
        const elsewhere = await post(dev, "/api/v2/webhooks", { url: "http://example.com/hook" })
        assert.strictEqual(elsewhere.status, 400)
        assert.strictEqual((await post(dev, "/api/v2/intel/webhook", { address: CLEAN })).status, 202)
        for (let waited = 0; !got.some((g) => g.path === "/hook") && waited < 10_000; waited += 50)
          await new Promise((done) => setTimeout(done, 50))
        const delivered = got.find((g) => g.path === "/hook")
        assert.isDefined(delivered, "delivered over plain HTTP")
        assert.match(delivered!.signature ?? "", /^v1,/, "signed as every delivery is")
      } finally {
        dev.child.kill("SIGTERM")
        await dev.exited
      }

      // Granted to a server reachable from other machines: refused at start, in one line.
      const open = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_WEBHOOK_LOOPBACK_HTTP: "1" }, [
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        "0"
      ])
      assert.strictEqual(open.code, 1)
      assert.strictEqual(
        open.stderr.trim(),
        "vigil: VIGIL_WEBHOOK_LOOPBACK_HTTP=1 needs the server on loopback (--host 127.0.0.1, ::1 or localhost), not 0.0.0.0"
      )
    } finally {
      await new Promise((done) => receiver.close(done))
    }
  }, 60_000)
})
