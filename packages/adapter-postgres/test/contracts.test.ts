/**
 * The port contracts on PostgreSQL: the machine's server (or `VIGIL_TEST_POSTGRES_URL`), one database made for
 * this run and dropped after it, and a schema of its own for every test (a fresh store each time).
 */
import { PgAdapter } from "@vigil/adapter-postgres"
import * as ApiKeyStoreContract from "@vigil/core-test/contracts/ApiKeyStoreContract.ts"
import * as BlockStoreContract from "@vigil/core-test/contracts/BlockStoreContract.ts"
import * as BotStoreContract from "@vigil/core-test/contracts/BotStoreContract.ts"
import * as ContractStoreContract from "@vigil/core-test/contracts/ContractStoreContract.ts"
import * as FollowLeasesContract from "@vigil/core-test/contracts/FollowLeasesContract.ts"
import * as FollowStoreContract from "@vigil/core-test/contracts/FollowStoreContract.ts"
import * as IntelIndexContract from "@vigil/core-test/contracts/IntelIndexContract.ts"
import * as QuotaStoreContract from "@vigil/core-test/contracts/QuotaStoreContract.ts"
import * as WebhookStoreContract from "@vigil/core-test/contracts/WebhookStoreContract.ts"
import * as StorageProbeContract from "@vigil/core-test/contracts/StorageProbeContract.ts"
import { Postgres } from "@vigil/testkit"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"

let run: Postgres.RunDatabase | undefined

beforeAll(async () => {
  run = await Postgres.createDatabase()
})

afterAll(async () => {
  await run?.drop()
})

/** The adapter on a new schema of the run's database, built afresh for each use. */
const layer = Layer.unwrap(
  Effect.sync(() => PgAdapter.layer({ url: run!.url, schema: Postgres.schemaName(), maxConnections: 4 }))
)

QuotaStoreContract.suite("postgres", layer)
ApiKeyStoreContract.suite("postgres", layer)
StorageProbeContract.suite("postgres", layer, "postgres")
ContractStoreContract.suite("postgres", layer)
BotStoreContract.suite("postgres", layer)
BlockStoreContract.suite("postgres", layer)
WebhookStoreContract.suite("postgres", layer)
FollowStoreContract.suite("postgres", layer)
FollowLeasesContract.suite("postgres", layer)
IntelIndexContract.suite("postgres", layer)
