/**
 * BotStore on SQLite: one row per bot, the bot as JSON beside the columns it is found and ordered by; an update
 * names the revision it replaces, so two updates never silently overwrite each other.
 */
import { BotStore, StoredJson, StoreError } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { memory, SqliteDatabase } from "./SqliteDatabase.ts"

interface BotRow {
  readonly id: string
  readonly body: string
}

const BotJson = Schema.fromJsonString(BotStore.Bot)
const encodeBot = Schema.encodeSync(BotJson)
/** Bots are read again at every step of a follower: a row is decoded again only when its text changed. */
const decodeBot = StoredJson.remembered(Schema.decodeUnknownExit(BotJson), 100_000)

/** A row as a bot; a stored bot that no longer decodes is corruption, named by its id. */
const toBot = (r: BotRow): BotStore.Bot => {
  const bot = decodeBot(r.body)
  if (bot._tag === "Failure")
    throw new StoreError.StoreError({
      reason: "Corrupt",
      operation: "BotStore",
      message: `the stored bot ${r.id} does not decode`
    })
  return bot.value
}

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const s = yield* database.use("BotStore.prepare", (db) => ({
    insert: db.prepare<[string, string, number, number, string, string]>(
      "INSERT INTO monitor_bots (id, key_id, chain_id, revision, created, body) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    list: db.prepare<[string], BotRow>("SELECT id, body FROM monitor_bots WHERE key_id = ? ORDER BY created, rowid"),
    count: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM monitor_bots WHERE key_id = ?"),
    listChain: db.prepare<[string, number], BotRow>(
      "SELECT id, body FROM monitor_bots WHERE key_id = ? AND chain_id = ? ORDER BY created, rowid"
    ),
    active: db.prepare<[], BotRow>(
      "SELECT id, body FROM monitor_bots WHERE json_extract(body, '$.active') = 1 ORDER BY chain_id, created, rowid"
    ),
    get: db.prepare<[string, string], BotRow>("SELECT id, body FROM monitor_bots WHERE key_id = ? AND id = ?"),
    update: db.prepare<[number, string, string, string, number]>(
      "UPDATE monitor_bots SET revision = ?, body = ? WHERE key_id = ? AND id = ? AND revision = ?"
    ),
    remove: db.prepare<[string, string]>("DELETE FROM monitor_bots WHERE key_id = ? AND id = ?")
  }))
  /**
   * The active bots, read at every step of every follower: kept until a bot is written here or another connection
   * commits (bots are written only through this store).
   */
  const active = memory<"active", ReadonlyArray<BotStore.Bot>>(database, 1)
  const forget = Effect.sync(() => active.forget())
  return BotStore.BotStore.of({
    add: (b, max = Infinity) =>
      database
        .transaction("BotStore.add", () => {
          if ((s.count.get(b.keyId)?.n ?? 0) >= max) return false
          s.insert.run(b.id, b.keyId, b.chainId, b.revision, b.created, encodeBot(b))
          return true
        })
        .pipe(Effect.ensuring(forget)),
    list: (keyId, chainId) =>
      database.use("BotStore.list", () =>
        (chainId === undefined ? s.list.all(keyId) : s.listChain.all(keyId, chainId)).map(toBot)
      ),
    active: () => database.use("BotStore.active", () => active.through("active", () => s.active.all().map(toBot))),
    get: (keyId, id) =>
      database.use("BotStore.get", () => {
        const row = s.get.get(keyId, id)
        return row === undefined ? undefined : toBot(row)
      }),
    update: (b) =>
      database
        .transaction(
          "BotStore.update",
          () => s.update.run(b.revision, encodeBot(b), b.keyId, b.id, b.revision - 1).changes === 1
        )
        .pipe(Effect.ensuring(forget)),
    remove: (keyId, id) =>
      database.transaction("BotStore.remove", () => s.remove.run(keyId, id).changes === 1).pipe(Effect.ensuring(forget))
  })
})

/** The SQLite BotStore (needs the SqliteDatabase). */
export const layer: Layer.Layer<BotStore.BotStore, StoreError.StoreError, SqliteDatabase> = Layer.effect(
  BotStore.BotStore
)(make)
