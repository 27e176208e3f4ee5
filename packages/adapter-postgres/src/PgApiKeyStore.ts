/**
 * ApiKeyStore on PostgreSQL: one row per key, holding its hash and never the key. Every lookup reads the
 * database, so a key revoked by any instance is refused by every other at its next request.
 */
import { ApiKeyStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { PgDatabase } from "./PgDatabase.ts"

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

const columns = "id, name, hash, qps, daily, monthly, created_at, expires_at, revoked_at"

const make = Effect.gen(function* () {
  const { sql, run, transaction } = yield* PgDatabase
  const find = (id: string) =>
    Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}`, (rows) =>
      rows[0] === undefined ? undefined : toRecord(rows[0])
    )
  return ApiKeyStore.ApiKeyStore.of({
    insert: (record) =>
      run(
        "ApiKeyStore.insert",
        sql`INSERT INTO api_keys (id, name, hash, qps, daily, monthly, created_at, expires_at, revoked_at)
            VALUES (${record.id}, ${record.name}, ${record.hash}, ${record.qps}, ${record.daily}, ${record.monthly},
                    ${record.createdAt}, ${record.expiresAt ?? null}, ${record.revokedAt ?? null})`
      ).pipe(Effect.asVoid),
    find: (id) => run("ApiKeyStore.find", find(id)),
    list: run(
      "ApiKeyStore.list",
      Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys ORDER BY created_at, seq`, (rows) =>
        rows.map(toRecord)
      )
    ),
    revoke: (id, at) =>
      transaction(
        "ApiKeyStore.revoke",
        Effect.andThen(sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`, find(id))
      )
  })
})

/** A layer providing ApiKeyStore over the PgDatabase in context. */
export const layer: Layer.Layer<ApiKeyStore.ApiKeyStore, never, PgDatabase> = Layer.effect(ApiKeyStore.ApiKeyStore)(
  make
)
