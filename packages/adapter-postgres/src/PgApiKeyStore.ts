/**
 * ApiKeyStore on PostgreSQL: one row per key, holding its hash and never the key. While this process hears the
 * notices of key changes, every key is held in memory, read again (once, however many requests wait for it) when a
 * notice arrives and a second after it was read at most: creating or revoking a key, by any instance or by
 * `vigil keys`, announces it at its commit. So a revoked key is refused everywhere as soon as the notice arrives
 * (and within a second even if it never does), without a round trip to the database on every request. While the
 * notices are not heard, every lookup reads the database. Either way an id is found in the same time whether a key
 * has it or not, so a refused key says nothing of its id.
 */
import { ApiKeyStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { PgDatabase } from "./PgDatabase.ts"
import * as PgNotices from "./PgNotices.ts"

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

/** The channel on which every change of the keys is announced at its commit (the payload: the schema). */
const channel = "vigil_keys"

const make = Effect.gen(function* () {
  const { sql, run, transaction } = yield* PgDatabase
  const heard = yield* PgNotices.listen(
    channel,
    "keys: not listening for key changes (every request reads its key from the database meanwhile)"
  )
  const find = (id: string) =>
    Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}`, (rows) =>
      rows[0] === undefined ? undefined : toRecord(rows[0])
    )
  /** Every key by id, remembered while notices are heard (read once for every lookup that waits meanwhile). */
  const all = PgNotices.remembered(
    heard,
    run(
      "ApiKeyStore.find",
      Effect.map(
        sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys`,
        (rows): ReadonlyMap<string, ApiKeyStore.ApiKeyRecord> => new Map(rows.map((row) => [row.id, toRecord(row)]))
      )
    )
  )
  /** A transaction that changes the keys: announced to every listener at its commit, and forgotten here. */
  const changing = <A, E>(operation: string, effect: Effect.Effect<A, E>) =>
    transaction(operation, Effect.andThen(heard.announce, effect)).pipe(Effect.ensuring(Effect.sync(heard.forget)))
  return ApiKeyStore.ApiKeyStore.of({
    insert: (record) =>
      changing(
        "ApiKeyStore.insert",
        sql`INSERT INTO api_keys (id, name, hash, qps, daily, monthly, created_at, expires_at, revoked_at)
            VALUES (${record.id}, ${record.name}, ${record.hash}, ${record.qps}, ${record.daily}, ${record.monthly},
                    ${record.createdAt}, ${record.expiresAt ?? null}, ${record.revokedAt ?? null})`
      ).pipe(Effect.asVoid),
    find: (id) =>
      Effect.suspend(() =>
        heard.listening() ? Effect.map(all, (byId) => byId.get(id)) : run("ApiKeyStore.find", find(id))
      ),
    list: run(
      "ApiKeyStore.list",
      Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys ORDER BY created_at, seq`, (rows) =>
        rows.map(toRecord)
      )
    ),
    revoke: (id, at) =>
      changing(
        "ApiKeyStore.revoke",
        Effect.andThen(sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`, find(id))
      )
  })
})

/** A layer providing ApiKeyStore over the PgDatabase in context. */
export const layer: Layer.Layer<ApiKeyStore.ApiKeyStore, never, PgDatabase> = Layer.effect(ApiKeyStore.ApiKeyStore)(
  make
)
