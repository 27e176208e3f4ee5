/**
 * Ingest must not take screening down: `vigil serve` on a SQLite file answers v3 requests while `vigil ingest`, in
 * another process, commits a generated list of 300,000 addresses into the same file. The ingest writes in slices,
 * so no writer waits a second for the lock (a third process keeps asking SQLite for it), every request is answered
 * and `/health` stays ready; once it is committed, a listed address answers with the new list.
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { caller, runVigil, serve, spawnVigil, tempDir } from "./VigilProcess.ts"

/**
 * Another writer on the file, in a process of its own: it takes the write lock and lets it go again and again, each
 * time waiting at most a second for it (SQLite's own busy timeout), until its input closes; then it prints how many
 * times the lock stayed held past that second, and its longest wait. What a request needing the lock would meet.
 */
const lockWatcher = (file: string) => {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))})
       const db = new Database(${JSON.stringify(file)})
       db.pragma("busy_timeout = 1000")
       let open = true, held = 0, taken = 0, worst = 0
       process.stdin.on("end", () => (open = false)).resume()
       const round = () => {
         if (!open) return console.log(JSON.stringify({ held, taken, worst: Math.round(worst) }))
         const started = performance.now()
         try { db.prepare("BEGIN IMMEDIATE").run(); db.prepare("COMMIT").run(); taken++ }
         catch (e) { if (e.code !== "SQLITE_BUSY") throw e; held++ }
         worst = Math.max(worst, performance.now() - started)
         setTimeout(round, 10)
       }
       round()`
    ],
    { stdio: ["pipe", "pipe", "inherit"] }
  )
  let out = ""
  child.stdout.on("data", (c: Buffer) => (out += c.toString()))
  const exited = new Promise<void>((done) => child.on("exit", () => done()))
  return {
    stop: async () => {
      child.stdin.end()
      await exited
      return JSON.parse(out) as { held: number; taken: number; worst: number }
    }
  }
}

/** The n-th address of the generated list. */
const listed = (n: number) => `0x${(BigInt(n) * 7_919n + 0x1234567890n).toString(16).padStart(40, "0")}`

describe("an ingest while serving", () => {
  it("commits 300,000 records while v3 requests are answered, none refused, and /health stays ready", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "big.txt"), `${Array.from({ length: 300_000 }, (_, i) => listed(i)).join("\n")}\n`)
    const created = await runVigil(cwd, {}, [
      ...["keys", "create", "--db", "v.db", "--name", "Acme"],
      ...["--qps", "10000", "--daily", "10000000", "--monthly", "100000000"]
    ])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    const server = await serve(cwd, { VIGIL_DB: "v.db" })
    const call = caller(() => server.url, key)

    const watcher = lockWatcher(join(cwd, "v.db"))
    const ingest = spawnVigil(cwd, [
      ...["ingest", "address-list", "big.txt", "--list", "big", "--category", "sanctions", "--db", "v.db"]
    ])
    let ingesting = true
    void ingest.exited.then(() => (ingesting = false))
    const answers = new Map<number, number>()
    const health = new Map<number, number>()
    let slowest = 0
    let n = 0
    // Four clients screening back to back, and /health read between their requests, until the ingest has ended.
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        while (ingesting) {
          const started = performance.now()
          const r = await call("POST", "/api/v3/intel", { address: listed(n++ * 13) })
          slowest = Math.max(slowest, performance.now() - started)
          answers.set(r.status, (answers.get(r.status) ?? 0) + 1)
          if (client === 0) {
            const h = await fetch(`${server.url}/health`)
            await h.arrayBuffer()
            health.set(h.status, (health.get(h.status) ?? 0) + 1)
          }
        }
      })
    )
    assert.strictEqual(await ingest.exited, 0, "the ingest committed")
    const lock = await watcher.stop()
    assert.strictEqual(lock.held, 0, `the write lock was never held a second on end (taken ${lock.taken} times)`)
    const total = [...answers.values()].reduce((a, b) => a + b, 0)
    assert.isAbove(total, 20, "requests ran all along the ingest")
    assert.deepStrictEqual([...answers.keys()], [200], `every v3 request answered: ${JSON.stringify([...answers])}`)
    assert.deepStrictEqual([...health.keys()], [200], `/health ready all along: ${JSON.stringify([...health])}`)
    console.log(
      `ingest while serving: ${total} v3 requests, the slowest ${slowest.toFixed(0)} ms; the lock watcher's longest wait ${lock.worst} ms`
    )

    // What it committed is in force, whole.
    const hit = await call("POST", "/api/v3/intel", { address: listed(299_999) })
    assert.strictEqual(hit.status, 200)
    // A curated list (not an official one) of sanctions: reviewed, with the list as evidence.
    assert.strictEqual(hit.json.recommendation.action, "REVIEW")
    assert.include(hit.json.recommendation.details, "big")
    const lists = await runVigil(cwd, {}, ["lists", "--db", "v.db"])
    const big = JSON.parse(lists.stdout.trim().split("\n")[0]!) as { list: string; active: number }
    assert.deepStrictEqual([big.list, big.active], ["big", 300_000])
    server.child.kill("SIGKILL")
    await server.exited
  }, 120_000)
})
