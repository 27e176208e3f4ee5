/**
 * Embedding without Effect: one ManagedRuntime over the SQLite adapter behind a small Promise API.
 * Run: `node examples/dist/quota-facade.js [db-file]` after `npm run build`.
 */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { QuotaStore } from "@vigil/core"
import { Effect, ManagedRuntime } from "effect"

/** A per-client request budget of `limit` per minute, stored in a SQLite file. */
export const createQuota = (filename: string, limit: number) => {
  const runtime = ManagedRuntime.make(SqliteAdapter.layer({ filename }))
  return {
    /** Charges one request for `client` now; resolves whether it is allowed and how many remain. */
    take: (client: string, now = Date.now()) =>
      runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* QuotaStore.QuotaStore
          const start = now - (now % 60_000)
          const { granted, windows } = yield* store.charge(1, [{ key: client, start, millis: 60_000, limit }])
          return { allowed: granted, remaining: limit - (windows[0]?.used ?? 0) }
        })
      ),
    /** Closes the database. */
    close: () => runtime.dispose()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quota = createQuota(process.argv[2] ?? "./.vigil/example.db", 3)
  for (let i = 0; i < 5; i++) console.log(await quota.take("acme"))
  await quota.close()
}
