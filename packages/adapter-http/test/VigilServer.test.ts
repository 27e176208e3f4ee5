import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createRequire } from "node:module"
import { assert, describe, it } from "@effect/vitest"
import { SqliteDatabase, SqliteMigrations } from "@vigil/adapter-sqlite"
import Database from "better-sqlite3"
import { Instant, IntelIndex } from "@vigil/core"
import { Effect } from "effect"
import { modelOf } from "@vigil/core-test/CalibrationModels.ts"
import * as TestServer from "./TestServer.ts"

const serverOnTempDatabase = TestServer.layer()

const get = (path: string) =>
  Effect.map(TestServer.call("GET", path), (r) => ({
    status: r.status,
    type: r.headers.get("content-type"),
    body: r.text
  }))

const require = createRequire(import.meta.url)
/** The `redocly` command of the pinned @redocly/cli, run with this Node. */
const redocly = join(dirname(require.resolve("@redocly/cli/package.json")), "bin/cli.js")

/** `redocly lint --extends recommended` of a document: its totals and problems. */
const lint = (document: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "vigil-openapi-"))),
    (dir) =>
      Effect.promise(() => {
        const file = join(dir, "openapi.json")
        writeFileSync(file, document)
        return new Promise<{ totals: { errors: number; warnings: number }; problems: Array<unknown> }>(
          (resolve, reject) =>
            execFile(
              process.execPath,
              [redocly, "lint", file, "--extends", "recommended", "--format", "json"],
              (error, stdout) => {
                // redocly exits 1 when it finds errors; the report on stdout says which.
                try {
                  resolve(JSON.parse(stdout))
                } catch {
                  reject(error ?? new Error(`redocly printed no report: ${stdout}`))
                }
              }
            )
        )
      }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("VigilServer", () => {
  it.live("answers /health with the storage it really reached", () =>
    Effect.gen(function* () {
      const health = yield* get("/health")
      assert.strictEqual(health.status, 200)
      assert.strictEqual(health.type, "application/json")
      const body = JSON.parse(health.body)
      assert.strictEqual(body.status, "ok")
      assert.strictEqual(body.version, "0.1.0")
      assert.deepStrictEqual(body.storage, {
        kind: "sqlite",
        schema_version: SqliteMigrations.migrations.at(-1)!.version,
        write: "ok"
      })
      assert.isTrue(Number.isInteger(body.uptime_seconds) && body.uptime_seconds >= 0)
      assert.isUndefined(body.calibration, "no model stored")

      // A calibration model: /health says which and how old the lists it was fitted on are.
      const index = yield* IntelIndex.all
      const asOf = Instant.day(Date.now() - 40 * 86_400_000)
      yield* index.storeModel({ ...modelOf(asOf, ["bias"], [0]), fittedAt: `${asOf}T08:00:00.000Z` })
      const later = JSON.parse((yield* get("/health")).body)
      assert.deepStrictEqual(later.calibration, {
        model: 1,
        as_of: asOf,
        fitted_at: `${asOf}T08:00:00.000Z`,
        age_days: 40
      })
    }).pipe(Effect.provide(serverOnTempDatabase))
  )

  it.live("answers /health with 503 and the reason once storage stops answering, and says so in its log", () => {
    const logs: Array<string> = []
    return Effect.gen(function* () {
      const database = yield* SqliteDatabase.SqliteDatabase
      yield* database.use("test.close", (db) => db.close())
      const health = yield* get("/health")
      assert.strictEqual(health.status, 503)
      assert.deepStrictEqual(JSON.parse(health.body), {
        status: "unavailable",
        version: "0.1.0",
        reason: "Unavailable",
        message: "StorageProbe.check: the database is closed"
      })
      const live = yield* get("/health/live")
      assert.strictEqual(live.status, 200, "alive, though not ready")
      assert.isTrue(logs.some((l) => /^Warn: storage: .* failed: Unavailable: the database is closed/.test(l)))
    }).pipe(Effect.provide(TestServer.layer({ logs })))
  })

  it.live("is not ready while writes fail, stays degraded 30 s after a request met a failure, then ready again", () => {
    const logs: Array<string> = []
    return TestServer.withSteppedClock(
      Effect.gen(function* () {
        const database = yield* SqliteDatabase.SqliteDatabase
        const key = yield* TestServer.issue({ name: "Acme" })
        const screen = TestServer.v3(key, { address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" })
        assert.strictEqual((yield* screen).status, 200)
        // Writes now fail as on a read-only file: the write probe says so, and a charged request gets 503.
        yield* database.use("test.readonly", (db) => db.pragma("query_only = ON"))
        const readOnly = yield* get("/health")
        assert.strictEqual(readOnly.status, 503)
        assert.deepInclude(JSON.parse(readOnly.body), { status: "unavailable", reason: "Unavailable" })
        assert.strictEqual((yield* screen).status, 503)
        yield* database.use("test.writable", (db) => db.pragma("query_only = OFF"))
        const after = JSON.parse((yield* get("/health")).body)
        assert.deepInclude(after, { status: "degraded", reason: "Unavailable" })
        assert.match(after.message, /^QuotaStore\.charge failed at /)
        yield* TestServer.skip(31_000)
        const recovered = yield* get("/health")
        assert.strictEqual(recovered.status, 200, recovered.body)
        assert.strictEqual((yield* screen).status, 200)
        assert.isTrue(
          logs.some((l) => /^Warn: storage: QuotaStore\.charge failed: Unavailable: SQLITE_READONLY/.test(l))
        )
      }).pipe(Effect.provide(TestServer.layer({ logs })))
    )
  })

  it.live("answers /health at once while another connection holds the write lock, reporting the write busy", () =>
    Effect.gen(function* () {
      const database = yield* SqliteDatabase.SqliteDatabase
      const other = new Database(database.filename)
      other.exec("BEGIN IMMEDIATE")
      const health = yield* get("/health").pipe(
        Effect.ensuring(
          Effect.sync(() => {
            other.exec("ROLLBACK")
            other.close()
          })
        )
      )
      assert.strictEqual(health.status, 200)
      assert.strictEqual(JSON.parse(health.body).storage.write, "busy")
    }).pipe(Effect.provide(serverOnTempDatabase))
  )

  it.live(
    "a request that waits out another process's write lock is answered 503 Busy, and /health stays ready: contention is no fault",
    () => {
      const logs: Array<string> = []
      return Effect.gen(function* () {
        const database = yield* SqliteDatabase.SqliteDatabase
        const key = yield* TestServer.issue({ name: "Acme" })
        const other = new Database(database.filename)
        other.exec("BEGIN IMMEDIATE")
        const [screened, health] = yield* Effect.all([
          TestServer.v3(key, { address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" }),
          get("/health")
        ]).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              other.exec("ROLLBACK")
              other.close()
            })
          )
        )
        assert.strictEqual(screened.status, 503)
        assert.match(screened.json.message, /busy|lock/i, screened.text)
        assert.isString(screened.headers.get("retry-after"))
        assert.strictEqual(health.status, 200, health.body)
        const after = yield* get("/health")
        assert.strictEqual(after.status, 200, after.body)
        assert.strictEqual(JSON.parse(after.body).status, "ok")
        // Said in the log all the same.
        assert.isTrue(logs.some((l) => /^Warn: storage: QuotaStore\.charge failed: Busy/.test(l)))
      }).pipe(Effect.provide(TestServer.layer({ busyTimeoutMillis: 300, logs })))
    }
  )

  it.live("serves an OpenAPI 3.1 document of its routes that redocly's recommended rules pass, and a docs page", () =>
    Effect.gen(function* () {
      const openapi = yield* get("/openapi.json")
      assert.strictEqual(openapi.status, 200)
      const document = JSON.parse(openapi.body)
      assert.match(document.openapi, /^3\.1/)
      assert.strictEqual(document.info.title, "Vigil")
      assert.property(document.paths, "/health")
      assert.strictEqual(document.info.version, "0.1.0")
      assert.deepStrictEqual(
        document.servers.map((s: { url: string }) => s.url),
        ["/"]
      )
      assert.deepStrictEqual(Object.keys(document.paths["/health"].get.responses).sort(), [
        "200",
        "408",
        "413",
        "500",
        "503"
      ])
      assert.deepStrictEqual(Object.keys(document.paths["/health/live"].get.responses).sort(), [
        "200",
        "408",
        "413",
        "500"
      ])
      const v3 = document.paths["/api/v3/intel"].post.responses
      assert.deepStrictEqual(Object.keys(v3).sort(), ["200", "400", "401", "408", "413", "415", "429", "500", "503"])
      assert.deepStrictEqual(Object.keys(v3["200"].headers).sort(), [
        "age",
        "x-cache",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset"
      ])
      assert.includeMembers(Object.keys(v3["429"].headers), ["retry-after", "x-ratelimit-reset"])
      const report = yield* lint(openapi.body)
      assert.deepStrictEqual(report.problems, [], JSON.stringify(report.problems))
      assert.deepStrictEqual([report.totals.errors, report.totals.warnings], [0, 0])
      const docs = yield* get("/docs")
      assert.strictEqual(docs.status, 200)
      assert.match(docs.type ?? "", /text\/html/)
    }).pipe(Effect.provide(serverOnTempDatabase))
  )
})
