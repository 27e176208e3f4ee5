/**
 * BotStore on PostgreSQL: one row per bot, the bot as JSON beside the columns it is found and ordered by. An update
 * names the revision it replaces, so two updates (from any instances) never silently overwrite each other; a
 * key's additions take its advisory lock, so its limit holds across instances.
 */
import { BotStore, StoredJson, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { PgDatabase, serialised } from "./PgDatabase.ts"

interface BotRow {
  readonly id: string
  readonly body: string
}

const BotJson = Schema.fromJsonString(BotStore.Bot)
const encodeBot = Schema.encodeSync(BotJson)
/** Bots are read again at every step of a follower: a row is decoded again only when its text changed. */
const decodeBot = StoredJson.remembered(Schema.decodeUnknownExit(BotJson), 100_000)

/** A row as a bot; a stored bot that no longer decodes is corruption, named by its id. */
const toBot = (r: BotRow): Effect.Effect<BotStore.Bot, StoreError.StoreError> => {
  const bot = decodeBot(r.body)
  return bot._tag === "Failure"
    ? Effect.fail(
        new StoreError.StoreError({
          reason: "Corrupt",
          operation: "BotStore",
          message: `the stored bot ${r.id} does not decode`
        })
      )
    : Effect.succeed(bot.value)
}

const make = Effect.gen(function* () {
  const { sql, run, transaction } = yield* PgDatabase
  const bots = (operation: string, rows: Effect.Effect<ReadonlyArray<BotRow>, SqlError.SqlError>) =>
    Effect.flatMap(run(operation, rows), (found) => Effect.forEach(found, toBot))
  return BotStore.BotStore.of({
    add: (b, max = Infinity) =>
      transaction(
        "BotStore.add",
        Effect.gen(function* () {
          yield* serialised(sql, `bots:${b.keyId}`)
          const [count] = yield* sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM monitor_bots WHERE key_id = ${b.keyId}`
          if ((count?.n ?? 0) >= max) return false
          yield* sql`INSERT INTO monitor_bots (id, key_id, chain_id, revision, active, created, body)
                     VALUES (${b.id}, ${b.keyId}, ${b.chainId}, ${b.revision}, ${b.active}, ${b.created}, ${encodeBot(b)})`
          return true
        })
      ),
    list: (keyId, chainId) =>
      bots(
        "BotStore.list",
        chainId === undefined
          ? sql<BotRow>`SELECT id, body FROM monitor_bots WHERE key_id = ${keyId} ORDER BY created, seq`
          : sql<BotRow>`SELECT id, body FROM monitor_bots WHERE key_id = ${keyId} AND chain_id = ${chainId}
                        ORDER BY created, seq`
      ),
    active: () =>
      bots(
        "BotStore.active",
        sql<BotRow>`SELECT id, body FROM monitor_bots WHERE active ORDER BY chain_id, created, seq`
      ),
    get: (keyId, id) =>
      Effect.map(
        bots("BotStore.get", sql<BotRow>`SELECT id, body FROM monitor_bots WHERE key_id = ${keyId} AND id = ${id}`),
        (found) => found[0]
      ),
    update: (b) =>
      Effect.map(
        run(
          "BotStore.update",
          sql<{
            readonly id: string
          }>`UPDATE monitor_bots SET revision = ${b.revision}, active = ${b.active}, body = ${encodeBot(b)}
                                       WHERE key_id = ${b.keyId} AND id = ${b.id} AND revision = ${b.revision - 1}
                                       RETURNING id`
        ),
        (rows) => rows.length === 1
      ),
    remove: (keyId, id) =>
      Effect.map(
        run(
          "BotStore.remove",
          sql<{ readonly id: string }>`DELETE FROM monitor_bots WHERE key_id = ${keyId} AND id = ${id} RETURNING id`
        ),
        (rows) => rows.length === 1
      )
  })
})

/** A layer providing BotStore over the PgDatabase in context. */
export const layer: Layer.Layer<BotStore.BotStore, never, PgDatabase> = Layer.effect(BotStore.BotStore)(make)
