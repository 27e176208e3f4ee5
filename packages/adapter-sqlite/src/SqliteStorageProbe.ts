/**
 * StorageProbe on SQLite: a real read (the schema version) and a real write (one row, committed) against the
 * database file, the verification made at open, and the last failure any port met.
 */
import { Instant, StorageProbe } from "@vigil/core"
import { Clock, Effect, Layer } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

/** A layer whose probe reads and writes the database on every check. */
export const layer: Layer.Layer<StorageProbe.StorageProbe, never, SqliteDatabase> = Layer.effect(
  StorageProbe.StorageProbe
)(
  Effect.gen(function* () {
    const database = yield* SqliteDatabase
    const s = yield* database.use("StorageProbe.prepare", (db) => ({
      version: db.prepare<[], { v: number }>("SELECT coalesce(max(version), 0) AS v FROM vigil_migrations"),
      write: db.prepare<[string]>(
        "INSERT INTO vigil_health (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at"
      )
    }))
    // The write does not wait for another writer's lock: a held lock is reported as `busy`, not waited out.
    const write = Effect.flatMap(Instant.now, (at) =>
      database
        .transaction("StorageProbe.write", () => void s.write.run(at), 0)
        .pipe(
          Effect.as("ok" as const),
          Effect.catchIf(
            (error) => error.reason === "Busy",
            () => Effect.succeed("busy" as const)
          )
        )
    )
    const check = Effect.gen(function* () {
      const schemaVersion = yield* database.use("StorageProbe.check", () => s.version.get()?.v ?? 0)
      const written = yield* write
      const now = yield* Clock.currentTimeMillis
      const last = database.lastFailure()
      const recent = last !== undefined && now - last.atMillis < StorageProbe.recentMillis ? last.failure : undefined
      return {
        kind: "sqlite",
        schemaVersion,
        write: written,
        integrity: database.integrity(),
        ...(recent === undefined ? {} : { recentFailure: recent })
      }
    })
    return StorageProbe.StorageProbe.of({ check })
  }).pipe(Effect.orDie)
)
