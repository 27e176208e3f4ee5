/**
 * The SQLite stores keep some reads in memory (key lookups, the index generation, the lists, the active bots). Another
 * connection's commit must be seen by the very next read, and so must this connection's own writes.
 */
import { assert, describe, it } from "@effect/vitest"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { ApiKeyStore, BotStore, IntelIndex } from "@vigil/core"
import Database from "better-sqlite3"
import { Context, Effect, Layer } from "effect"
import { info } from "@vigil/core-test/contracts/IntelIndexContract.ts"
import { tempPath } from "./TempDatabase.ts"

const record: ApiKeyStore.ApiKeyRecord = {
  id: "00112233445566aa",
  name: "Acme",
  hash: "ab".repeat(32),
  qps: 10,
  daily: 100,
  monthly: 1000,
  createdAt: "2026-01-01T00:00:00.000Z"
}

/** Two connections on one database file, as two processes would have. */
const twoConnections = Effect.gen(function* () {
  const filename = yield* tempPath()
  const one = yield* Layer.build(SqliteAdapter.layer({ filename }))
  const other = yield* Layer.build(SqliteAdapter.layer({ filename }))
  return { one, other, filename }
})

const listed = "0x" + "aa".repeat(20)

const bot = (id: string, active: boolean): BotStore.Bot => ({
  id,
  keyId: record.id,
  chainId: 1,
  botName: `bot ${id}`,
  active,
  severity: "High",
  watchRule: { watchRuleType: "advanced", expressions: ["system.emitted(tx1.USDC.E.Transfer)"] },
  notifications: [],
  options: { topLevelTxBlockRange: 0 },
  revision: 1,
  created: `2026-01-01T00:00:0${id}.000Z`,
  updated: `2026-01-01T00:00:0${id}.000Z`
})

/** The ids of the active bots. */
const activeIds = (store: BotStore.BotStore["Service"]) => Effect.map(store.active(), (bots) => bots.map((b) => b.id))

const publish = (index: IntelIndex.All, asOf: string) =>
  Effect.gen(function* () {
    const id = yield* index.stage(info("ofac", asOf))
    yield* index.append(id, [
      { address: "0x" + "aa".repeat(20), family: "evm", category: "sanctions", reference: asOf }
    ])
    yield* index.commit(id, info("ofac", asOf))
  })

