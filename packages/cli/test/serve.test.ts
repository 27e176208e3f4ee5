/** End to end: the built `vigil` executable as a child process, on a real port and a real database file. */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, assert, beforeAll, describe, it } from "vitest"

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))
const children: Array<ChildProcess> = []
const dirs: Array<string> = []

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-cli-"))
  dirs.push(dir)
  return dir
}

interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Starts `vigil serve` in `cwd` and resolves once it logs where it listens (or rejects if it exits first). */
const serve = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string> = []): Promise<Running> => {
  const child = spawn(process.execPath, [bin, "serve", ...args], {
    cwd,
    env: { ...process.env, VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let output = ""
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s]+)/.exec(output)
      if (match?.[1]) resolve({ child, url: match[1], output: () => output, exited })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    void exited.then((code) => reject(new Error(`vigil serve exited with ${code} before listening:\n${output}`)))
  })
}

/** Runs `vigil <args>` to completion. */
const runVigil = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env } })
    children.push(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npm test runs tsc -b before vitest)`)
})

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

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
})
