/**
 * The built-in official lists shipped beside this package (`builtin/official-lists.json`, rebuilt by
 * `scripts/build-builtin-lists.mjs` of this package, from the publishers' files), and starting a new store with them.
 */
import { Ingestion, type IntelIndex, type StoreError } from "@vigil/core"
import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The snapshot file (the same from `src/` and `dist/`). */
export const file = fileURLToPath(new URL("../builtin/official-lists.json", import.meta.url))

/** The shipped snapshot cannot be read: the package is damaged. */
export class BuiltinListsUnreadable extends Schema.TaggedError<BuiltinListsUnreadable>()("BuiltinListsUnreadable", {
  message: Schema.String
}) {}

/** The shipped snapshot, read and decoded. */
export const snapshot: Effect.Effect<Ingestion.Builtin.Snapshot, BuiltinListsUnreadable> = Effect.try({
  try: () => readFileSync(file, "utf8"),
  catch: (e) => new BuiltinListsUnreadable({ message: `cannot read ${file}: ${(e as Error).message}` })
}).pipe(
  Effect.flatMap((text) =>
    Ingestion.Builtin.decode(text).pipe(
      Effect.mapError((e) => new BuiltinListsUnreadable({ message: `${file}: ${e.message}` }))
    )
  )
)

/**
 * Starts a new store with the shipped lists (see `Builtin.seed`): the outcomes of the lists ingested, none for a
 * store that already holds or held lists.
 */
export const seed: Effect.Effect<
  ReadonlyArray<Ingestion.Ingest.Outcome>,
  BuiltinListsUnreadable | Ingestion.Ingest.IngestFailed | StoreError.StoreError,
  IntelIndex.IntelIndex | IntelIndex.Versions
> = Ingestion.Builtin.seed(snapshot)

/** One line saying what seeding did, for a log; undefined when the store was not new. */
export const summary = (outcomes: ReadonlyArray<Ingestion.Ingest.Outcome>): string | undefined =>
  outcomes.length === 0
    ? undefined
    : `a new store: started with the built-in official lists (${outcomes.map((o) => `${o.list} as of ${o.asOf}, ${o.records} records`).join("; ")}); vigil refresh brings them up to date`
