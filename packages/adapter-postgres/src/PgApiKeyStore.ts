/**
 * ApiKeyStore on PostgreSQL: one row per key, holding its hash and never the key. A key read is remembered for a
 * second at most, and only while this process hears the notices of key changes: creating or revoking a key, by any
 * instance or by `vigil keys`, announces it at its commit, and every instance forgets what it read. So a revoked
 * key is refused everywhere as soon as the notice arrives (and within a second even if it never does), without a
 * round trip to the database on every request.
 */
import { ApiKeyStore, BoundedMemo } from "@vigil/core"
import { Clock, Effect, Layer } from "effect"
import { onRealClock, PgDatabase } from "./PgDatabase.ts"
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

/** Keys remembered at most: the keys in use (an unknown id is never remembered). */
const maxRemembered = 10_000

const make = Effect.gen(function* () {
  const { sql, run, transaction } = yield* PgDatabase
  const heard = yield* PgNotices.listen(
    channel,
    "keys: not listening for key changes (every request reads its key from the database meanwhile)"
  )
  const remembered = BoundedMemo.make<
    string,
    { readonly record: ApiKeyStore.ApiKeyRecord; readonly heard: number; readonly atMillis: number }
  >(maxRemembered)
  const find = (id: string) =>
    Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}`, (rows) =>
      rows[0] === undefined ? undefined : toRecord(rows[0])
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
      Effect.flatMap(onRealClock(Clock.currentTimeMillis), (now) => {
        const kept = remembered.get(id)
        if (
          kept !== undefined &&
          heard.listening() &&
          kept.heard === heard.count() &&
          now - kept.atMillis < PgNotices.trustMillis
        )
          return Effect.succeed<ApiKeyStore.ApiKeyRecord | undefined>(kept.record)
        const before = heard.count()
        return Effect.tap(run("ApiKeyStore.find", find(id)), (record) =>
          Effect.sync(() => {
            if (record !== undefined && heard.listening() && heard.count() === before)
              remembered.set(id, { record, heard: before, atMillis: now })
          })
        )
      }),
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
