/** StorageProbe on SQLite: a real query against the database file and its recorded schema version. */
import { StorageProbe } from "@vigil/core"
import { Effect, Layer } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

/** A layer whose probe reads the schema version from the database on every check. */
export const layer: Layer.Layer<StorageProbe.StorageProbe, never, SqliteDatabase> = Layer.effect(
  StorageProbe.StorageProbe
)(
  Effect.gen(function* () {
    const database = yield* SqliteDatabase
    const version = yield* database.use("StorageProbe.prepare", (db) =>
      db.prepare<[], { v: number }>("SELECT coalesce(max(version), 0) AS v FROM vigil_migrations")
    )
    return StorageProbe.StorageProbe.of({
      check: database.use("StorageProbe.check", () => ({ kind: "sqlite", schemaVersion: version.get()?.v ?? 0 }))
    })
  }).pipe(Effect.orDie)
)
