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
    /** The schema version alone, when the probe's write met another writer's lock. */
    const version = Effect.map(
      database.run(
        "StorageProbe.check",
        sql<{ readonly v: number | null }>`SELECT max(migration_id) AS v FROM ${sql(migrationsTable)}`
      ),
      ([row]) => row?.v ?? 0
    )
    // One statement (vigil_probe, migration 19): this instance's row written under a lock timeout of a second,
    // then the schema version read.
    const probe = Effect.flatMap(Instant.now, (at) =>
      database.run("StorageProbe.check", sql<{ readonly v: number }>`SELECT vigil_probe(${instance}, ${at}) AS v`).pipe(
        Effect.map(([row]) => ({ schemaVersion: row?.v ?? 0, write: "ok" as const })),
        Effect.catchIf(
          (error) => error.reason === "Busy",
          () => Effect.map(version, (schemaVersion) => ({ schemaVersion, write: "busy" as const }))
        )
      )
    )
    const check = Effect.gen(function* () {
      const { schemaVersion, write } = yield* probe
      const now = yield* Clock.currentTimeMillis
      const last = database.lastFailure()
      const recent = last !== undefined && now - last.atMillis < StorageProbe.recentMillis ? last.failure : undefined
      return {
        kind: "postgres",
        schemaVersion,
        write,
        integrity: { status: "ok" as const, problems: [], checkedAt: database.openedAt },
        ...(recent === undefined ? {} : { recentFailure: recent })
      }
    })
    return StorageProbe.StorageProbe.of({ check })
  })
)
