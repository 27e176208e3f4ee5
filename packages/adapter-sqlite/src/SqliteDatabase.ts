/** The scoped better-sqlite3 handle every SQLite port shares: opened in WAL mode, migrated, closed with its scope. */

import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { Instant, type StorageProbe, StoreError } from "@vigil/core"
import Database from "better-sqlite3"
import { Clock, Context, Duration, Effect, Exit, Layer } from "effect"
import { classify } from "./SqliteErrors.ts"
import { type Migration, type MigrationReport, migrate, migrations } from "./SqliteMigrations.ts"

/** The native handle (an interface, so declaration files can name it). */
export interface SqliteHandle extends Database.Database {}

/** Options for opening the database. */
export interface Options {
  /** Path of the database file; its folder is created when missing. `:memory:` for a private in-memory database. */
  readonly filename: string
  /**
   * How long a writer waits for another process's lock before failing with `Busy`, in ms. Default 5000. The wait
   * never blocks the event loop: the write is tried again after short pauses (1 ms, doubling to 50 ms).
   */
  readonly busyTimeoutMillis?: number
  /** Migrations to apply; defaults to every migration this build knows. */
  readonly migrations?: ReadonlyArray<Migration>
}

/**
 * Runs synchronous driver calls and turns native failures into StoreErrors.
 *
 * better-sqlite3 is synchronous, so a function passed to `use` or `transaction` runs to completion before
 * any other fiber can touch the handle: no lock is needed inside one process, and `transaction` uses
 * `BEGIN IMMEDIATE` so that writers in other processes are serialised by SQLite itself.
 */
export class SqliteDatabase extends Context.Service<
  SqliteDatabase,
  {
    readonly filename: string
    /** What migration did when the layer was built. */
    readonly migration: MigrationReport
    /** Runs `f` with the handle, to read; `operation` names the port method in errors. Writes go through `transaction`. */
    readonly use: <A>(operation: string, f: (db: SqliteHandle) => A) => Effect.Effect<A, StoreError.StoreError>
    /**
     * Runs `f` inside `BEGIN IMMEDIATE … COMMIT`, rolled back if it throws. While another connection holds the
     * lock it waits up to `patienceMillis` (default: the database's busy timeout) without blocking the loop.
     */
    readonly transaction: <A>(
      operation: string,
      f: (db: SqliteHandle) => A,
      patienceMillis?: number
    ) => Effect.Effect<A, StoreError.StoreError>
    /**
     * One slice of a long write: `transaction`, started no sooner after this handle's previous slice ended than that
     * slice held the lock, so that other connections waiting for it (they try again after pauses of up to 50 ms, or
     * 100 ms for SQLite's own busy wait) get it between slices instead of finding the next slice holding it. The
     * work between two slices (parsing the next records) runs during that gap instead of adding to it.
     */
    readonly slice: <A>(operation: string, f: (db: SqliteHandle) => A) => Effect.Effect<A, StoreError.StoreError>
    /**
     * Group commit: the calls of the returned function made in one turn of the event loop are handed to `f`
     * together, in arrival order, inside one immediate transaction; `f` answers each of them (same order), and
     * each caller gets its answer only after that transaction commits (all fail together if it does not).
     */
    readonly groupCommit: <I, A>(
      operation: string,
      f: (db: SqliteHandle, items: ReadonlyArray<I>) => ReadonlyArray<A>
    ) => (item: I) => Effect.Effect<A, StoreError.StoreError>
    /**
     * A number that changes when another connection (another process, or another handle on the same file) has
     * committed; this handle's own commits leave it as it is, so adapters can keep what they read for as long as
     * it does not move. It is read from SQLite (`PRAGMA data_version`, about 2 µs) once per turn of the event
     * loop and again whenever another handle of this process commits: another process's commit is seen by
     * the next turn, so by every request that arrives after it. Call it inside `use` or `transaction`: it
     * throws once the handle is closed.
     */
    readonly externalVersion: () => number
    /** The last failure any operation met (a Busy that outlasted its wait included), and when (epoch ms). */
    readonly lastFailure: () => { readonly failure: StorageProbe.StorageFailure; readonly atMillis: number } | undefined
    /** What verifying the store found: `PRAGMA integrity_check` at open, and what the ports report. */
    readonly integrity: () => StorageProbe.Integrity
    /** Adds a problem a port found in its own data (e.g. a list whose records no longer match their digest). */
    readonly reportProblem: (problem: string) => void
  }