describe("reads kept in memory", () => {
  it.effect("a key created or revoked through another connection is seen by the next lookup", () =>
    Effect.gen(function* () {
      const { one, other } = yield* twoConnections
      const reader = Context.get(one, ApiKeyStore.ApiKeyStore)
      const writer = Context.get(other, ApiKeyStore.ApiKeyStore)
      assert.isUndefined(yield* reader.find(record.id))
      assert.isUndefined(yield* reader.find(record.id), "asked twice while nothing changed")
      yield* writer.insert(record)
      assert.deepStrictEqual(yield* reader.find(record.id), record)
      yield* writer.revoke(record.id, "2026-02-01T00:00:00.000Z")
      assert.strictEqual((yield* reader.find(record.id))?.revokedAt, "2026-02-01T00:00:00.000Z")
    }).pipe(Effect.scoped)
  )

  it.effect("a commit by another process is seen from the next turn of the event loop", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const reader = Context.get(yield* Layer.build(SqliteAdapter.layer({ filename })), ApiKeyStore.ApiKeyStore)
      yield* reader.insert(record)
      assert.isUndefined((yield* reader.find(record.id))?.revokedAt)
      // A plain driver connection stands for another process: this process does not count its commits.
      const outside = new Database(filename)
      outside.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run("2026-03-01T00:00:00.000Z", record.id)
      outside.close()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.strictEqual((yield* reader.find(record.id))?.revokedAt, "2026-03-01T00:00:00.000Z")
    }).pipe(Effect.scoped)
  )

  it.effect("a store's own writes are seen by its next lookup", () =>
    Effect.gen(function* () {
      const { one } = yield* twoConnections
      const store = Context.get(one, ApiKeyStore.ApiKeyStore)
      assert.isUndefined(yield* store.find(record.id))
      yield* store.insert(record)
      assert.deepStrictEqual(yield* store.find(record.id), record)
      yield* store.revoke(record.id, "2026-02-01T00:00:00.000Z")
      assert.strictEqual((yield* store.find(record.id))?.revokedAt, "2026-02-01T00:00:00.000Z")
    }).pipe(Effect.scoped)
  )

  it.effect("the index generation and its lookups move with commits of either connection", () =>
    Effect.gen(function* () {
      const { one, other } = yield* twoConnections
      const reader = IntelIndex.allOf(one)
      const writer = IntelIndex.allOf(other)
      const start = yield* reader.generation
      assert.deepStrictEqual(yield* reader.lookup([listed]), [], "nothing listed yet (and remembered so)")
      yield* publish(writer, "2026-01-01")
      const afterOther = yield* reader.generation
      assert.isAbove(afterOther, start)
      assert.strictEqual(yield* reader.generation, afterOther, "unchanged while nothing is committed")
      assert.deepStrictEqual(
        (yield* reader.lookup([listed])).map((r) => r.reference),
        ["2026-01-01"],
        "the other connection's listing is seen"
      )
      yield* publish(reader, "2026-01-02")
      assert.isAbove(yield* reader.generation, afterOther)
      assert.deepStrictEqual(
        (yield* reader.lookup([listed])).filter((r) => r.delistedAt === undefined).map((r) => r.reference),
        ["2026-01-02"],
        "this connection's own commit is seen: the newer snapshot's record is the one in force"
      )
    }).pipe(Effect.scoped)
  )

  it.effect("the active bots move with bots written through either connection, and by another process", () =>
    Effect.gen(function* () {
      const { one, other } = yield* twoConnections
      const reader = Context.get(one, BotStore.BotStore)
      const writer = Context.get(other, BotStore.BotStore)
      yield* reader.add(bot("1", true))
      assert.deepStrictEqual(yield* activeIds(reader), ["1"], "its own add")
      assert.deepStrictEqual(yield* activeIds(reader), ["1"], "asked twice while nothing changed")
      yield* writer.add(bot("2", true))
      assert.deepStrictEqual(yield* activeIds(reader), ["1", "2"], "the other connection's add")
      yield* reader.update({ ...bot("1", false), revision: 2 })
      assert.deepStrictEqual(yield* activeIds(reader), ["2"], "its own pause")
      yield* writer.update({ ...bot("1", true), revision: 3 })
      assert.deepStrictEqual(yield* activeIds(reader), ["1", "2"], "the other connection's resume")
      yield* reader.remove(record.id, "2")
      assert.deepStrictEqual(yield* activeIds(reader), ["1"], "its own removal")
      yield* writer.remove(record.id, "1")
      assert.deepStrictEqual(yield* activeIds(reader), [], "the other connection's removal")
    }).pipe(Effect.scoped)
  )

  it.effect("a bot paused by another process is left out from the next turn of the event loop", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const store = Context.get(yield* Layer.build(SqliteAdapter.layer({ filename })), BotStore.BotStore)
      yield* store.add(bot("1", true))
      assert.deepStrictEqual(yield* activeIds(store), ["1"])
      // A plain driver connection stands for another process: this process does not count its commits.
      const outside = new Database(filename)
      outside.prepare("UPDATE monitor_bots SET body = json_set(body, '$.active', json('false')) WHERE id = ?").run("1")
      outside.close()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(yield* activeIds(store), [])
    }).pipe(Effect.scoped)
  )

  it.effect("the lists move with every write of either connection, and with another process's commit", () =>
    Effect.gen(function* () {
      const { one, other, filename } = yield* twoConnections
      const reader = IntelIndex.allOf(one)
      const writer = IntelIndex.allOf(other)
      const shown = Effect.map(reader.lists, (lists) =>
        lists.map((l) => `${l.list} ${l.asOf} ${l.active} ${l.refused?.message ?? "-"}`)
      )
      assert.deepStrictEqual(yield* shown, [])
      yield* publish(writer, "2026-01-01")
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-01 1 -"], "the other connection's commit")
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-01 1 -"], "asked twice while nothing changed")
      yield* reader.recordRefusal("ofac", { at: "2026-01-05T00:00:00.000Z", origin: "sdn.xml", message: "too small" })
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-01 1 too small"], "its own refusal")
      yield* writer.recordRefusal("ofac", { at: "2026-01-06T00:00:00.000Z", origin: "sdn.xml", message: "no date" })
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-01 1 no date"], "the other connection's refusal")
      const id = yield* reader.stage(info("ofac", "2026-01-07"))
      yield* reader.append(id, [{ address: listed, family: "evm", category: "sanctions", reference: "2026-01-07" }])
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-01 1 no date"], "staged, not yet in force")
      yield* reader.commit(id, info("ofac", "2026-01-07"))
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-07 1 -"], "its own commit")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      // A plain driver connection stands for another process: this process does not count its commits.
      const outside = new Database(filename)
      outside.prepare("UPDATE intel_versions SET as_of = '2026-01-08' WHERE as_of = '2026-01-07'").run()
      outside.close()
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(yield* shown, ["ofac 2026-01-08 1 -"], "another process's commit")
    }).pipe(Effect.scoped)
  )
})
