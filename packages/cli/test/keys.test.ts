/** End to end: `vigil keys` and a served database, with lists ingested by another process while the server runs. */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { ingestWatchArgs, runVigil, serve, tempDir } from "./VigilProcess.ts"

const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

const createKey = async (cwd: string, args: ReadonlyArray<string>) => {
  const created = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", ...args])
  assert.strictEqual(created.code, 0, created.stderr)
  assert.match(created.stderr, /cannot be shown again/)
  return JSON.parse(created.stdout)
}

describe("vigil keys", () => {
  it("creates a key shown once, stores only its hash, lists and revokes it", async () => {
    const cwd = tempDir()
    const key = await createKey(cwd, [
      "--name",
      "Acme Exchange",
      "--qps",
      "3",
      "--daily",
      "30",
      "--expires",
      "2099-01-01"
    ])
    assert.match(key.key, /^vgl_[0-9a-f]{16}_\w+$/)
    assert.deepInclude(key, { name: "Acme Exchange", status: "active", qps: 3, daily: 30, monthly: 300000 })
    assert.strictEqual(key.expiresAt, "2099-01-01T00:00:00.000Z")
    const secret = key.key.split("_")[2]
    for (const file of ["v.db", "v.db-wal"]) {
      let bytes = ""
      try {
        bytes = readFileSync(join(cwd, file), "latin1")
      } catch {
        continue
      }
      assert.notInclude(bytes, secret, `${file} holds the key in plain text`)
    }
    const listed = await runVigil(cwd, {}, ["keys", "list", "--db", "v.db"])
    const rows = listed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    assert.deepStrictEqual(
      rows.map((r) => [r.id, r.name, r.status, "key" in r, "hash" in r]),
      [[key.id, "Acme Exchange", "active", false, false]]
    )
    const revoked = await runVigil(cwd, {}, ["keys", "revoke", "--db", "v.db", key.id])
    assert.strictEqual(revoked.code, 0)
    assert.strictEqual(JSON.parse(revoked.stdout).status, "revoked")
    const again = await runVigil(cwd, {}, ["keys", "revoke", "--db", "v.db", "0123456789abcdef"])
    assert.strictEqual(again.code, 1)
    assert.match(again.stderr, /no API key with id 0123456789abcdef/)
  })

  it("refuses bad limits and expiry dates with one line and exit 1", async () => {
    const cwd = tempDir()
    for (const args of [
      ["--name", "  "],
      ["--name", "A", "--qps", "0"],
      ["--name", "A", "--expires", "2001-01-01"],
      ["--name", "A", "--expires", "soon"]
    ]) {
      const r = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", ...args])
      assert.strictEqual(r.code, 1, args.join(" "))
      assert.match(r.stderr, /^vigil: /, args.join(" "))
    }
    const listed = await runVigil(cwd, {}, ["keys", "list", "--db", "v.db"])
    assert.strictEqual(listed.stdout, "")
  })

  it("serves a key made by the CLI, and an ingest by another process reaches cached answers at once", async () => {
    const cwd = tempDir()
    const key = (await createKey(cwd, ["--name", "Acme"])).key
    writeFileSync(join(cwd, "list1.txt"), `${LAZARUS}\n`)
    writeFileSync(join(cwd, "list2.txt"), `${LAZARUS}\n${CLEAN}\n`)
    const ingest = (file: string, asOf: string) =>
      runVigil(cwd, {}, ingestWatchArgs(file, asOf, ["--db", "v.db", "--authority", "official"]))
    assert.strictEqual((await ingest("list1.txt", "2025-01-01")).code, 0)
    const running = await serve(cwd, { VIGIL_DB: "v.db" })
    const v2 = async (address: string) => {
      const response = await fetch(`${running.url}/api/v2/intel?address=${address}`, { headers: { "x-api-key": key } })
      return { cache: response.headers.get("x-cache"), body: (await response.json()) as any }
    }
    assert.strictEqual((await v2(CLEAN)).body.data.risk_assessment.risk_level, "clean")
    assert.strictEqual((await v2(CLEAN)).cache, "HIT")
    assert.strictEqual((await ingest("list2.txt", "2025-06-01")).code, 0)
    const after = await v2(CLEAN)
    assert.strictEqual(after.cache, "MISS")
    assert.strictEqual(after.body.data.risk_assessment.risk_level, "critical")
    const status = await fetch(`${running.url}/api/v2/status`, { headers: { authorization: `Bearer ${key}` } })
    assert.strictEqual(((await status.json()) as any).usage.dailyUsed, 3)
  })
})
