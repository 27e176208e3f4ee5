/** End to end: the built `vigil` executable as a child process, on a real port and a real database file. */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { runVigil, serve, tempDir } from "./VigilProcess.ts"

describe("vigil serve", () => {
  it("serves /health on the embedded default database and creates ./.vigil/vigil.db", async () => {
    const cwd = tempDir()
    const { VIGIL_DB: _, ...env } = process.env
    const running = await serve(cwd, { ...env } as Record<string, string>)
    assert.match(
      running.output(),
      /Vigil 0\.1\.0 listening on http:\/\/127\.0\.0\.1:\d+ \(storage: sqlite \.\/\.vigil\/vigil\.db\)/
    )
    assert.strictEqual(running.output().trim().split("\n").length, 1)
    const response = await fetch(`${running.url}/health`)
    assert.strictEqual(response.status, 200)
    const body = (await response.json()) as { status: string; storage: { kind: string } }
    assert.strictEqual(body.status, "ok")
    assert.strictEqual(body.storage.kind, "sqlite")
    assert.isTrue(existsSync(join(cwd, ".vigil", "vigil.db")))
    running.child.kill("SIGTERM")
    assert.strictEqual(await running.exited, 0)
  })

  it("shuts down cleanly on SIGINT: exit 0, listener closed, database checkpointed and closed", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "data/custom.db" })
    assert.strictEqual((await fetch(`${running.url}/health`)).status, 200)
    running.child.kill("SIGINT")
    assert.strictEqual(await running.exited, 0)
    assert.isTrue(existsSync(join(cwd, "data", "custom.db")))
    assert.isFalse(existsSync(join(cwd, "data", "custom.db-wal")), "WAL is folded back in when the last handle closes")
    const refused = await fetch(`${running.url}/health`).then(
      () => false,
      () => true
    )
    assert.isTrue(refused)
  })

  it("takes --db, --host and --port over the environment", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "ignored.db", VIGIL_PORT: "1" }, ["--db", "flag.db", "--port", "0"])
    assert.match(running.output(), /storage: sqlite flag\.db/)
    assert.strictEqual((await fetch(`${running.url}/health`)).status, 200)
    assert.isTrue(existsSync(join(cwd, "flag.db")))
    assert.isFalse(existsSync(join(cwd, "ignored.db")))
    running.child.kill("SIGTERM")
    await running.exited
  })

  it("refuses a file that is not a database with one clear line, exit 1, and leaves the file alone", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "notes.db"), "my notes\n")
    const result = await runVigil(cwd, { VIGIL_DB: "notes.db", VIGIL_PORT: "0" }, ["serve"])
    assert.strictEqual(result.code, 1)
    assert.strictEqual(
      result.stderr.trim(),
      "vigil: cannot use the database notes.db: Corrupt: SQLITE_NOTADB: file is not a database"
    )
    assert.strictEqual(readFileSync(join(cwd, "notes.db"), "utf8"), "my notes\n")
  })

  it("refuses a port that is taken, naming it", async () => {
    const cwd = tempDir()
    const first = await serve(cwd, { VIGIL_DB: "a.db" })
    const port = new URL(first.url).port
    const second = await runVigil(cwd, { VIGIL_DB: "b.db", VIGIL_HOST: "127.0.0.1", VIGIL_PORT: port }, ["serve"])
    assert.strictEqual(second.code, 1)
    assert.match(second.stderr, new RegExp(`^vigil: cannot listen on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`))
    first.child.kill("SIGTERM")
    await first.exited
  })

  it("rejects an out-of-range port and a malformed VIGIL_PORT", async () => {
    const cwd = tempDir()
    const flag = await runVigil(cwd, {}, ["serve", "--port", "70000"])
    assert.strictEqual(flag.code, 1)
    assert.match(flag.stdout + flag.stderr, /Invalid value for flag --port: "70000"/)
    const env = await runVigil(cwd, { VIGIL_PORT: "eighty" }, ["serve"])
    assert.strictEqual(env.code, 1)
    assert.match(env.stdout + env.stderr, /VIGIL_PORT/)
    assert.isFalse(existsSync(join(cwd, ".vigil")), "nothing is created when the configuration is invalid")
  })

  it("takes VIGIL_HOT_ROUTES=off (every request through the router) and refuses other values in one line", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "v.db", VIGIL_HOT_ROUTES: "off" })
    const response = await fetch(`${running.url}/api/v3/intel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" })
    })
    assert.strictEqual(response.status, 401)
    assert.deepStrictEqual(await response.json(), { error: "Unauthorized", message: "Invalid or missing API key" })
    running.child.kill("SIGTERM")
    assert.strictEqual(await running.exited, 0)
    const bad = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_PORT: "0", VIGIL_HOT_ROUTES: "maybe" }, ["serve"])
    assert.strictEqual(bad.code, 1)
    assert.strictEqual(bad.stderr.trim(), "vigil: invalid VIGIL_HOT_ROUTES: expected on or off")
  })
})
