/**
 * PostgreSQL for the scenarios that measure it beside SQLite: a database of its own per use on the machine's
 * server (or `VIGIL_TEST_POSTGRES_URL`), dropped after; when no server answers, those subjects are left out and the
 * scenario says why.
 */
import { Postgres } from "@vigil/testkit"

/** Runs `use` with a new database's URL and drops the database after; undefined (and why) when none answers. */
export const withDatabase = async <A>(
  use: (url: string) => Promise<A>
): Promise<{ readonly value: A } | { readonly unavailable: string }> => {
  let run: Postgres.RunDatabase
  try {
    run = await Postgres.createDatabase()
  } catch (cause) {
    return { unavailable: String((cause as Error).message ?? cause) }
  }
  try {
    return { value: await use(run.url) }
  } finally {
    await run.drop()
  }
}