>()("@vigil/adapter-sqlite/SqliteDatabase") {}

/**
 * Runs `f`, turning native failures into StoreErrors. While another connection holds the lock `f` needs (`Busy`),
 * it is tried again after a pause (1 ms, doubling to 50 ms) until `budget` ms of pauses have passed: the fiber
 * waits, the event loop does not.
 */
const attempt = <A>(
  operation: string,
  f: () => A,
  budget = 0,
  onFailure: (error: StoreError.StoreError) => Effect.Effect<void> = () => Effect.void,
  waited = 0,
  pause = 1
): Effect.Effect<A, StoreError.StoreError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (cause) {
      const error = classify(cause, operation)
      if (error === undefined) return Effect.die(cause)
      if (error.reason !== "Busy" || waited >= budget) return Effect.andThen(onFailure(error), Effect.fail(error))
      return Effect.flatMap(Effect.sleep(Duration.millis(pause)), () =>
        attempt(operation, f, budget, onFailure, waited + pause, Math.min(pause * 2, 50))
      )
    }
  })

/** How often the same kind of storage failure is logged at most; the ones between are counted in the next line. */
const logEveryMillis = 10_000

const open = (options: Options) =>
  attempt("open", () => {
    if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true })
    const db: SqliteHandle = new Database(options.filename)
    try {
      db.pragma("journal_mode = WAL")
      db.pragma("synchronous = NORMAL")
      // SQLite's own busy wait would block the event loop; writers wait for a lock asynchronously instead (`patiently`).
      db.pragma("busy_timeout = 0")
      db.pragma("foreign_keys = ON")
      return db
    } catch (cause) {
      db.close()
      throw cause
    }
  })

/**
 * Commits made through every handle of this process. SQLite reports another handle's commit in
 * `data_version` like another process's; counting them here lets a handle drop its per-turn reading of it
 * as soon as a sibling handle writes, so sequential code in one process always sees its own writes.
 */
let processCommits = 0

