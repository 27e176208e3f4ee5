/**
 * ApiKeyStore on SQLite: one row per key, holding its hash and never the key. Lookups are served from memory
 * until the key table may have changed: a write through this store, or a commit by another connection (the
 * `keys` command of another process, say), which the database's external version reveals.
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

/** How many lookups are remembered before the memory starts over (unknown ids included, so it stays bounded). */
const maxRemembered = 10_000

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase.SqliteDatabase
  const s = yield* database.use("ApiKeyStore.prepare", (db) => ({
    insert: db.prepare<[Row]>(
      `INSERT INTO api_keys (id, name, hash, qps, daily, monthly, created_at, expires_at, revoked_at)
       VALUES (@id, @name, @hash, @qps, @daily, @monthly, @created_at, @expires_at, @revoked_at)`
    ),
    find: db.prepare<[string], Row>("SELECT * FROM api_keys WHERE id = ?"),
    list: db.prepare<[], Row>("SELECT * FROM api_keys ORDER BY created_at, rowid"),
    revoke: db.prepare<[string, string]>("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
  }))
  /** Lookups by id, unknown ids included (so it stays bounded); forgotten when this store writes. */
  const found = SqliteDatabase.memory<string, ApiKeyStore.ApiKeyRecord | undefined>(database, maxRemembered)
  const forget = Effect.sync(found.forget)
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
    find: (id) =>
      database.use("ApiKeyStore.find", () =>
        found.through(id, () => {
          const row = s.find.get(id)
          return row === undefined ? undefined : toRecord(row)
        })
      ),
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
