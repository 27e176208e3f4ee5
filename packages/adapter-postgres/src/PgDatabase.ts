/**
 * The PostgreSQL database every port of this adapter shares: a connection pool (`@effect/sql-pg`, its own
 * wire-protocol driver), the schema migrated at start (`effect/sql`'s Migrator, which takes an exclusive lock on
 * its table inside the migrating transaction, so instances starting together migrate once), a database written
 * by a newer build refused, and every driver failure turned into a {@link StoreError} a caller can act on.
 */
import { PgClient } from "@effect/sql-pg"
import { Instant, type StorageProbe, StoreError } from "@vigil/core"
import { Clock, Context, Duration, Effect, Exit, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { Migrator, SqlClient, SqlError } from "effect/sql"
import { migrations } from "./PgMigrations.ts"

/** Where the database is and how to talk to it. */
export interface Options {
  /** `postgres://` or `postgresql://` URL; what it leaves out comes from the usual `PG*` variables. */
  readonly url: string
  /** Connections in the pool (default 10). */
  readonly maxConnections?: number
  /** Longest a statement may run before the server cancels it (default 30 s). */
  readonly statementTimeoutMillis?: number
  /**
   * Longest a statement waits for a lock another transaction holds (default 5 s, as SQLite waits for its write
   * lock) before it fails `Busy`: a request answers 503 with Retry-After rather than waiting out the statement
   * timeout. Migrations wait as long as they need (instances starting together take turns).
   */
  readonly lockTimeoutMillis?: number
  /** The schema every table lives in (`search_path`); default the server's (`public`). */
  readonly schema?: string
}

/** The table the migrator keeps applied migrations in. */
export const migrationsTable = "vigil_migrations"

/** The pool, and how operations on it report failures. */
export class PgDatabase extends Context.Service<
  PgDatabase,
  {
    readonly sql: PgClient.PgClient
    /** Runs `effect` as one operation named `operation`, its driver failures as StoreErrors (others as they are). */
    readonly run: <A, E>(
      operation: string,
      effect: Effect.Effect<A, E>
    ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | StoreError.StoreError>
    /** Runs `effect` in one transaction, as {@link run}; any failure rolls the whole transaction back. */
    readonly transaction: <A, E>(
      operation: string,
      effect: Effect.Effect<A, E>
    ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | StoreError.StoreError>
    /** The last failure any operation met, and when (epoch ms). */
    readonly lastFailure: () => { readonly failure: StorageProbe.StorageFailure; readonly atMillis: number } | undefined
    /** When the database was opened and migrated (ISO instant). */
    readonly openedAt: string
    /** The schema the tables live in: what tells this store's notices from another's on the same database. */
    readonly schema: string
    /**
     * How far the database's clock is ahead of this instance's (ms; negative when behind), measured when the pool
     * opened: what the outbox adds to the instance's times to store them on the database's clock, so that due
     * times and leases mean the same to every instance whatever their clocks say.
     */
    readonly skewMillis: number
  }
>()("@vigil/adapter-postgres/PgDatabase") {}

/** A driver failure as the StoreError of `operation`. */
export const storeError = (operation: string) => (error: SqlError.SqlError | Migrator.MigrationError) => {
  if (error._tag === "MigrationError")
    return new StoreError.StoreError({ reason: "Unavailable", operation, message: error.message, cause: error })
  const reason = error.reason
  const kind: StoreError.StoreErrorReason =
    reason._tag === "UniqueViolation" || reason._tag === "ConstraintError"
      ? "Conflict"
      : reason._tag === "DeadlockError" || reason._tag === "SerializationError" || reason._tag === "LockTimeoutError"
        ? "Busy"
        : "Unavailable"
  // The server's own words ("duplicate key value violates …") rather than the driver's "Query failed".
  const server = (reason as { readonly cause?: unknown }).cause
  const message = server instanceof Error && server.message !== "" ? server.message : reason.message || error.message
  return new StoreError.StoreError({ reason: kind, operation, message, cause: error })
}

/**
 * The clock of the pool and of every statement: the real one, whatever clock the caller runs under (a test's
 * TestClock included). Connection, idle and lock timings are the network's and the server's; the ports take the
 * times they store as arguments.
 */
const realClock = Clock.Clock.defaultValue()
export const onRealClock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Clock.Clock, realClock)

/** The advisory lock instances take to create their schema one at a time. */
const schemaLock = 0x76_69_67_69 // "vigi"

/** The migrations of this build, for the migrator. */
const loader = Migrator.fromRecord(migrations)

/** The highest migration this build knows. */
export const schemaVersion = Math.max(...Object.keys(migrations).map((name) => Number(name.split("_")[0])))

/**
 * Migrates the database, refusing one a newer build has migrated (its tables may hold what this build would
 * misread or lose).
 */
const migrate = (schema: string | undefined) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // `IF NOT EXISTS` alone races between instances starting together: the lock makes them take turns.
    if (schema !== undefined)
      yield* sql.withTransaction(
        Effect.andThen(
          sql`SELECT pg_advisory_xact_lock(${schemaLock})`,
          sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        )
      )
    const [table] = yield* sql<{
      readonly exists: boolean
    }>`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS exists`
    if (table?.exists === true) {
      const [latest] = yield* sql<{
        readonly id: number | null
      }>`SELECT max(migration_id) AS id FROM ${sql(migrationsTable)}`
      if (latest?.id !== null && latest?.id !== undefined && latest.id > schemaVersion)
        return yield* new StoreError.StoreError({
          reason: "Incompatible",
          operation: "migrate",
          message: `the database was migrated by a newer build of Vigil (schema ${latest.id}; this build knows up to ${schemaVersion}): run that build, or restore a backup made before it`
        })
    }
    yield* Migrator.make({})({ loader, table: migrationsTable })
  })

