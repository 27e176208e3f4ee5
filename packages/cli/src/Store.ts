/**
 * Where a command keeps its data, as `--db` / `VIGIL_DB` names it: a file path (SQLite, the embedded default) or a
 * `postgres://` / `postgresql://` URL (credentials from the URL or the usual `PG*` variables). Any other
 * `scheme://` is refused in one line rather than taken for a file name.
 */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { ApiKeyStore, type Engine, QuotaStore, type StorageProbe, type StoreError } from "@vigil/core"
import { BuiltinLists } from "@vigil/engine"
import { Config, Console, Effect, Layer, Schema } from "effect"
import { CommandFailed, shown } from "./CommandFailed.ts"

/** A store named by `--db`. */
export type Store =
  { readonly _tag: "Sqlite"; readonly filename: string } | { readonly _tag: "Postgres"; readonly url: string }

/** What `--db` names: a SQLite file or a PostgreSQL URL; another scheme, or a malformed URL, refused in one line. */
export const parse = (value: string): Effect.Effect<Store, CommandFailed> => {
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

/** The store `db` names, for a log line: its kind, and the path or URL (its password hidden). */
export const describe = (db: string): string =>
  /^postgres(ql)?:\/\//i.test(db) ? `postgresql ${shown(db)}` : `sqlite ${db}`

/** Every storage port, as a command that opens the database uses them. */
export type Ports = Engine.Storage | StorageProbe.StorageProbe

/** A whole number within a range, from the environment variable `name`, else `fallback`. */
const setting = (name: string, minimum: number, maximum: number, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })), name).pipe(
    Config.withDefault(fallback),
    Effect.mapError(
      () => new CommandFailed({ message: `${name}: must be a whole number from ${minimum} to ${maximum}` })
    )
  )

/**
 * The PostgreSQL adapter on `url`, with the pool size, statement timeout and lock timeout of the environment. Its
 * module (and the PostgreSQL client under it) is loaded only when a store is on PostgreSQL.
 */
const postgres = (url: string, serving = false) =>
  Effect.gen(function* () {
    const { PgAdapter, PgDatabase } = yield* Effect.promise(() => import("@vigil/adapter-postgres"))
    // One connection listens for list changes: two at least.
    const maxConnections = yield* setting("VIGIL_PG_POOL_SIZE", 3, 1_000, 10)
    const statementTimeoutMillis = yield* setting("VIGIL_PG_STATEMENT_TIMEOUT_MS", 100, 3_600_000, 30_000)
    const lockTimeoutMillis = yield* setting(
      "VIGIL_PG_LOCK_TIMEOUT_MS",
      100,
      3_600_000,
      PgDatabase.defaultLockTimeoutMillis
    )
    const layer = PgAdapter.layer({ url, maxConnections, statementTimeoutMillis, lockTimeoutMillis })
    // A server warns once, at start, when the database's autovacuum is off (a command that runs once does not).
    return serving
      ? Layer.tap(layer, (context) =>
          Effect.flatMap(Effect.provide(PgDatabase.autovacuumOn, context), (on) =>
            on ? Effect.void : Effect.logWarning(PgDatabase.autovacuumOff)
          )
        )
      : layer
  })

/**
 * Every store on the database `db` names (a SQLite file or a PostgreSQL database), as they are; `serving`: for a
 * server, which warns at start about what the database's settings will cost it.
 */
export const bare = (db: string, serving = false): Layer.Layer<Ports, StoreError.StoreError | CommandFailed> =>
  Layer.unwrap(
    Effect.flatMap(parse(db), (store): Effect.Effect<Layer.Layer<Ports, StoreError.StoreError>, CommandFailed> =>
      store._tag === "Sqlite"
        ? Effect.succeed(SqliteAdapter.layer({ filename: store.filename }))
        : postgres(store.url, serving)
    )
  )

/** `VIGIL_BUILTIN_LISTS`: `off` starts a new store with no list (default `on`: with the built-in official lists). */
const builtinLists = Effect.flatMap(Config.String("VIGIL_BUILTIN_LISTS").pipe(Config.withDefault("on")), (value) =>
  value === "on" || value === "off"
    ? Effect.succeed(value)
    : Effect.fail(
        new CommandFailed({ message: `invalid VIGIL_BUILTIN_LISTS ${JSON.stringify(value)}: expected on or off` })
      )
).pipe(Effect.mapError((e) => (e instanceof CommandFailed ? e : new CommandFailed({ message: e.message }))))

/** Starts a new store with the built-in official lists (unless `VIGIL_BUILTIN_LISTS=off`), saying so on stderr. */
const seeded = Layer.effectDiscard(
  Effect.gen(function* () {
    if ((yield* builtinLists) === "off") return
    const outcomes = yield* BuiltinLists.seed.pipe(
      Effect.catchTags({
        BuiltinListsUnreadable: (e) => Effect.fail(new CommandFailed({ message: e.message })),
        IngestFailed: (e) => Effect.fail(new CommandFailed({ message: `built-in lists: ${e.message}` }))
      })
    )
    const line = BuiltinLists.summary(outcomes)
    if (line !== undefined) yield* Console.error(`vigil: ${line}`)
  })
)

/**
 * Every store on the database `db` names; a new store (no list ever committed) starts with the built-in official
 * lists.
 */
export const all = (db: string, serving = false): Layer.Layer<Ports, StoreError.StoreError | CommandFailed> =>
  seeded.pipe(Layer.provideMerge(bare(db, serving)))

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
  keysAndQuotas.pipe(Layer.provide(all(db)))
