/** End to end: a stored list altered on disk is found by `vigil check` and at start, and never answers clean. */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { runVigil, serve, tempDir } from "./VigilProcess.ts"

const LAZARUS = "0x098b716b8aaf21512996dc57eb0615e2383e2f96"
const OTHER = "0x8589427373d6d84e98730d7795d8f6f8731fda16"

describe("vigil check", () => {
  it("finds a list whose stored records were altered; screening then answers incomplete, never a clean ALLOW", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "list.txt"), `${LAZARUS}\n${OTHER}\n`)
    const ingest = await runVigil(cwd, {}, [
      "ingest",
      "address-list",
      "list.txt",
      "--list",
      "ours",
      "--category",
      "sanctions",
      "--authority",
      "official",
      "--db",
      "v.db",
      "--as-of",
      "2024-01-01"
    ])
    assert.strictEqual(ingest.code, 0, ingest.stderr)
    const clean = await runVigil(cwd, {}, ["check", "--db", "v.db"])
    assert.strictEqual(clean.code, 0, clean.stderr)
    assert.deepInclude(JSON.parse(clean.stdout), { integrity: "ok", problems: [], lists: 1, damaged_lists: [] })

    // Change a few bytes of the stored listing date of every record (no index covers it), as a failing disk
    // or a stray write would: the address would still match, so only the digest can tell.
    const file = join(cwd, "v.db")
    const bytes = readFileSync(file)
    const from = Buffer.from("2024-01-01")
    const to = Buffer.from("2099-01-01")
    let changed = 0
    for (let at = bytes.indexOf(from); at !== -1; at = bytes.indexOf(from, at + 1)) {
      to.copy(bytes, at)
      changed++
    }
    assert.isAbove(changed, 0)
    writeFileSync(file, bytes)

    const damaged = await runVigil(cwd, {}, ["check", "--db", "v.db"])
    assert.strictEqual(damaged.code, 1)
    const report = JSON.parse(damaged.stdout)
    assert.strictEqual(report.integrity, "failed")
    assert.deepStrictEqual(report.damaged_lists, ["ours"])
    assert.match(damaged.stderr, /^vigil: v\.db failed verification: /)

    // The address would answer ALLOW from the altered record (listed from 2099): it is marked incomplete instead.
    const screened = JSON.parse((await runVigil(cwd, {}, ["screen", LAZARUS, "--db", "v.db"])).stdout)
    assert.isFalse(screened.metadata.is_complete)
    assert.notStrictEqual(screened.recommendation.action, "ALLOW")
    assert.include(screened.recommendation.details, "ours")

    const running = await serve(cwd, { VIGIL_DB: "v.db" })
    const health = await fetch(`${running.url}/health`)
    assert.strictEqual(health.status, 503)
    assert.deepInclude(await health.json(), { status: "degraded", reason: "IntegrityFailed" })
    assert.strictEqual((await fetch(`${running.url}/health/live`)).status, 200)
  }, 60_000)
})
