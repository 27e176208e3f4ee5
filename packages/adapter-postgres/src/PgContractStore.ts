/**
 * ContractStore on PostgreSQL: one row per contract, its ABI as JSON text. The label is unique per key and chain
 * by a UNIQUE constraint, and a key's additions take its advisory lock, so its limit holds across instances.
 */
import { Abi, ContractStore, StoredJson, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { PgDatabase, serialised } from "./PgDatabase.ts"

interface ContractRow {
  readonly id: string
  readonly key_id: string
  readonly chain_id: number
  readonly address: string
  readonly label: string
  readonly abi: string
  readonly abi_source: string
  readonly proxy_implementation: string | null
  readonly decimals: number | null
  readonly created: string
}

const AbiJson = Schema.fromJsonString(Abi.Abi)
const encodeAbi = Schema.encodeSync(AbiJson)
/**
 * A key's contracts are read at every step of a follower, and keys often register the same ABI: each distinct ABI
 * text is decoded once while it keeps being read.
 */
const decodeAbi = StoredJson.remembered(Schema.decodeUnknownExit(AbiJson), 10_000)

/** A row as a contract; a stored ABI that no longer decodes is corruption, named by the contract's id. */
const toContract = (r: ContractRow): Effect.Effect<ContractStore.Contract, StoreError.StoreError> => {
  const abi = decodeAbi(r.abi)
  if (abi._tag === "Failure")
    return Effect.fail(
      new StoreError.StoreError({
        reason: "Corrupt",
        operation: "ContractStore",
        message: `the stored ABI of contract ${r.id} does not decode`
      })
    )
  return Effect.succeed({
    id: r.id,
    keyId: r.key_id,
    chainId: r.chain_id,
    address: r.address,
    label: r.label,
    abi: abi.value,
    abiSource: r.abi_source,
    ...(r.proxy_implementation === null
      ? {}
      : { proxy: { standard: "EIP-1967" as const, implementation: r.proxy_implementation } }),
    ...(r.decimals === null ? {} : { decimals: r.decimals }),
    created: r.created
  })
}

const columns = "id, key_id, chain_id, address, label, abi, abi_source, proxy_implementation, decimals, created"

const make = Effect.gen(function* () {
  const { sql, run, transaction } = yield* PgDatabase
  return ContractStore.ContractStore.of({
    add: (c, max = Infinity) =>
      transaction(
        "ContractStore.add",
        Effect.gen(function* () {
          yield* serialised(sql, `contracts:${c.keyId}`)
          const [count] = yield* sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM monitor_contracts WHERE key_id = ${c.keyId}`
          if ((count?.n ?? 0) >= max) return "limit reached" as const
          const inserted = yield* sql<{ readonly id: string }>`
            INSERT INTO monitor_contracts
              (id, key_id, chain_id, address, label, abi, abi_source, proxy_implementation, decimals, created)
            VALUES (${c.id}, ${c.keyId}, ${c.chainId}, ${c.address}, ${c.label}, ${encodeAbi(c.abi)}, ${c.abiSource},
                    ${c.proxy?.implementation ?? null}, ${c.decimals ?? null}, ${c.created})
            ON CONFLICT (key_id, chain_id, label) DO NOTHING
            RETURNING id`
          return inserted.length === 1 ? ("added" as const) : ("label taken" as const)
        })
      ),
    list: (keyId, chainId) =>
      Effect.flatMap(
        run(
          "ContractStore.list",
          chainId === undefined
            ? sql<ContractRow>`SELECT ${sql.literal(columns)} FROM monitor_contracts WHERE key_id = ${keyId} ORDER BY created, seq`
            : sql<ContractRow>`SELECT ${sql.literal(columns)} FROM monitor_contracts
                               WHERE key_id = ${keyId} AND chain_id = ${chainId} ORDER BY created, seq`
        ),
        (rows) => Effect.forEach(rows, toContract)
      ),
    get: (keyId, id) =>
      Effect.flatMap(
        run(
          "ContractStore.get",
          sql<ContractRow>`SELECT ${sql.literal(columns)} FROM monitor_contracts WHERE key_id = ${keyId} AND id = ${id}`
        ),
        (rows) => (rows[0] === undefined ? Effect.succeed(undefined) : toContract(rows[0]))
      ),
    remove: (keyId, id) =>
      Effect.map(
        run(
          "ContractStore.remove",
          sql<{
            readonly id: string
          }>`DELETE FROM monitor_contracts WHERE key_id = ${keyId} AND id = ${id} RETURNING id`
        ),
        (rows) => rows.length === 1
      )
  })
})

/** A layer providing ContractStore over the PgDatabase in context. */
export const layer: Layer.Layer<ContractStore.ContractStore, never, PgDatabase> = Layer.effect(
  ContractStore.ContractStore
)(make)
