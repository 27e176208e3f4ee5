/**
 * Where a command keeps its data, as `--db` / `VIGIL_DB` names it: a file path (SQLite, the embedded default) or a
 * `postgres://` / `postgresql://` URL (credentials from the URL or the usual `PG*` variables). Any other
 * `scheme://` is refused in one line rather than taken for a file name.
 */
import { PgAdapter } from "@vigil/adapter-postgres"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { ApiKeyStore, type Engine, QuotaStore, type StorageProbe, type StoreError } from "@vigil/core"
import { Effect, Layer } from "effect"
import { CommandFailed, shown } from "./CommandFailed.ts"

/** A store named by `--db`. */
export type Store =
  { readonly _tag: "Sqlite"; readonly filename: string } | { readonly _tag: "Postgres"; readonly url: string }

/** The store `value` names, or the one line saying why it names none. */
const parse = (value: string): Effect.Effect<Store, CommandFailed> => {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase()
  if (scheme === undefined) return Effect.succeed({ _tag: "Sqlite", filename: value })
  if (scheme !== "postgres" && scheme !== "postgresql")
    return Effect.fail(
      new CommandFailed({
        message: `--db ${shown(value)}: ${scheme}:// is not a store Vigil knows; give a file path (SQLite) or a postgres:// URL`
      })
    )
  try {
    new URL(value)
  } catch {
    return Effect.fail(new CommandFailed({ message: `--db ${shown(value)}: not a valid PostgreSQL URL` }))
  }
  return Effect.succeed({ _tag: "Postgres", url: value })
}

/** Every storage port, as a command that opens the database uses them. */
export type Ports = Engine.Storage | StorageProbe.StorageProbe

/** Every store on the database `db` names (a SQLite file or a PostgreSQL database). */
export const all = (db: string): Layer.Layer<Ports, StoreError.StoreError | CommandFailed> =>
  Layer.unwrap(
    Effect.map(parse(db), (store): Layer.Layer<Ports, StoreError.StoreError> =>
      store._tag === "Sqlite" ? SqliteAdapter.layer({ filename: store.filename }) : PgAdapter.layer({ url: store.url })
    )
  )

/** The stores of API keys and quotas of whichever adapter provides them. */
const keysAndQuotas = Layer.merge(
  Layer.effect(ApiKeyStore.ApiKeyStore)(
    Effect.gen(function* () {
      return yield* ApiKeyStore.ApiKeyStore
    })
  ),
  Layer.effect(QuotaStore.QuotaStore)(
    Effect.gen(function* () {
      return yield* QuotaStore.QuotaStore
    })
  )
)

/** The stores of API keys and quotas, on either kind of store. */
export const keys = (
  db: string
): Layer.Layer<ApiKeyStore.ApiKeyStore | QuotaStore.QuotaStore, StoreError.StoreError | CommandFailed> =>
  Layer.unwrap(
    Effect.map(parse(db), (store) =>
      store._tag === "Sqlite"
        ? keysAndQuotas.pipe(Layer.provide(SqliteAdapter.layer({ filename: store.filename })))
        : keysAndQuotas.pipe(Layer.provide(PgAdapter.layer({ url: store.url })))
    )
  )
