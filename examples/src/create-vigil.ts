/**
 * Embedding the screening engine without Effect: `createVigil({ db })` gives Promise methods over one
 * ManagedRuntime holding the SQLite storage and the Screening service.
 * Run: `node examples/dist/create-vigil.js <db-file> <address>...` after `npm run build` and an ingest.
 */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer, ManagedRuntime } from "effect"

/** A screening result, or why the address was not screened. */
export type Outcome =
  | Screening.Result
  | { readonly address: string; readonly error: { readonly code: "invalid_address"; readonly message: string } }

/** Opens (creating if needed) the database at `db` and returns the engine's Promise API. */
export const createVigil = (options: { readonly db: string }) => {
  const runtime = ManagedRuntime.make(
    Screening.Screening.layer.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: options.db })))
  )
  return {
    /** Screens one address; resolves with the v3 result or an `invalid_address` error object. */
    screen: (address: string, screenOptions: Screening.Options = {}): Promise<Outcome> =>
      runtime.runPromise(
        Effect.flatMap(Effect.service(Screening.Screening), (s) => s.screen(address, screenOptions)).pipe(
          Effect.catchTag("InvalidAddress", (e) =>
            Effect.succeed({ address, error: { code: "invalid_address" as const, message: e.message } })
          )
        )
      ),
    /** The lists ingested into this database. */
    lists: () => runtime.runPromise(Effect.flatMap(Effect.service(IntelIndex.IntelIndex), (i) => i.lists)),
    /** Closes the database. */
    close: () => runtime.dispose()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [db = "./.vigil/vigil.db", ...addresses] = process.argv.slice(2)
  const vigil = createVigil({ db })
  for (const address of addresses) console.log(JSON.stringify(await vigil.screen(address)))
  await vigil.close()
}
