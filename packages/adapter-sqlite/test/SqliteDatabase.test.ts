import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import {
  SqliteAdapter,
  SqliteDatabase,
  SqliteErrors,
  SqliteFollowStore,
  SqliteMigrations,
  SqliteWebhookStore
} from "@vigil/adapter-sqlite"
import { ContractStore, FollowStore, IntelIndex, QuotaStore, WebhookStore } from "@vigil/core"
import Database from "better-sqlite3"
import { Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { tempPath } from "./TempDatabase.ts"

const window: QuotaStore.QuotaWindow = { key: "k", start: 0, millis: 60_000, limit: 100 }

/** Builds the adapter on `filename` in its own scope, runs `f`, and closes the database again. */
const withAdapter = <A, E>(
  filename: string,
  f: Effect.Effect<A, E, SqliteAdapter.Services>,
  busyTimeoutMillis?: number
) =>
  Effect.provide(
    f,
    SqliteAdapter.layer(busyTimeoutMillis === undefined ? { filename } : { filename, busyTimeoutMillis })
  )

const charge = (cost: number) => Effect.flatMap(Effect.service(QuotaStore.QuotaStore), (s) => s.charge(cost, [window]))

describe("SqliteDatabase", () => {
  it.effect("creates the folder and file on first use and records every migration", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempPath("a/b"), "vigil.db")
      assert.isFalse(existsSync(dirname(filename)))
      const report = yield* withAdapter(
        filename,
        Effect.map(Effect.service(SqliteDatabase.SqliteDatabase), (d) => d.migration)
      )
      assert.isTrue(existsSync(filename))
      const latest = SqliteMigrations.migrations.at(-1)!
      assert.deepStrictEqual(report, {
        from: 0,
        to: latest.version,
        applied: SqliteMigrations.migrations.map((m) => m.name)
      })
      const raw = new Database(filename, { readonly: true })
      const rows = raw.prepare("SELECT version, name FROM vigil_migrations ORDER BY version").all()
      const mode = raw.pragma("journal_mode", { simple: true })
      raw.close()
      assert.deepStrictEqual(
        rows,
        SqliteMigrations.migrations.map(({ name, version }) => ({ version, name }))
      )
      assert.strictEqual(mode, "wal")
    })
  )

  it.effect("keeps data across reopening and applies no migration twice", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, charge(3))
      const [report, again] = yield* withAdapter(
        filename,
        Effect.all([Effect.map(Effect.service(SqliteDatabase.SqliteDatabase), (d) => d.migration), charge(4)])
      )
      assert.deepStrictEqual(report.applied, [])
      assert.strictEqual(report.from, report.to)
      assert.strictEqual(again.windows[0]?.used, 7)
    })
  )

  it.effect(
    "gives lists stored before authorities existed their kind's authority, and says why their history cannot be rebuilt",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempPath()
        // A database as the build before the history migration left it: two lists, one deleted and made again.
        const raw = new Database(filename)
        SqliteMigrations.migrate(raw, SqliteMigrations.migrations.slice(0, 5), "2025-01-01T00:00:00.000Z")
        const version = raw.prepare(
          `INSERT INTO intel_versions (list, source, kind, mode, as_of, content_hash, origin, ingested_at, state)
         VALUES (?, ?, ?, 'snapshot', ?, 'h', 'file', ?, 'committed')`
        )
        const sdn = Number(
          version.run("ofac-sdn", "OFAC", "ofac-sdn-xml", "2025-03-04", "2025-03-05T00:00:00.000Z").lastInsertRowid
        )
        const gone = Number(
          version.run("labels-x", "x", "labels", "2025-01-01", "2025-01-02T00:00:00.000Z").lastInsertRowid
        )
        raw
          .prepare("INSERT INTO intel_deletions (list, version, records, deleted_at) VALUES ('labels-x', 1, 0, ?)")
          .run("2025-02-01T00:00:00.000Z")
        const labels = Number(
          version.run("labels-x", "x", "labels", "2025-03-01", "2025-03-02T00:00:00.000Z").lastInsertRowid
        )
        raw
          .prepare("INSERT INTO intel_lists (list, version) VALUES (?, ?), (?, ?)")
          .run("ofac-sdn", sdn, "labels-x", labels)
        raw.close()
        assert.isAbove(labels, gone)

        const outcome = yield* withAdapter(
          filename,
          Effect.gen(function* () {
            const index = yield* IntelIndex.all
            const lists = yield* index.lists
            const staged = yield* index.stage({
              list: "ofac-sdn",
              source: "OFAC",
              kind: "ofac-sdn-xml",
              mode: "snapshot",
              origin: "older",
              ingestedAt: "2025-04-01T00:00:00.000Z",
              authority: "official"
            })
            const backfill = yield* Effect.flip(index.commit(staged, { asOf: "2025-01-01", contentHash: "o" }))
            const rollback = yield* Effect.flip(index.rollback("ofac-sdn", "2025-04-01T00:00:00.000Z"))
            return { lists, backfill, rollback }
          })
        )
        assert.deepStrictEqual(
          outcome.lists.map((l) => [l.list, l.authority, l.version, l.since]),
          [
            ["labels-x", "scraped", 2, "2025-03-01"],
            ["ofac-sdn", "official", 1, "2025-03-04"]
          ]
        )
        assert.strictEqual(outcome.backfill._tag, "AmendRefused")
        assert.include(
          outcome.backfill.message,
          "version 1 of ofac-sdn (2025-03-04) was stored before versions kept their contents"
        )
        assert.strictEqual(outcome.rollback._tag, "AmendRefused")
      })
  )

  it.effect("finds a destination's last outcome by an index, not by walking the outbox", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, Effect.void)
      const raw = new Database(filename)
      // A busy destination's 20,000 deliveries made after a quiet one's last: the statistics taken then.
      raw.exec(`INSERT INTO webhooks (id, key_id, url, secret, created) VALUES
                  ('quiet', 'k', 'https://example.com/q', 's', '2026-01-01'),
                  ('busy', 'k', 'https://example.com/b', 's', '2026-01-01')`)
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts,
                  next_attempt_at, status, last_error)
                SELECT 'd' || i, CASE WHEN i = 0 THEN 'quiet' ELSE 'busy' END, 'k', 'c' || i, '{}', 1, i,
                       CASE WHEN i = 0 THEN 'dead' ELSE 'delivered' END, CASE WHEN i = 0 THEN 'HTTP 500' END
                FROM n`)
      raw.exec("ANALYZE")
      const plan = raw
        .prepare(`EXPLAIN QUERY PLAN ${SqliteWebhookStore.statsQuery}`)
        .all("k", 0)
        .map((r) => (r as { detail: string }).detail)
      const answered = raw.prepare(SqliteWebhookStore.statsQuery).all("k", 0) as Array<{
        id: string
        last_error: string | null
      }>
      raw.close()
      assert.include(plan, "SEARCH d USING INDEX webhook_deliveries_outcomes (webhook_id=?)")
      assert.notInclude(plan, "SCAN d")
      assert.deepStrictEqual(
        answered.map((r) => [r.id, r.last_error]),
        [
          ["quiet", "HTTP 500"],
          ["busy", null]
        ]
      )
    })
  )

  it.effect("counts a chain's retracted alerts by an index, not by reading every alert", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, Effect.void)
      const raw = new Database(filename)
      // 20,000 alerts on chain 1, two of them retracted, and one retracted on chain 2: the statistics taken then.
      raw.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                INSERT INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, rule, expression,
                  transactions, evidence, created, block_time, retracted_at)
                SELECT 'a' || i, 'k', 'b', CASE WHEN i = 0 THEN 2 ELSE 1 END, i, '0x', 0, 'e', '{}', '{}',
                       '2026-01-01', i, CASE WHEN i IN (0, 7, 9000) THEN '2026-01-02' END
                FROM n`)
      raw.exec("ANALYZE")
      const plan = raw
        .prepare(`EXPLAIN QUERY PLAN ${SqliteFollowStore.retractedQuery}`)
        .all(1)
        .map((r) => (r as { detail: string }).detail)
      raw.close()
      assert.include(plan, "SEARCH monitor_alerts USING INDEX monitor_alerts_retracted (chain_id=?)")
      assert.notInclude(plan, "SCAN monitor_alerts")
      const counted = yield* withAdapter(
        filename,
        Effect.flatMap(Effect.service(FollowStore.AlertLog), (store) =>
          Effect.all([store.retracted(1), store.retracted(2), store.retracted(3)])
        )
      )
      assert.deepStrictEqual(counted, [2, 1, 0])
    })
  )

  it.effect("refuses a database written by a newer schema, and leaves it as it was", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, charge(2))
      const raw = new Database(filename)
      raw.prepare("INSERT INTO vigil_migrations VALUES (999, 'future', '2030-01-01T00:00:00.000Z')").run()
      raw.close()
      const error = yield* Effect.flip(withAdapter(filename, charge(1)))
      assert.strictEqual(error.reason, "Incompatible")
      assert.match(error.message, /schema version 999, newer than this build knows/)
      const check = new Database(filename, { readonly: true })
      const used = check.prepare("SELECT used FROM quota_windows").get()
      check.close()
      assert.deepStrictEqual(used, { used: 2 })
    })
  )

  it.effect("reports a stored ABI that no longer decodes as Corrupt, naming the contract, not as a crash", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, charge(1))
      const raw = new Database(filename)
      raw
        .prepare(
          "INSERT INTO monitor_contracts (id, key_id, chain_id, address, label, abi, abi_source, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        .run("ct_1_a", "key-a", 1, `0x${"1".repeat(40)}`, "Pool", "[{not json", "supplied", "2026-01-01T00:00:00.000Z")
      raw.close()
      const error = yield* Effect.flip(
        withAdapter(
          filename,
          Effect.flatMap(Effect.service(ContractStore.ContractStore), (s) => s.list("key-a"))
        )
      )
      assert.strictEqual(error.reason, "Corrupt")
      assert.match(error.message, /the stored ABI of contract ct_1_a does not decode/)
    })
  )

  it.effect(
    "reads stored JSON columns through their codecs: a channel or an alert's evidence that does not decode is Corrupt, named",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempPath()
        yield* withAdapter(filename, charge(1))
        const raw = new Database(filename)
        raw
          .prepare("INSERT INTO webhooks (id, key_id, url, secret, created, channel) VALUES (?, ?, ?, ?, ?, ?)")
          .run("wh_1_a", "key-a", "https://example.com/hook", "whsec_x", "2026-01-01T00:00:00.000Z", '{"type":"pager"}')
        const alert = raw.prepare(
          `INSERT INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, rule, expression,
           transactions, evidence, created, block_time) VALUES (?, 'key-a', 'bot_1', 1, 5, '0x05', 0, 'true', ?, ?, '2026-01-01T00:00:00.000Z', 10)`
        )
        alert.run("al_good", '{"tx":"0x01"}', '{"transactions":{},"frames":{},"occurrences":{},"held":[]}')
        alert.run("al_bad", '{"tx":"0x01"}', '{"amount":')
        raw.close()
        const channel = yield* Effect.flip(
          withAdapter(
            filename,
            Effect.flatMap(Effect.service(WebhookStore.Destinations), (s) => s.list("key-a", "channels"))
          )
        )
        assert.strictEqual(channel.reason, "Corrupt")
        assert.strictEqual(channel.message, "the stored channel of destination wh_1_a does not decode")
        const evidence = yield* Effect.flip(
          withAdapter(
            filename,
            Effect.flatMap(Effect.service(FollowStore.AlertLog), (s) => s.recent("bot_1", 0))
          )
        )
        assert.strictEqual(evidence.reason, "Corrupt")
        assert.strictEqual(evidence.message, "the stored evidence of alert al_bad does not decode")
      })
  )

  it.effect("reports a file that is not a database as Corrupt and does not overwrite it", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const text = "this is not a database, it is somebody's notes\n".repeat(200)
      writeFileSync(filename, text)
      const error = yield* Effect.flip(withAdapter(filename, charge(1)))
      assert.strictEqual(error.reason, "Corrupt")
      assert.strictEqual(readFileSync(filename, "utf8"), text)
    })
  )

  it.effect("reports a path it cannot create as Unavailable", () =>
    Effect.gen(function* () {
      const blocker = yield* tempPath("plain-file")
      writeFileSync(blocker, "x")
      const error = yield* Effect.flip(withAdapter(join(blocker, "sub", "vigil.db"), charge(1)))
      assert.strictEqual(error.reason, "Unavailable")
      assert.strictEqual(error.operation, "open")
      assert.match(error.message, /ENOTDIR/)
    })
  )

  it.effect("fails with a retryable Busy error while another process holds the write lock", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, charge(1))
      const other = new Database(filename)
      other.exec("BEGIN IMMEDIATE")
      const error = yield* Effect.flip(withAdapter(filename, charge(1), 50)).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            other.exec("ROLLBACK")
            other.close()
          })
        )
      )
      assert.strictEqual(error.reason, "Busy")
      assert.strictEqual(error.operation, "QuotaStore.charge")
      assert.isTrue(error.isRetryable)
    })
  )

  it.live("waits for another process's write lock without holding up the event loop or reads", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      yield* withAdapter(filename, charge(1))
      const other = new Database(filename)
      other.exec("BEGIN IMMEDIATE")
      const outcome = yield* withAdapter(
        filename,
        Effect.gen(function* () {
          const database = yield* SqliteDatabase.SqliteDatabase
          const write = yield* Effect.forkChild(
            database.transaction("test.write", (db) =>
              db.prepare("INSERT INTO quota_windows VALUES ('x', 0, 1, 1)").run()
            )
          )
          const charged = yield* Effect.forkChild(charge(2))
          // A timer fires, and a read answers, while both writes wait for the lock.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 0)))
          const read = yield* database.use("test.read", (db) =>
            db.prepare<[], { n: number }>("SELECT count(*) AS n FROM quota_windows").get()
          )
          const waitingWhileHeld = [write.pollUnsafe(), charged.pollUnsafe()].every((e) => e === undefined)
          other.exec("ROLLBACK")
          other.close()
          yield* Fiber.join(write)
          const decision = yield* Fiber.join(charged)
          return { read: read?.n, waitingWhileHeld, used: decision.windows[0]?.used }
        }),
        10_000
      )
      assert.deepStrictEqual(outcome, { read: 1, waitingWhileHeld: true, used: 3 })
    })
  )

  it.effect("fails with Unavailable once its scope has closed the database", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(SqliteDatabase.layer({ filename }), scope)
      const database = Context.get(context, SqliteDatabase.SqliteDatabase)
      yield* Scope.close(scope, Exit.void)
      const error = yield* Effect.flip(database.use("probe", (db) => db.prepare("SELECT 1").get()))
      assert.strictEqual(error.reason, "Unavailable")
      assert.strictEqual(error.message, "the database is closed")
    })
  )

  it.effect("counts charges from two connections to the same file together", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      mkdirSync(dirname(filename), { recursive: true })
      const limited = { ...window, limit: 10 }
      const store = (s: QuotaStore.QuotaStore["Service"]) => s.charge(1, [limited])
      const open = Effect.map(Layer.build(SqliteAdapter.layer({ filename })), Context.get(QuotaStore.QuotaStore))
      const a = yield* open
      const b = yield* open
      const outcomes = yield* Effect.all(
        Array.from({ length: 16 }, (_, i) => store(i % 2 === 0 ? a : b)),
        {
          concurrency: 4
        }
      )
      assert.strictEqual(outcomes.filter((o) => o.granted).length, 10)
    })
  )
})

