/**
 * `vigil migrate-store --from FILE --to URL`: moves what a SQLite file holds into a new PostgreSQL database (keys
 * with their quota counts, lists with their versions, history, deletions and amendments, calibration models,
 * webhooks and the outbox, contracts, bots, followed chains' cursors and alerts, stored blocks), all of it in one transaction: the target
 * has everything or nothing. The target must hold no data yet (its tables are created if missing); the file is
 * only read (and migrated to this build's schema first, as every command does).
 */
import type { PgDatabase } from "@vigil/adapter-postgres"
import { SqliteDatabase } from "@vigil/adapter-sqlite"
import { existsSync } from "node:fs"
import { Effect, Layer, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, shown, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import * as Store from "./Store.ts"

/**
 * The tables moved, in an order that satisfies their references, each read in the order it was written (so the
 * orders the ports list things in stay the same). Left out: the migrations' and health probe's own rows, staging
 * rows and records of an ingest that never committed, records replaced and not swept yet, and chains' leases
 * (whoever serves the new database takes them).
 */
const tables: ReadonlyArray<{ readonly name: string; readonly where?: string }> = [
  { name: "api_keys" },
  { name: "quota_windows" },
  { name: "intel_versions", where: "state = 'committed'" },
  // The records in force (not those of a commit under way, nor those replaced and not swept yet).
  {
    name: "intel_records",
    where:
      "EXISTS (SELECT 1 FROM intel_lists l WHERE l.list = intel_records.list AND intel_records.version BETWEEN l.floor AND l.version)"
  },
  { name: "intel_lists" },
  { name: "intel_deletions" },
  { name: "intel_amendments" },
  { name: "intel_models" },
  { name: "intel_refusals" },
  { name: "webhooks" },
  { name: "webhook_deliveries" },
  { name: "monitor_contracts" },
  { name: "monitor_bots" },
  { name: "monitor_blocks" },
  { name: "monitor_bot_blocks" },
  { name: "follow_cursors" },
  { name: "follow_marks" },
  { name: "follow_coverage" },
  { name: "monitor_alerts" }
]

/** Rows inserted per statement. */
const chunk = 2_000

const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))
const decodeBot = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Struct({ active: Schema.Boolean })))

/** Copies every table in one transaction of the target (`Target`, the PostgreSQL database); the rows moved per table. */
const copy = (Target: typeof PgDatabase.PgDatabase) =>
  Effect.gen(function* () {
    const source = yield* SqliteDatabase.SqliteDatabase
    const target = yield* Target
    const { sql } = target
    return yield* target.transaction(
      "migrate-store",
      Effect.gen(function* () {
        const held: Array<string> = []
        for (const table of tables) {
          const [row] = yield* sql.unsafe<{ readonly any: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM ${table.name}) AS any`
          )
          if (row?.any === true) held.push(table.name)
        }
        if (held.length > 0)
          return yield* new CommandFailed({
            message: `the target database already holds data (${held.join(", ")}); give an empty one, nothing was written`
          })
        const moved: Record<string, number> = {}
        for (const table of tables) {
          const columns = yield* sql<{ readonly name: string; readonly type: string }>`
          SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ${table.name}`
          const rows = yield* source.use(`migrate-store.read ${table.name}`, (db) => {
            // In the order written (a table without rowids: in its key's order, the order it is read in).
            const definition = db
              .prepare<[string], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
              .pluck()
              .get(table.name)
            const order = definition !== undefined && /WITHOUT\s+ROWID/i.test(definition) ? "" : " ORDER BY rowid"
            const where = table.where === undefined ? "" : ` WHERE ${table.where}`
            return db.prepare<[], Record<string, unknown>>(`SELECT * FROM ${table.name}${where}${order}`).all()
          })
          const present = new Set(rows.length === 0 ? [] : Object.keys(rows[0]!))
          const booleans = new Set(columns.filter((c) => c.type === "boolean").map((c) => c.name))
          // A bot's `active` column is derived from its stored body on PostgreSQL.
          const derived = table.name === "monitor_bots" ? ["active"] : []
          const names = [...columns.map((c) => c.name).filter((n) => present.has(n)), ...derived]
          for (let i = 0; i < rows.length; i += chunk) {
            const part = rows.slice(i, i + chunk).map((row) => {
              const out: Record<string, unknown> = {}
              for (const name of names) {
                const value = name === "active" && derived.length > 0 ? decodeBot(row.body).active : row[name]
                out[name] = booleans.has(name) && typeof value === "number" ? value !== 0 : value
              }
              return out
            })
            const list = names.map((n) => `"${n}"`).join(", ")
            yield* sql.unsafe(
              `INSERT INTO ${table.name} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${table.name}, $1::json)`,
              [encodeJson(part)]
            )
          }
          moved[table.name] = rows.length
        }
        // Ids given by the file: the target's own sequences continue after them.
        for (const [table, id] of [
          ["intel_versions", "id"],
          ["intel_records", "id"],
          ["intel_deletions", "id"],
          ["intel_amendments", "id"],
          ["intel_models", "version"]
        ] as const)
          yield* sql.unsafe(
            `SELECT setval(pg_get_serial_sequence('${table}', '${id}'), coalesce((SELECT max(${id}) FROM ${table}), 0) + 1, false)`
          )
        return moved
      })
    )
  })

/** The command. */
export const command = Command.make(
  "migrate-store",
  {
    from: Flag.String("from").pipe(Flag.withDescription("The SQLite file to move (only read) (required)")),
    to: Flag.String("to").pipe(Flag.withDescription("The postgres:// URL of a database holding no data yet (required)"))
  },
  (args) =>
    Effect.gen(function* () {
      const from = yield* Store.parse(args.from)
      const to = yield* Store.parse(args.to)
      if (from._tag !== "Sqlite")
        return yield* new UsageError({ message: `--from must be a SQLite file, not ${shown(args.from)}` })
      if (to._tag !== "Postgres")
        return yield* new UsageError({ message: `--to must be a postgres:// URL, not ${args.to}` })
      if (from.filename === ":memory:" || !existsSync(from.filename))
        return yield* new CommandFailed({ message: `--from ${from.filename}: no such file` })
      const { PgDatabase } = yield* Effect.promise(() => import("@vigil/adapter-postgres"))
      const stores = Layer.merge(SqliteDatabase.layer({ filename: from.filename }), PgDatabase.layer({ url: to.url }))
      const moved = yield* copy(PgDatabase.PgDatabase).pipe(
        Effect.provide(stores),
        Effect.catchTag("StoreError", (e) =>
          Effect.fail(
            new CommandFailed({
              message: `cannot move ${from.filename} to ${shown(args.to)}: ${e.reason}: ${e.message}; nothing was written`
            })
          )
        )
      )
      yield* JsonLine.print({ from: from.filename, to: shown(args.to), moved })
    })
).pipe(
  Command.withDescription(
    "Move what a SQLite file holds into a new PostgreSQL database, in one transaction (run several vigil serve on it)"
  ),
  Command.withExamples([
    {
      command: "vigil migrate-store --from ./.vigil/vigil.db --to postgres://vigil@db/vigil",
      description: "Move a SQLite store to PostgreSQL"
    }
  ])
)
