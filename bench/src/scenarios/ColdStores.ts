/**
 * The cold stores (contracts, bots, keys: read and written by administration, not per screened address) on each
 * dialect's own implementation: SQLite through better-sqlite3 directly, PostgreSQL through effect/sql. What one
 * operation costs on each, to decide whether the two could share one effect/sql implementation.
 */
import { PgAdapter } from "@vigil/adapter-postgres"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { type Abi, ApiKeyStore, ContractStore } from "@vigil/core"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { withDatabase } from "../Postgres.ts"

const contractsPerKey = 20

const transfer: Abi.Abi = [
  {
    type: "event",
    name: "Transfer",
    anonymous: false,
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false }
    ]
  }
]

/** Operations per second of each cold operation over a store's context, `calls` of each, best of `rounds`. */
const measure = (context: Context.Context<ContractStore.ContractStore | ApiKeyStore.ApiKeyStore>, rounds: number) =>
  Effect.gen(function* () {
    const contracts = Context.get(context, ContractStore.ContractStore)
    const keys = Context.get(context, ApiKeyStore.ApiKeyStore)
    yield* keys.insert({
      id: "k1",
      name: "Acme",
      hash: "00",
      qps: 10,
      daily: 10,
      monthly: 10,
      createdAt: "2026-01-01T00:00:00.000Z"
    })
    for (let i = 0; i < contractsPerKey; i++)
      yield* contracts.add({
        id: `ct_${i}`,
        keyId: "k1",
        chainId: 1,
        address: `0x${i.toString(16).padStart(40, "0")}`,
        label: `Token${i}`,
        abi: transfer,
        abiSource: "supplied",
        created: "2026-01-01T00:00:00.000Z"
      })
    const calls = 2_000
    const rate = (op: Effect.Effect<unknown, unknown>) =>
      Effect.gen(function* () {
        let best = 0
        for (let r = 0; r < rounds; r++) {
          const started = performance.now()
          for (let i = 0; i < calls; i++) yield* op
          best = Math.max(best, calls / ((performance.now() - started) / 1000))
        }
        return Math.round(best)
      })
    return {
      "contracts.list/s": yield* rate(contracts.list("k1")),
      "contracts.get/s": yield* rate(contracts.get("k1", "ct_7")),
      "keys.find/s": yield* rate(keys.find("k1"))
    }
  })

/** The figures of one store, built from `layer` for the measurement and closed after. */
const run = (layer: Layer.Layer<ContractStore.ContractStore | ApiKeyStore.ApiKeyStore, unknown>, rounds: number) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(layer), (context) => measure(context, rounds))))

/** The scenario. */
export const scenario: Scenario = {
  name: "cold-stores",
  description:
    "The cold stores' operations (a key's 20 contracts listed, one contract read, a key found) in process, one after another, on a SQLite file through the SQLite adapter (better-sqlite3 called directly inside its database calls) and on a PostgreSQL database of the machine's server through the PostgreSQL adapter (effect/sql over @effect/sql-pg, a pool of 10, loopback): operations per second, best of the rounds of 2,000 calls each. Baseline: SQLite. What a shared effect/sql implementation of these stores would be measured against (docs/decisions.md).",
  run: async ({ rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-cold-"))
    try {
      const sqlite = await run(SqliteAdapter.layer({ filename: join(dir, "vigil.db") }), rounds)
      const pg = await withDatabase((url) => run(PgAdapter.layer({ url, maxConnections: 10 }), rounds))
      const measurements = [
        { subject: "SQLite adapter (better-sqlite3, direct)", figures: sqlite },
        ...("value" in pg ? [{ subject: "PostgreSQL adapter (effect/sql)", figures: pg.value }] : [])
      ]
      return {
        settings: { rounds, calls: 2_000, contractsPerKey },
        measurements,
        baseline: measurements[0]!.subject,
        ratios: ratiosTo(measurements[0]!.subject, measurements),
        notes: "unavailable" in pg ? [`PostgreSQL left out: ${pg.unavailable}`] : []
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
