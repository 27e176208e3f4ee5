/**
 * ApiKeyStore on SQLite: one row per key, holding its hash and never the key. Every key is held in memory and read
 * again when the keys changed: a write through this store, or a change by another connection (the `keys` command of
 * another process, say), which a counter moved by triggers reveals once the database's external version moves. An
 * id is found in the same time whether a key has it or not, so a refused key says nothing of its id.
 */
import { ApiKeyStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import * as SqliteDatabase from "./SqliteDatabase.ts"

interface Row {
  readonly id: string
  readonly name: string
  readonly hash: string
  readonly qps: number
  readonly daily: number
  readonly monthly: number
  readonly created_at: string
  readonly expires_at: string | null
  readonly revoked_at: string | null
}

const toRecord = (row: Row): ApiKeyStore.ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  qps: row.qps,
  daily: row.daily,
  monthly: row.monthly,
  createdAt: row.created_at,
  ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
  ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at })
})

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase.SqliteDatabase
  const s = yield* database.use("ApiKeyStore.prepare", (db) => ({
    insert: db.prepare<[Row]>(
      `INSERT INTO api_keys (id, name, hash, qps, daily, monthly, created_at, expires_at, revoked_at)
       VALUES (@id, @name, @hash, @qps, @daily, @monthly, @created_at, @expires_at, @revoked_at)`
    ),
    find: db.prepare<[string], Row>("SELECT * FROM api_keys WHERE id = ?"),
    all: db.prepare<[], Row>("SELECT * FROM api_keys"),
    generation: db.prepare<[], number>("SELECT n FROM vigil_generations WHERE name = 'api_keys'").pluck(),
    list: db.prepare<[], Row>("SELECT * FROM api_keys ORDER BY created_at, rowid"),
    revoke: db.prepare<[string, string]>("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
  }))
  /** Every key by id, the key changes it reflects, and the external version at which that was last checked. */
  let held: { byId: Map<string, ApiKeyStore.ApiKeyRecord>; generation: number; checked: number } | undefined
  /** The keys as they are now (call inside `use`): read again only when the counter of key changes moved. */
  const keys = () => {
    const version = database.externalVersion()
    if (held?.checked === version) return held.byId
    const generation = s.generation.get()!
    if (held === undefined || held.generation !== generation)
      held = { byId: new Map(s.all.all().map((row) => [row.id, toRecord(row)])), generation, checked: version }
    else held.checked = version
    return held.byId
  }
  const forget = Effect.sync(() => (held = undefined))
  return ApiKeyStore.ApiKeyStore.of({
    insert: (record) =>
      database
        .transaction("ApiKeyStore.insert", () =>
          s.insert.run({
            id: record.id,
            name: record.name,
            hash: record.hash,
            qps: record.qps,
            daily: record.daily,
            monthly: record.monthly,
            created_at: record.createdAt,
            expires_at: record.expiresAt ?? null,
            revoked_at: record.revokedAt ?? null
          })
        )
        .pipe(Effect.asVoid, Effect.ensuring(forget)),
    find: (id) => database.use("ApiKeyStore.find", () => keys().get(id)),
    list: database.use("ApiKeyStore.list", () => s.list.all().map(toRecord)),
    revoke: (id, at) =>
      database
        .transaction("ApiKeyStore.revoke", () => {
          s.revoke.run(at, id)
          const row = s.find.get(id)
          return row === undefined ? undefined : toRecord(row)
        })
        .pipe(Effect.ensuring(forget))
  })
})

/** A layer providing ApiKeyStore over the SqliteDatabase in context. */
export const layer: Layer.Layer<ApiKeyStore.ApiKeyStore, never, SqliteDatabase.SqliteDatabase> = Layer.effect(
  ApiKeyStore.ApiKeyStore
)(make.pipe(Effect.orDie))
