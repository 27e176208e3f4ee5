/**
 * Several `vigil serve` processes on one PostgreSQL database acting as one service: a key, its quota and the
 * lists are the database's, so what one process or the CLI changes, every process answers by at once.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { Postgres } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ingestWatchArgs, runVigil, serve, tempDir } from "./VigilProcess.ts"

const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

let run: Postgres.RunDatabase | undefined
let certs: Receiver.Certificates

beforeAll(async () => {
  run = await Postgres.createDatabase()
  certs = Receiver.certificates()
})

afterAll(async () => {
  certs.dispose()
  await run?.drop()
})

describe("two vigil serve processes on one PostgreSQL database", () => {
  it("share lists, keys and quotas: an ingest or a revocation by the CLI reaches both at once, a quota is exact", async () => {
    const cwd = tempDir()
    const db = run!.url
    const created = await runVigil(cwd, {}, [
      "keys",
      "create",
      "--db",
      db,
      "--name",
      "Acme",
      "--daily",
      "508",
      "--qps",
      "1000"
    ])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    writeFileSync(join(cwd, "list1.txt"), `${LAZARUS}\n`)
    writeFileSync(join(cwd, "list2.txt"), `${LAZARUS}\n${CLEAN}\n`)
    const ingest = (file: string, asOf: string) =>
      runVigil(cwd, { VIGIL_DB: db }, ingestWatchArgs(file, asOf, ["--authority", "official"]))
    const first = await ingest("list1.txt", "2025-01-01")
    assert.strictEqual(first.code, 0, first.stderr)

    // The second is given a password in its URL (trust auth never asks for it): its log line must not show it.
    const withPassword = db.replace("://postgres@", "://postgres:s3cret@")
    assert.notStrictEqual(withPassword, db)
    const [a, b] = await Promise.all([serve(cwd, { VIGIL_DB: db }), serve(cwd, { VIGIL_DB: withPassword })])
    assert.include(a!.output(), `(storage: postgresql ${db})`)
    assert.include(b!.output(), `(storage: postgresql ${db.replace("://postgres@", "://postgres:***@")})`)
    assert.notInclude(b!.output(), "s3cret")
    // A server warns at start when the database's autovacuum is off (the outbox's vacuum settings then never act);
    // a command that runs once, such as keys create, does not.
    const [autovacuum] = await Postgres.rows(db, "SELECT current_setting('autovacuum') AS setting")
    const warned = (output: string) => output.includes("PostgreSQL's autovacuum is off")
    assert.deepStrictEqual(
      [warned(a!.output()), warned(b!.output())],
      autovacuum?.setting === "off" ? [true, true] : [false, false]
    )
    assert.isFalse(warned(created.stderr))
    const v2 = async (url: string, address: string) => {
      const response = await fetch(`${url}/api/v2/intel?address=${address}`, { headers: { "x-api-key": key } })
      return { status: response.status, cache: response.headers.get("x-cache"), body: (await response.json()) as any }
    }
    for (const s of [a!, b!]) {
      const health = (await (await fetch(`${s.url}/health`)).json()) as any
      assert.strictEqual(health.storage.kind, "postgres")
      assert.strictEqual((await v2(s.url, LAZARUS)).body.data.risk_assessment.risk_level, "critical")
      assert.strictEqual((await v2(s.url, CLEAN)).body.data.risk_assessment.risk_level, "clean")
      assert.strictEqual((await v2(s.url, CLEAN)).cache, "HIT", "each keeps its own cache")
    }

    // A list changed by the CLI: both answer by it within a second (the commit's notice reaches them at once; a
    // reading of the lists' generation is trusted for a second at most), their caches notwithstanding.
    assert.strictEqual((await ingest("list2.txt", "2025-06-01")).code, 0)
    const changed = performance.now()
    for (const s of [a!, b!]) {
      let after = await v2(s.url, CLEAN)
      while (after.body.data.risk_assessment.risk_level !== "critical" && performance.now() - changed < 1_000) {
        await new Promise((done) => setTimeout(done, 20))
        after = await v2(s.url, CLEAN)
      }
      assert.strictEqual(after.body.data.risk_assessment.risk_level, "critical", "answered by the new list")
      assert.strictEqual(after.cache, "MISS")
    }
    // Their /health lists, remembered between calls, move with it too, and with a refresh the CLI was refused.
    const watched = async (url: string) =>
      ((await (await fetch(`${url}/health`)).json()) as any).lists.find((l: { list: string }) => l.list === "watch")
    const within = async (what: string, holds: (list: any) => boolean) => {
      const since = performance.now()
      for (const s of [a!, b!]) {
        let list = await watched(s.url)
        while (!holds(list) && performance.now() - since < 1_000) {
          await new Promise((done) => setTimeout(done, 20))
          list = await watched(s.url)
        }
        assert.isTrue(holds(list), `${what}: ${JSON.stringify(list)}`)
      }
    }
    await within("the new version", (list) => list?.as_of === "2025-06-01" && list.note === undefined)
    writeFileSync(join(cwd, "empty.txt"), "\n")
    const refused = await ingest("empty.txt", "2025-07-01")
    assert.notStrictEqual(refused.code, 0)
    assert.include(refused.stderr, "holds no valid record")
    await within(
      "the refused refresh",
      (list) => list?.as_of === "2025-06-01" && /holds no valid record/.test(list.note)
    )

    // The daily quota (508 addresses, 8 used above) is one count for both: 1,000 requests at once, split over the two.
    const outcomes = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        fetch(`${[a!, b!][i % 2]!.url}/api/v3/intel`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ address: CLEAN })
        }).then(async (r) => {
          await r.arrayBuffer()
          return r.status
        })
      )
    )
    assert.strictEqual(outcomes.filter((s) => s === 200).length, 500, JSON.stringify(outcomes))
    assert.strictEqual(outcomes.filter((s) => s === 429).length, 500)

    // Revoked by the CLI: refused by both as soon as they hear of it (a key read is trusted for a second at most).
    const id = key.split("_")[1]!
    assert.strictEqual((await runVigil(cwd, {}, ["keys", "revoke", "--db", db, id])).code, 0)
    const revoked = performance.now()
    for (const s of [a!, b!]) {
      let status = (await v2(s.url, LAZARUS)).status
      while (status !== 401 && performance.now() - revoked < 1_000) {
        await new Promise((done) => setTimeout(done, 20))
        status = (await v2(s.url, LAZARUS)).status
      }
      assert.strictEqual(status, 401, "refused within a second")
    }
    for (const s of [a!, b!]) s.child.kill("SIGTERM")
    await Promise.all([a!.exited, b!.exited])
  })

  it("answers a request that meets another transaction's lock 503 Busy with Retry-After at the lock timeout, as on SQLite", async () => {
    const cwd = tempDir()
    const db = run!.url
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", db, "--name", "Locked"])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    const server = await serve(cwd, { VIGIL_DB: db, VIGIL_PG_LOCK_TIMEOUT_MS: "300" })
    const screen = () =>
      fetch(`${server!.url}/api/v3/intel`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ address: CLEAN })
      })
    // Every charge writes the quota windows: a transaction holding them makes each request wait for the lock.
    const lock = await Postgres.holding(db, "LOCK TABLE quota_windows IN ACCESS EXCLUSIVE MODE")
    let held: Response
    let health: Response
    try {
      ;[held, health] = await Promise.all([screen(), fetch(`${server!.url}/health`)])
    } finally {
      await lock.release()
    }
    const body = (await held.json()) as { error: string; message: string }
    assert.strictEqual(held.status, 503, JSON.stringify(body))
    assert.strictEqual(held.headers.get("retry-after"), "1")
    assert.match(body.message, /lock timeout/)
    assert.strictEqual(health.status, 200, "a lock held elsewhere is no fault")
    assert.strictEqual((await screen()).status, 200, "answered once the lock is released")
    server!.child.kill("SIGTERM")
    await server!.exited
  })

  it("share one outbox: asynchronous requests spread over both are each delivered once, none twice", async () => {
    const cwd = tempDir()
    const db = run!.url
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", db, "--name", "Hooks", "--qps", "1000"])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    const receiver = await Receiver.start(certs)
    const env = { VIGIL_DB: db, VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1", VIGIL_WEBHOOK_CA_FILE: certs.caFile }
    const servers = await Promise.all([serve(cwd, env), serve(cwd, env)])
    try {
      const post = (i: number, path: string, body: unknown) =>
        fetch(`${servers[i % 2]!.url}${path}`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body)
        }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))
      assert.strictEqual((await post(0, "/api/v2/webhooks", { url: receiver.url("/intel") })).status, 201)
      const accepted = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          post(i, "/api/v2/intel/webhook", { address: i % 3 === 0 ? LAZARUS : CLEAN })
        )
      )
      assert.deepStrictEqual(
        accepted.map((r) => r.status),
        Array.from({ length: 60 }, () => 202)
      )
      await receiver.until((got) => new Set(got.map((g) => g.headers["webhook-id"])).size >= 60, 30_000)
      // Both instances deliver from the one outbox; wait until every delivery is settled, then count.
      for (let i = 0; i < 400; i++) {
        const stats = await fetch(`${servers[1]!.url}/api/v2/webhooks/stats`, { headers: { "x-api-key": key } })
        const hooks = ((await stats.json()) as any).stats.webhooks as Array<{ pending: number; failed: number }>
        if (hooks.every((w) => w.pending === 0 && w.failed === 0)) break
        await new Promise((done) => setTimeout(done, 25))
      }
      const byId = new Map<string, number>()
      for (const got of receiver.received) {
        const id = String(got.headers["webhook-id"])
        byId.set(id, (byId.get(id) ?? 0) + 1)
      }
      assert.strictEqual(byId.size, 60, "one delivery per request")
      assert.deepStrictEqual(
        [...byId.entries()].filter(([, n]) => n > 1),
        [],
        "none sent twice"
      )
      const correlations = new Set(receiver.received.map((g) => JSON.parse(g.body).correlation_id))
      assert.deepStrictEqual([...correlations].sort(), accepted.map((r) => r.json.correlation_id).sort())
    } finally {
      for (const s of servers) s.child.kill("SIGTERM")
      await Promise.all([...servers.map((s) => s.exited), receiver.close()])
    }
  })

  it("a key revoked by the CLI has its pending deliveries parked by whichever instance claims them, none sent after", async () => {
    const cwd = tempDir()
    const db = run!.url
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", db, "--name", "Leaving", "--qps", "1000"])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    const id = key.split("_")[1]!
    // The first attempt hangs past the timeout: the delivery is pending when the key is revoked.
    const receiver = await Receiver.start(certs, (n) => (n === 0 ? "hang" : 200))
    const env = {
      VIGIL_DB: db,
      VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      VIGIL_WEBHOOK_CA_FILE: certs.caFile,
      // Long enough for the CLI to start and revoke the key while the first attempt still hangs.
      VIGIL_WEBHOOK_TIMEOUT_MS: "5000",
      VIGIL_WEBHOOK_BACKOFF_MS: "100"
    }
    const servers = await Promise.all([serve(cwd, env), serve(cwd, env)])
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${servers[0]!.url}${path}`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      assert.strictEqual((await post("/api/v2/webhooks", { url: receiver.url("/leaving") })).status, 201)
      assert.strictEqual((await post("/api/v2/intel/webhook", { address: CLEAN })).status, 202)
      await receiver.until((got) => got.length >= 1, 10_000)
      assert.strictEqual((await runVigil(cwd, {}, ["keys", "revoke", "--db", db, id])).code, 0)
      let deliveries: ReadonlyArray<Record<string, unknown>> = []
      for (let i = 0; i < 800; i++) {
        deliveries = await Postgres.rows(db, `SELECT status, last_error FROM webhook_deliveries WHERE key_id = '${id}'`)
        if (deliveries.every((d) => d.status === "dead")) break
        await new Promise((done) => setTimeout(done, 25))
      }
      assert.strictEqual(deliveries.length, 1)
      assert.strictEqual(deliveries[0]!.status, "dead")
      assert.match(String(deliveries[0]!.last_error), new RegExp(`^not sent: its API key ${id} was revoked at `))
      assert.lengthOf(receiver.received, 1, "the hung attempt, and none after the revocation")
    } finally {
      for (const s of servers) s.child.kill("SIGTERM")
      await Promise.all([...servers.map((s) => s.exited), receiver.close()])
    }
  })
})
