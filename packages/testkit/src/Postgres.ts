/**
 * The machine's PostgreSQL for tests and benchmarks: each run makes a database of its own and drops it when done,
 * so runs never see each other's data. The server is `VIGIL_TEST_POSTGRES_URL`, else the local one
 * (`postgres://postgres@127.0.0.1:5432/postgres`); when it does not answer, the run fails with one line saying how
 * to start one or where to point, never skipping silently.
 */
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

/** The server tests use (its maintenance database). */
const serverUrl = Config.String("VIGIL_TEST_POSTGRES_URL").pipe(
  Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres")
)

/** `url` with its password hidden, for messages. */
const shown = (url: string) => url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@")

/** Runs `statement` on the maintenance database of the server at `server`. */
const onServer = (server: string, statement: string) =>
  Effect.scoped(
    Effect.flatMap(
      PgClient.make({ url: Redacted.make(server), maxConnections: 1, connectTimeout: "5 seconds" }),
      (sql) => sql.unsafe(statement)
    )
  ).pipe(Effect.provide(Reactivity.layer))

/** The rows `statement` reads from the database at `url`: for a test that checks what a store holds. */
export const rows = (url: string, statement: string): Promise<ReadonlyArray<Readonly<Record<string, unknown>>>> =>
  Effect.runPromise(onServer(url, statement)).then((found) => found.map((row) => ({ ...row })))

/**
 * Runs `statement` (a `LOCK TABLE …`) in a transaction on the database at `url` and keeps the transaction open
 * until `release` is called: for a test of what a request does when another transaction holds a lock.
 */
export const holding = async (url: string, statement: string): Promise<{ readonly release: () => Promise<void> }> => {
  let onHeld = () => {}
  const held = new Promise<void>((resolve) => (onHeld = resolve))
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const done = Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(url), maxConnections: 1, connectTimeout: "5 seconds" }),
        (sql) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql.unsafe(statement)
              onHeld()
              yield* Effect.promise(() => released)
            })
          )
      )
    ).pipe(Effect.provide(Reactivity.layer))
  )
  await Promise.race([held, done])
  return {
    release: async () => {
      release()
      await done
    }
  }
}

/** A database made for this run: its URL, and how to drop it. */
export interface RunDatabase {
  readonly url: string
  readonly drop: () => Promise<void>
}

/** Makes a database of its own for a test run (`vigil_test_<random>`) on the server at `server`. */
export const createDatabase = async (at?: string): Promise<RunDatabase> => {
  const server =
    at ??
    (await Effect.runPromise(
      Effect.gen(function* () {
        return yield* serverUrl
      })
    ))
  const name = `vigil_test_${randomBytes(6).toString("hex")}`
  try {
    await Effect.runPromise(onServer(server, `CREATE DATABASE ${name}`))
  } catch (cause) {
    throw new Error(
      `PostgreSQL does not answer at ${shown(server)} (${String((cause as Error).message ?? cause).split("\n")[0]}): start it (pg_ctlcluster 15 main start) or set VIGIL_TEST_POSTGRES_URL to a server that answers`
    )
  }
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => Effect.runPromise(Effect.asVoid(onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  }
}

/** A fresh schema name, for a store of its own inside a run's database. */
export const schemaName = (): string => `t_${randomBytes(6).toString("hex")}`