/** The default of {@link Options.lockTimeoutMillis}. */
export const defaultLockTimeoutMillis = 5_000

/** A pool of `connections` on the database of `options`, statements waiting for locks `lockTimeoutMillis` at most. */
const pool = (options: Options, connections: number, lockTimeoutMillis: number) =>
  PgClient.make({
    url: Redacted.make(options.url),
    maxConnections: connections,
    applicationName: "vigil",
    startupParameters: {
      statement_timeout: String(options.statementTimeoutMillis ?? 30_000),
      lock_timeout: String(lockTimeoutMillis),
      ...(options.schema === undefined ? {} : { search_path: options.schema })
    },
    connectTimeout: Duration.seconds(10)
  }).pipe(Effect.mapError(storeError("connect")), onRealClock)

/**
 * Migrates on a connection of its own, which waits for locks as long as it takes (0: no lock timeout): an instance
 * that starts while another migrates waits for it rather than failing.
 */
const migrateAlone = (options: Options) =>
  Effect.scoped(
    Effect.flatMap(pool(options, 1, 0), (client) =>
      migrate(options.schema).pipe(Effect.provideService(SqlClient.SqlClient, client), onRealClock)
    )
  ).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((e) => (e._tag === "StoreError" ? e : storeError("migrate")(e)))
  )

/**
 * Whether the server's autovacuum is on: the outbox's own vacuum settings (migration 23) act only when it is. Read
 * when asked (a server asks once, at start), not by every command that opens the pool.
 */
export const autovacuumOn: Effect.Effect<boolean, StoreError.StoreError, PgDatabase> = Effect.gen(function* () {
  const { sql, run } = yield* PgDatabase
  const [row] = yield* run(
    "autovacuum",
    sql<{ readonly setting: string }>`SELECT current_setting('autovacuum') AS setting`
  )
  return row?.setting !== "off"
})

/** What a server on a database whose autovacuum is off warns at start (see {@link autovacuumOn}). */
export const autovacuumOff =
  "PostgreSQL's autovacuum is off: the outbox's settled deliveries leave dead rows that every claim walks past " +
  "until a VACUUM, so deliveries slow down as they accumulate; turn autovacuum on, or run VACUUM webhook_deliveries " +
  "regularly (docs/operating.md)"

