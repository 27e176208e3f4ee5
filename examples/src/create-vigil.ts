/**
 * Embedding the screening engine without Effect, through the `@vigil/engine` package's Promise facade.
 * Run: `node examples/dist/create-vigil.js <db-file> <address>...` after `npm run build` and an ingest.
 */
import { createVigil } from "@vigil/engine"

export { createVigil }

if (import.meta.url === `file://${process.argv[1]}`) {
  const [db = "./.vigil/vigil.db", ...addresses] = process.argv.slice(2)
  const vigil = createVigil({ db })
  for (const address of addresses) console.log(JSON.stringify(await vigil.screen(address)))
  await vigil.close()
}
