/**
 * `--db` / `VIGIL_DB` names a SQLite file or a PostgreSQL database: a postgres:// URL keeps everything on the
 * server, shared by every instance; any other scheme:// is refused in one line, and nothing is created for it; a
 * password in the URL never reaches a message.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { Postgres } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

let run: Postgres.RunDatabase | undefined

beforeAll(async () => {
  run = await Postgres.createDatabase()
})

afterAll(async () => {
  await run?.drop()
})

/** The one line a failed command printed. */
const oneLine = (stderr: string) => {
  const lines = stderr.trim().split("\n")
  assert.lengthOf(lines, 1, stderr)
  return lines[0]!
}

describe("vigil --db", () => {
  it("refuses a scheme it does not know in one line, creating nothing", async () => {
    const cwd = tempDir()
    const refused = await runVigil(cwd, {}, ["keys", "list", "--db", "mysql://root@127.0.0.1/vigil"])
    assert.strictEqual(refused.code, 1)
    assert.strictEqual(
      oneLine(refused.stderr),
      "vigil: --db mysql://root@127.0.0.1/vigil: mysql:// is not a store Vigil knows; give a file path (SQLite) or a postgres:// URL"
    )
    assert.deepStrictEqual(readdirSync(cwd), [], "no folder named after the URL")
    const fromEnv = await runVigil(cwd, { VIGIL_DB: "ftp://example.com/v.db" }, ["keys", "list"])
    assert.strictEqual(fromEnv.code, 1)
    assert.match(oneLine(fromEnv.stderr), /ftp:\/\/ is not a store Vigil knows/)
    assert.isFalse(existsSync(join(cwd, "ftp:")))
  })

  it("takes TLS from the URL's sslmode: required and not offered is refused in one line, never sent in the clear", async () => {
    const cwd = tempDir()
    const withMode = (mode: string) => {
      const url = new URL(run!.url)
      url.searchParams.set("sslmode", mode)
      return url.toString()
    }
    // The machine's server does not offer TLS: `require` (and verify-ca / verify-full) must not fall back to plain.
    for (const mode of ["require", "verify-full"]) {
      const refused = await runVigil(cwd, {}, ["keys", "list", "--db", withMode(mode)])
      assert.strictEqual(refused.code, 1, mode)
      assert.match(
        oneLine(refused.stderr),
        /^vigil: cannot use the database .*: Unavailable: The server does not support TLS$/
      )
    }
    const preferred = await runVigil(cwd, {}, ["keys", "list", "--db", withMode("prefer")])
    assert.strictEqual(preferred.code, 0, preferred.stderr)
    const unknown = await runVigil(cwd, {}, ["keys", "list", "--db", withMode("sometimes")])
    assert.strictEqual(unknown.code, 1)
    assert.match(oneLine(unknown.stderr), /Unrecognized sslmode in URL: "sometimes"$/)
  })

  it("keeps API keys on PostgreSQL: created, listed and revoked through the server", async () => {
    const cwd = tempDir()
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", run!.url, "--name", "Acme", "--daily", "500"])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout)
    const listed = await runVigil(cwd, { VIGIL_DB: run!.url }, ["keys", "list"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.deepStrictEqual(
      listed.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .map((k) => [k.id, k.name, k.daily, k.status]),
      [[key.id, "Acme", 500, "active"]]
    )
    const revoked = await runVigil(cwd, {}, ["keys", "revoke", "--db", run!.url, key.id])
    assert.strictEqual(revoked.code, 0, revoked.stderr)
    assert.strictEqual(JSON.parse(revoked.stdout).status, "revoked")
    assert.deepStrictEqual(readdirSync(cwd), [], "nothing written beside the command")
  })

  it("takes the pool size, statement timeout and lock timeout from the environment, refusing a bad one in one line", async () => {
    const cwd = tempDir()
    const ok = await runVigil(
      cwd,
      { VIGIL_PG_POOL_SIZE: "3", VIGIL_PG_STATEMENT_TIMEOUT_MS: "5000", VIGIL_PG_LOCK_TIMEOUT_MS: "2000" },
      ["keys", "list", "--db", run!.url]
    )
    assert.strictEqual(ok.code, 0, ok.stderr)
    const refused = await runVigil(cwd, { VIGIL_PG_POOL_SIZE: "0" }, ["keys", "list", "--db", run!.url])
    assert.strictEqual(refused.code, 1)
    assert.strictEqual(oneLine(refused.stderr), "vigil: VIGIL_PG_POOL_SIZE: must be a whole number from 3 to 1000")
    const slow = await runVigil(cwd, { VIGIL_PG_STATEMENT_TIMEOUT_MS: "soon" }, ["screen", "--db", run!.url, CLEAN])
    assert.strictEqual(slow.code, 1)
    assert.strictEqual(
      oneLine(slow.stderr),
      "vigil: VIGIL_PG_STATEMENT_TIMEOUT_MS: must be a whole number from 100 to 3600000"
    )
    const waiting = await runVigil(cwd, { VIGIL_PG_LOCK_TIMEOUT_MS: "50" }, ["keys", "list", "--db", run!.url])
    assert.strictEqual(waiting.code, 1)
    assert.strictEqual(
      oneLine(waiting.stderr),
      "vigil: VIGIL_PG_LOCK_TIMEOUT_MS: must be a whole number from 100 to 3600000"
    )
  })

  it("never prints the password of a URL", async () => {
    const failed = await runVigil(tempDir(), {}, ["keys", "list", "--db", "postgres://vigil:s3cret@127.0.0.1:9/vigil"])
    assert.strictEqual(failed.code, 1)
    const line = oneLine(failed.stderr)
    assert.include(line, "postgres://vigil:***@127.0.0.1:9/vigil")
    assert.notInclude(line, "s3cret")
  })
})