/** Opens, configures and migrates the database; the handle closes when the layer's scope ends. */
export const make = Effect.fnUntraced(function* (options: Options) {
  const db = yield* Effect.acquireRelease(open(options), (db) => Effect.sync(() => db.close()))
  const budget = options.busyTimeoutMillis ?? 5000
  /** The last failure, and per operation and reason when it was last logged and how many went unlogged since. */
  let last: { readonly failure: StorageProbe.StorageFailure; readonly atMillis: number } | undefined
  const logged = new Map<string, { at: number; unlogged: number }>()
  const noteFailure = (error: StoreError.StoreError): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      last = {
        failure: { operation: error.operation, reason: error.reason, message: error.message, at: Instant.iso(now) },
        atMillis: now
      }
      const key = `${error.operation}\u0000${error.reason}`
      const entry = logged.get(key)
      if (entry !== undefined && now - entry.at < logEveryMillis) {
        entry.unlogged++
        return Effect.void
      }
      logged.set(key, { at: now, unlogged: 0 })
      const more = entry === undefined || entry.unlogged === 0 ? "" : ` (${entry.unlogged} more since the last report)`
      return Effect.logWarning(`storage: ${error.operation} failed: ${error.reason}: ${error.message}${more}`)
    })
  const now = yield* Instant.now
  const report = yield* attempt("migrate", () => migrate(db, options.migrations ?? migrations, now), budget)
  if (report instanceof StoreError.StoreError) return yield* report
  // SQLite keeps no page checksums: a full integrity check at open is what notices a damaged page or an index
  // that no longer matches its table (quick_check does not compare them).
  const checked = yield* attempt("integrity_check", () =>
    db.prepare<[], { integrity_check: string }>("PRAGMA integrity_check(20)").all()
  )
  const problems = checked.map((r) => r.integrity_check).filter((line) => line !== "ok")
  const checkedAt = yield* Instant.now
  const dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck()
  let ownCommits = 0
  const committed = () => {
    ownCommits++
    processCommits++
  }
  /** When this handle's next slice may take the lock (`performance.now()` time): see `slice`. */
  let nextSliceAt = 0
  /** The external version as read in this turn of the event loop, and the other handles' commit count then. */
  let seen: { readonly version: number; readonly othersCommits: number } | undefined
  const transaction = <A>(operation: string, f: (db: SqliteHandle) => A, patienceMillis = budget) =>
    attempt(
      operation,
      () => {
        const result = db.transaction(() => f(db)).immediate()
        committed()
        return result
      },
      patienceMillis,
      // A caller that chose not to wait for the lock asked whether it is free: its Busy is an answer, not a failure.
      patienceMillis === 0 ? (error) => (error.reason === "Busy" ? Effect.void : noteFailure(error)) : noteFailure
    )
  return SqliteDatabase.of({
    filename: options.filename,
    migration: report,
    use: (operation, f) => attempt(operation, () => f(db), budget, noteFailure),
    transaction,
    slice: (operation, f) =>
      Effect.gen(function* () {
        // Real time, as the other connections waiting are other processes (group commit waits the same way).
        const gap = nextSliceAt - performance.now()
        if (gap > 0)
          yield* Effect.callback<void>((resume) => {
            const timer = setTimeout(() => resume(Effect.void), Math.ceil(gap))
            return Effect.sync(() => clearTimeout(timer))
          })
        let held = 0
        const result = yield* transaction(operation, (handle) => {
          const started = performance.now()
          try {
            return f(handle)
          } finally {
            held = performance.now() - started
          }
        })
        nextSliceAt = performance.now() + Math.max(1, held)
        return result
      }),
    groupCommit: <I, A>(operation: string, f: (db: SqliteHandle, items: ReadonlyArray<I>) => ReadonlyArray<A>) => {
      let queue: Array<{ readonly item: I; readonly resume: (exit: Exit.Exit<A, StoreError.StoreError>) => void }> = []
      // Items that arrive while a batch waits for another process's lock join the next batch.
      const flush = (waited = 0, pause = 1) => {
        const batch = queue
        queue = []
        let results: ReadonlyArray<A>
        try {
          results = db
            .transaction(() =>
              f(
                db,
                batch.map((p) => p.item)
              )
            )
            .immediate()
        } catch (cause) {
          const error = classify(cause, operation)
          if (error?.reason === "Busy" && waited < budget) {
            queue = [...batch, ...queue]
            setTimeout(() => flush(waited + pause, Math.min(pause * 2, 50)), pause)
            return
          }
          const exit = error === undefined ? Exit.die(cause) : Exit.fail(error)
          for (const p of batch) p.resume(exit)
          return
        }
        committed()
        batch.forEach((p, i) => p.resume(Exit.succeed(results[i]!)))
      }
      return (item: I) =>
        Effect.callback<A, StoreError.StoreError>((resume) => {
          if (queue.length === 0) setImmediate(flush)
          queue.push({ item, resume })
        }).pipe(Effect.tapError(noteFailure))
    },
    externalVersion: () => {
      const othersCommits = processCommits - ownCommits
      if (seen === undefined || seen.othersCommits !== othersCommits) {
        if (seen === undefined) setImmediate(() => (seen = undefined))
        seen = { version: dataVersion.get()!, othersCommits }
      }
      return seen.version
    },
    lastFailure: () => last,
    integrity: () => ({ status: problems.length === 0 ? "ok" : "failed", problems: [...problems], checkedAt }),
    reportProblem: (problem) => void problems.push(problem)
  })
})

/**
 * Values read from the database, kept until another connection commits (the external version moves), the
 * owner forgets them after a write of its own, or `max` are held (then it starts over).
 */
export interface Memory<K, V> {
  /** The kept value of `key`, or `read()`'s, kept. Call it inside `use` or `transaction`. */
  readonly through: (key: K, read: () => V) => V
  /** Drops everything kept (after the owner's own write). */
  readonly forget: () => void
}

/** A {@link Memory} over `database`, holding at most `max` values. */
export const memory = <K, V>(database: SqliteDatabase["Service"], max: number): Memory<K, V> => {
  let kept = new Map<K, V>()
  let keptAt = -1
  return {
    through: (key, read) => {
      const version = database.externalVersion()
      if (version !== keptAt) {
        kept = new Map()
        keptAt = version
      } else if (kept.has(key)) {
        return kept.get(key)!
      }
      const value = read()
      if (kept.size >= max) kept = new Map()
      kept.set(key, value)
      return value
    },
    forget: () => void (kept = new Map())
  }
}

/** A layer holding the opened database. */
export const layer = (options: Options): Layer.Layer<SqliteDatabase, StoreError.StoreError> =>
  Layer.effect(SqliteDatabase)(make(options))
