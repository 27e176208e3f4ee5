/**
 * BlockStore on PostgreSQL: each block's data as JSON by chain and number (an upsert replaces it on another hash,
 * or with the traces it lacked), and bots' submitted block numbers; many rows go in one statement.
 */
import { BlockStore, type ChainFacts, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { PgDatabase } from "./PgDatabase.ts"

interface BlockRow {
  readonly chain_id: number
  readonly number: string
  readonly hash: string
  readonly traces: boolean
  readonly data: string
}

const Json = Schema.fromJsonString(Schema.Unknown)
const encodeJson = Schema.encodeSync(Json)
const decodeJson = Schema.decodeUnknownExit(Json)

/** A row as a block; stored data that no longer decodes is corruption, named by chain and number. */
const toBlock = (r: BlockRow): Effect.Effect<BlockStore.StoredBlock, StoreError.StoreError> => {
  const data = decodeJson(r.data)
  if (data._tag === "Failure" || typeof data.value !== "object" || data.value === null)
    return Effect.fail(
      new StoreError.StoreError({
        reason: "Corrupt",
        operation: "BlockStore",
        message: `the stored block ${r.number} of chain ${r.chain_id} does not decode`
      })
    )
  return Effect.succeed({
    chainId: r.chain_id,
    number: Number(r.number),
    hash: r.hash,
    traces: r.traces,
    data: data.value as ChainFacts.BlockData
  })
}

const make = Effect.gen(function* () {
  const { sql, run } = yield* PgDatabase
  return BlockStore.BlockStore.of({
    put: (blocks) =>
      blocks.length === 0
        ? Effect.void
        : run(
            "BlockStore.put",
            Effect.asVoid(sql`
              INSERT INTO monitor_blocks (chain_id, number, hash, traces, data)
              SELECT * FROM unnest(${blocks.map((b) => b.chainId)}::int[], ${blocks.map((b) => b.number)}::bigint[],
                                   ${blocks.map((b) => b.hash)}::text[], ${blocks.map((b) => b.traces)}::boolean[],
                                   ${blocks.map((b) => encodeJson(b.data))}::text[])
              ON CONFLICT (chain_id, number) DO UPDATE
                SET hash = excluded.hash, traces = excluded.traces, data = excluded.data
                WHERE monitor_blocks.hash <> excluded.hash OR (excluded.traces AND NOT monitor_blocks.traces)`)
          ),
    get: (chainId, numbers) =>
      Effect.flatMap(
        run(
          "BlockStore.get",
          sql<BlockRow>`SELECT chain_id, number::text AS number, hash, traces, data FROM monitor_blocks
                        WHERE chain_id = ${chainId} AND number = ANY(${[...new Set(numbers)]}::bigint[])
                        ORDER BY number`
        ),
        (rows) => Effect.forEach(rows, toBlock)
      ),
    submit: (botId, numbers) =>
      numbers.length === 0
        ? Effect.void
        : run(
            "BlockStore.submit",
            Effect.asVoid(sql`
              INSERT INTO monitor_bot_blocks (bot_id, number)
              SELECT ${botId}, n FROM unnest(${[...new Set(numbers)]}::bigint[]) AS t(n)
              ON CONFLICT DO NOTHING`)
          ),
    submitted: (botId) =>
      Effect.map(
        run(
          "BlockStore.submitted",
          sql<{ readonly number: string }>`SELECT number::text AS number FROM monitor_bot_blocks
                                           WHERE bot_id = ${botId} ORDER BY number`
        ),
        (rows) => rows.map((r) => Number(r.number))
      ),
    forget: (botId) =>
      run("BlockStore.forget", Effect.asVoid(sql`DELETE FROM monitor_bot_blocks WHERE bot_id = ${botId}`))
  })
})

/** A layer providing BlockStore over the PgDatabase in context. */
export const layer: Layer.Layer<BlockStore.BlockStore, never, PgDatabase> = Layer.effect(BlockStore.BlockStore)(make)
