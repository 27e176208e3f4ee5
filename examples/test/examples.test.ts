import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { createQuota } from "../src/quota-facade.ts"
import { makeHostServer } from "../src/web-handler.ts"

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
