/**
 * BlockStore on SQLite: each block's data as JSON by chain and number (an upsert replaces it on another hash, or
 * with the traces it lacked), and bots' submitted block numbers.
 */
import { BlockStore, type ChainFacts, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

interface BlockRow {
  readonly chain_id: number
  readonly number: number
  readonly hash: string
  readonly traces: number
  readonly data: string
}

const Json = Schema.fromJsonString(Schema.Unknown)
const encodeJson = Schema.encodeSync(Json)
const decodeJson = Schema.decodeUnknownExit(Json)

/** A row as a block; stored data that no longer decodes is corruption, named by chain and number. */
const toBlock = (r: BlockRow): BlockStore.StoredBlock => {
  const data = decodeJson(r.data)
  if (data._tag === "Failure" || typeof data.value !== "object" || data.value === null)
    throw new StoreError.StoreError({
      reason: "Corrupt",
      operation: "BlockStore",
      message: `the stored block ${r.number} of chain ${r.chain_id} does not decode`
    })
  return {
    chainId: r.chain_id,
    number: r.number,
    hash: r.hash,
    traces: r.traces === 1,
    data: data.value as ChainFacts.BlockData
  }
}

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const s = yield* database.use("BlockStore.prepare", (db) => ({
    put: db.prepare<[number, number, string, number, string]>(
      `INSERT INTO monitor_blocks (chain_id, number, hash, traces, data) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, traces = excluded.traces, data = excluded.data
       WHERE monitor_blocks.hash <> excluded.hash OR (excluded.traces = 1 AND monitor_blocks.traces = 0)`
    ),
    get: db.prepare<[number, number], BlockRow>("SELECT * FROM monitor_blocks WHERE chain_id = ? AND number = ?"),
    submit: db.prepare<[string, number]>("INSERT OR IGNORE INTO monitor_bot_blocks (bot_id, number) VALUES (?, ?)"),
    submitted: db.prepare<[string], { number: number }>(
      "SELECT number FROM monitor_bot_blocks WHERE bot_id = ? ORDER BY number"
    ),
    forget: db.prepare<[string]>("DELETE FROM monitor_bot_blocks WHERE bot_id = ?")
  }))
  return BlockStore.BlockStore.of({
    put: (blocks) =>
      database.transaction("BlockStore.put", () => {
        for (const b of blocks) s.put.run(b.chainId, b.number, b.hash, b.traces ? 1 : 0, encodeJson(b.data))
      }),
    get: (chainId, numbers) =>
      database.use("BlockStore.get", () =>
        [...new Set(numbers)]
          .sort((a, b) => a - b)
          .flatMap((n) => {
            const row = s.get.get(chainId, n)
            return row === undefined ? [] : [toBlock(row)]
          })
      ),
    submit: (botId, numbers) =>
      database.transaction("BlockStore.submit", () => {
        for (const n of numbers) s.submit.run(botId, n)
      }),
    submitted: (botId) => database.use("BlockStore.submitted", () => s.submitted.all(botId).map((r) => r.number)),
    forget: (botId) =>
      database.transaction("BlockStore.forget", () => {
        s.forget.run(botId)
      })
  })
})

/** The SQLite BlockStore (needs the SqliteDatabase). */
export const layer: Layer.Layer<BlockStore.BlockStore, StoreError.StoreError, SqliteDatabase> = Layer.effect(
  BlockStore.BlockStore
)(make)
