import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { createQuota } from "../src/quota-facade.ts"
import { createVigil } from "../src/create-vigil.ts"
import { makeHostServer } from "../src/web-handler.ts"
import { verifyWebhook } from "../src/verify-webhook.ts"
import { WebhookSigning } from "@vigil/core"

const dir = mkdtempSync(join(tmpdir(), "vigil-examples-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("examples", () => {
  it("quota facade allows the limit per minute, refuses the rest, and remembers across reopening", async () => {
    const file = join(dir, "quota.db")
    const now = Date.UTC(2026, 0, 1, 12, 0, 30)
    const first = createQuota(file, 3)
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(await first.take("acme", now))
    await first.close()
    assert.deepStrictEqual(seen, [
      { allowed: true, remaining: 2 },
      { allowed: true, remaining: 1 },
      { allowed: true, remaining: 0 },
      { allowed: false, remaining: 0 }
    ])
    const again = createQuota(file, 3)
    assert.deepStrictEqual(await again.take("acme", now), { allowed: false, remaining: 0 })
    assert.deepStrictEqual(await again.take("other", now), { allowed: true, remaining: 2 })
    assert.deepStrictEqual(await again.take("acme", now + 60_000), { allowed: true, remaining: 2 })
    await again.close()
  })

  it("web handler serves Vigil under /vigil inside a host's own server", async () => {
    const server = makeHostServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      if (address === null || typeof address !== "object") throw new Error("no address")
      const base = `http://127.0.0.1:${address.port}`
      assert.strictEqual(await (await fetch(`${base}/`)).text(), "host app\n")
      const health = await fetch(`${base}/vigil/health`)
      assert.strictEqual(health.status, 200)
      const body = (await health.json()) as { status: string; storage: { kind: string } }
      assert.strictEqual(body.status, "ok")
      assert.strictEqual(body.storage.kind, "memory")
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("createVigil facade", () => {
  it("screens with Promises over a SQLite file filled by an ingest", async () => {
    const db = join(dir, "facade.db")
    const { SqliteAdapter } = await import("@vigil/adapter-sqlite")
    const { Ingestion } = await import("@vigil/core")
    const { Effect, Stream } = await import("effect")
    const list = "0x8589427373D6D84E98730D7795D8f6f8731FDA16\n"
    await Effect.runPromise(
      Ingestion.Ingest.run(
        { kind: "address-list", list: "ours", source: "Ours", mode: "snapshot", origin: "inline", asOf: "2024-01-01" },
        Ingestion.AddressList.make({ list: "ours", category: "sanctions" }),
        Stream.make(new TextEncoder().encode(list))
      ).pipe(Effect.provide(SqliteAdapter.layer({ filename: db })))
    )
    const vigil = createVigil({ db })
    try {
      const hit = await vigil.screen("0x8589427373d6d84e98730d7795d8f6f8731fda16")
      assert.isTrue("score" in hit && hit.flags.sanctioned && hit.recommendation.action === "BLOCK")
      const bad = await vigil.screen("0x123")
      assert.deepStrictEqual(bad, {
        address: "0x123",
        error: { code: "invalid_address", message: "an EVM address has 40 hex characters after 0x, this has 3" }
      })
      assert.deepStrictEqual(
        (await vigil.lists()).map((l) => l.list),
        ["ours"]
      )
    } finally {
      await vigil.close()
    }
  })

  it("verifies a delivery signed the way Vigil signs it, and refuses tampering and replays", () => {
    const secret = WebhookSigning.newSecret()
    const body = JSON.stringify({ correlation_id: "req_x", data: { success: true } })
    const now = 1_800_000_000
    const headers = WebhookSigning.headers(secret, "msg_1", now, body)
    assert.isTrue(verifyWebhook(secret, headers, body, now))
    assert.isFalse(verifyWebhook(secret, headers, body.replace("true", "false"), now))
    assert.isFalse(verifyWebhook(secret, headers, body, now + 3600), "a replay an hour later")
    assert.isFalse(verifyWebhook(WebhookSigning.newSecret(), headers, body, now))
    assert.isFalse(verifyWebhook(secret, { ...headers, "webhook-id": "msg_2" }, body, now))
  })
})