/** Opens the pool, migrates, and provides the database to the ports. */
export const layer = (options: Options): Layer.Layer<PgDatabase | PgClient.PgClient, StoreError.StoreError> => {
  // Two connections listen for changes (of the lists, of the keys): three at least.
  const client = PgClient.layerFrom(
    pool(options, Math.max(3, options.maxConnections ?? 10), options.lockTimeoutMillis ?? defaultLockTimeoutMillis)
  )
  const database = Layer.effect(PgDatabase)(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      yield* migrateAlone(options)
      // The instance's clock read either side of the database's: the skew is measured to half a round trip.
      const before = yield* Clock.currentTimeMillis
      const [server] = yield* sql<{ readonly ms: number }>`
        SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`.pipe(
        onRealClock,
        Effect.mapError(storeError("clock"))
      )
      const skewMillis = Math.round(server!.ms - (before + (yield* Clock.currentTimeMillis)) / 2)
      let last: { readonly failure: StorageProbe.StorageFailure; readonly atMillis: number } | undefined
      /**
       * The StoreError of `operation`, noted as the last failure met unless another writer only held a lock it
       * needed (`Busy`): a busy database is not a faulty one, and health must not say otherwise.
       */
      const failed =
        (operation: string) =>
        <E>(error: E): Exclude<E, SqlError.SqlError> | StoreError.StoreError => {
          if (!SqlError.isSqlError(error)) return error as Exclude<E, SqlError.SqlError>
          const e = storeError(operation)(error)
          if (e.reason === "Busy") return e
          const atMillis = realClock.currentTimeMillisUnsafe()
          last = {
            failure: { operation, reason: e.reason, message: e.message, at: Instant.iso(atMillis) },
            atMillis
          }
          return e
        }
      return PgDatabase.of({
        sql,
        run: (operation, effect) => onRealClock(Effect.mapError(effect, failed(operation))),
        transaction: (operation, effect) =>
          onRealClock(Effect.mapError(sql.withTransaction(effect), failed(operation))),
        lastFailure: () => last,
        openedAt: Instant.iso(realClock.currentTimeMillisUnsafe()),
        schema: options.schema ?? "public",
        skewMillis
      })
    })
  )
  return database.pipe(Layer.provideMerge(client))
}

/**
 * Group commit: hands what arrived to `run` at once (one transaction, a few round trips for many requests), one
 * batch at a time; what arrives while a batch is in the database waits for it and goes with the next. Batches of
 * one key's quota windows would only queue behind each other's row locks: one at a time, each takes all that
 * waited. Each caller gets its own result, or the batch's failure.
 */
export const batcher = <I, A>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<A>, StoreError.StoreError>
) => {
  let queue: Array<{ readonly item: I; readonly resume: (effect: Effect.Effect<A, StoreError.StoreError>) => void }> =
    []
  /** A batch is in the database, or about to be sent (then the items of this turn join it). */
  let busy = false
  const flush = (): void => {
    const batch = queue
    queue = []
    if (batch.length === 0) {
      busy = false
      return
    }
    Effect.runFork(
      Effect.exit(run(batch.map((b) => b.item))).pipe(
        Effect.tap((exit) =>
          Effect.sync(() => {
            batch.forEach((b, i) =>
              b.resume(Exit.isSuccess(exit) ? Effect.succeed(exit.value[i]!) : Effect.failCause(exit.cause))
            )
            flush()
          })
        )
      )
    )
  }
  return (item: I): Effect.Effect<A, StoreError.StoreError> =>
    Effect.callback<A, StoreError.StoreError>((resume) => {
      queue.push({ item, resume })
      if (!busy) {
        busy = true
        setImmediate(flush)
      }
    })
}

/**
 * Takes the transaction-scoped advisory lock of `name` (e.g. a key's id): the transactions that take it for the
 * same name run one after the other, so a count-then-insert under it holds across instances.
 */
export const serialised = (sql: PgClient.PgClient, name: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`
