/**
 * ContractStore on SQLite: one row per contract, its ABI as JSON text; the label is unique per key and chain by a
 * UNIQUE constraint, so two processes registering the same label cannot both succeed.
 */
import { Abi, ContractStore, StoredJson, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

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
const toContract = (r: ContractRow): ContractStore.Contract => {
  const abi = decodeAbi(r.abi)
  if (abi._tag === "Failure")
    throw new StoreError.StoreError({
      reason: "Corrupt",
      operation: "ContractStore",
      message: `the stored ABI of contract ${r.id} does not decode`
    })
  return {
    id: r.id,
    keyId: r.key_id,
    chainId: r.chain_id,
    address: r.address,
    label: r.label,
    abi: abi.value,
    abiSource: r.abi_source,
    ...(r.proxy_implementation === null
      ? {}
      : { proxy: { standard: "EIP-1967", implementation: r.proxy_implementation } }),
    ...(r.decimals === null ? {} : { decimals: r.decimals }),
    created: r.created
  }
}

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const s = yield* database.use("ContractStore.prepare", (db) => ({
    insert: db.prepare<[string, string, number, string, string, string, string, string | null, number | null, string]>(
      `INSERT INTO monitor_contracts (id, key_id, chain_id, address, label, abi, abi_source, proxy_implementation, decimals, created)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_id, chain_id, label) DO NOTHING`
    ),
    list: db.prepare<[string], ContractRow>("SELECT * FROM monitor_contracts WHERE key_id = ? ORDER BY created, rowid"),
    listChain: db.prepare<[string, number], ContractRow>(
      "SELECT * FROM monitor_contracts WHERE key_id = ? AND chain_id = ? ORDER BY created, rowid"
    ),
    get: db.prepare<[string, string], ContractRow>("SELECT * FROM monitor_contracts WHERE key_id = ? AND id = ?"),
    count: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM monitor_contracts WHERE key_id = ?"),
    remove: db.prepare<[string, string]>("DELETE FROM monitor_contracts WHERE key_id = ? AND id = ?")
  }))
  return ContractStore.ContractStore.of({
    add: (c, max = Infinity) =>
      database.transaction("ContractStore.add", () => {
        if ((s.count.get(c.keyId)?.n ?? 0) >= max) return "limit reached" as const
        const inserted = s.insert.run(
          c.id,
          c.keyId,
          c.chainId,
          c.address,
          c.label,
          encodeAbi(c.abi),
          c.abiSource,
          c.proxy?.implementation ?? null,
          c.decimals ?? null,
          c.created
        ).changes
        return inserted === 1 ? ("added" as const) : ("label taken" as const)
      }),
    list: (keyId, chainId) =>
      database.use("ContractStore.list", () =>
        (chainId === undefined ? s.list.all(keyId) : s.listChain.all(keyId, chainId)).map(toContract)
      ),
    get: (keyId, id) =>
      database.use("ContractStore.get", () => {
        const row = s.get.get(keyId, id)
        return row === undefined ? undefined : toContract(row)
      }),
    remove: (keyId, id) => database.transaction("ContractStore.remove", () => s.remove.run(keyId, id).changes === 1)
  })
})

/** The SQLite ContractStore (needs the SqliteDatabase). */
export const layer: Layer.Layer<ContractStore.ContractStore, StoreError.StoreError, SqliteDatabase> = Layer.effect(
  ContractStore.ContractStore
)(make)