describe("SqliteErrors.classify", () => {
  const sqliteError = (code: string) => Object.assign(new Error(`native ${code}`), { code })

  it("maps native codes to port reasons", () => {
    const cases: ReadonlyArray<[string, string]> = [
      ["SQLITE_BUSY", "Busy"],
      ["SQLITE_BUSY_SNAPSHOT", "Busy"],
      ["SQLITE_LOCKED", "Busy"],
      ["SQLITE_CONSTRAINT_UNIQUE", "Conflict"],
      ["SQLITE_CONSTRAINT_PRIMARYKEY", "Conflict"],
      ["SQLITE_CORRUPT", "Corrupt"],
      ["SQLITE_NOTADB", "Corrupt"],
      ["SQLITE_FULL", "Unavailable"],
      ["SQLITE_IOERR_WRITE", "Unavailable"],
      ["SQLITE_CANTOPEN", "Unavailable"],
      ["SQLITE_READONLY", "Unavailable"],
      ["EACCES", "Unavailable"]
    ]
    for (const [code, reason] of cases) {
      const error = SqliteErrors.classify(sqliteError(code), "op")
      assert.strictEqual(error?.reason, reason, code)
      assert.strictEqual(error?.operation, "op")
      assert.include(error?.message, code)
    }
  })

  it("leaves programming errors unclassified so they surface as defects", () => {
    const db = new Database(":memory:")
    let thrown: unknown
    try {
      db.prepare("SELEKT 1")
    } catch (cause) {
      thrown = cause
    }
    db.close()
    assert.isDefined(thrown)
    assert.isUndefined(SqliteErrors.classify(thrown, "op"))
    assert.isUndefined(SqliteErrors.classify(new TypeError("bad"), "op"))
    assert.isUndefined(SqliteErrors.classify("a string", "op"))
  })
})
