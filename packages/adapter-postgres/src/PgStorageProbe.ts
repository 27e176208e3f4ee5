/**
 * StorageProbe on PostgreSQL: a real read (the schema version) and a real write (this instance's own row, so
 * instances never wait for each other's probes) against the database, and the last failure any port of this
 * instance met. A write that waits on a lock held by another writer past a short lock timeout is `busy`, not a
 * failure: another instance's long transaction never makes this one look unready.
 */
import { randomUUID } from "node:crypto"
import { Instant, StorageProbe } from "@vigil/core"
import { Clock, Effect, Layer } from "effect"
import { PgDatabase, migrationsTable } from "./PgDatabase.ts"

export const layer: Layer.Layer<StorageProbe.StorageProbe, never, PgDatabase> = Layer.effect(StorageProbe.StorageProbe)(
  Effect.gen(function* () {
    const database = yield* PgDatabase
    const { sql } = database
    const instance = randomUUID()
    const write = Effect.flatMap(Instant.now, (at) =>
      database
        .transaction(
          "StorageProbe.write",
          Effect.andThen(
            sql`SET LOCAL lock_timeout = '1s'`,
            sql`INSERT INTO vigil_health (instance, checked_at) VALUES (${instance}, ${at})
                ON CONFLICT (instance) DO UPDATE SET checked_at = excluded.checked_at`
          )
        )
        .pipe(
          Effect.as("ok" as const),
          Effect.catchIf(
            (error) => error.reason === "Busy",
            () => Effect.succeed("busy" as const)
          )
        )
    )
    const check = Effect.gen(function* () {
      const [row] = yield* database.run(
        "StorageProbe.check",
        sql<{ readonly v: number | null }>`SELECT max(migration_id) AS v FROM ${sql(migrationsTable)}`
      )
      const written = yield* write
      const now = yield* Clock.currentTimeMillis
      const last = database.lastFailure()
      const recent = last !== undefined && now - last.atMillis < StorageProbe.recentMillis ? last.failure : undefined
      return {
        kind: "postgres",
        schemaVersion: row?.v ?? 0,
        write: written,
        integrity: { status: "ok" as const, problems: [], checkedAt: database.openedAt },
        ...(recent === undefined ? {} : { recentFailure: recent })
      }
    })
    return StorageProbe.StorageProbe.of({ check })
  })
)
