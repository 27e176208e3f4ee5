/**
 * A commit on SQLite writes a list's new records a slice at a time (each slice a short transaction) and puts them
 * in force in one short last step: what is written before is never seen, the digest written with the list is the
 * one verification finds at the next open, replaced and abandoned records are swept, and a commit whose list
 * changed meanwhile plans again.
 */
import { assert, describe, it } from "@effect/vitest"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { type Intel, IntelIndex, StorageProbe } from "@vigil/core"
import Database from "better-sqlite3"
import { Context, Effect, Fiber, Layer } from "effect"
import { info } from "@vigil/core-test/contracts/IntelIndexContract.ts"
import { tempPath } from "./TempDatabase.ts"

const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const records = (from: number, count: number, category: Intel.Category = "sanctions"): Array<Intel.ParsedRecord> =>
  Array.from({ length: count }, (_, i) => ({
    address: address(from + i),
    family: "evm",
    category,
    reference: `r${from + i}`
  }))

const open = (filename: string) =>
  Effect.map(Layer.build(SqliteAdapter.layer({ filename })), (built) => ({
    index: IntelIndex.allOf(built),
    probe: Context.get(built, StorageProbe.StorageProbe)
  }))

const ingest = (
  index: IntelIndex.All,
  list: string,
  asOf: string,
  rows: ReadonlyArray<Intel.ParsedRecord>,
  mode: "snapshot" | "history" = "snapshot"
) =>
  Effect.gen(function* () {
    const version = info(list, asOf, { mode })
    const id = yield* index.stage(version)
    for (let i = 0; i < rows.length; i += 2_000) yield* index.append(id, rows.slice(i, i + 2_000))
    return yield* index.commit(id, { asOf, contentHash: `${list}-${asOf}` })
  })

/** Every row of the table (in force or not), by list. */
const rowsOf = (filename: string, list: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    return (db.prepare("SELECT count(*) AS n FROM intel_records WHERE list = ?").get(list) as { n: number }).n
  } finally {
    db.close()
  }
}

describe("a commit a slice at a time", () => {
  it.effect(
    "puts 12,000 records in force, then a refresh de-lists and adds; verification agrees at the next open",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempPath()
        const { index } = yield* open(filename)
        const first = yield* ingest(index, "big", "2026-01-01", records(0, 12_000))
        assert.deepInclude(first, { added: 12_000, delisted: 0 })
        // A tenth de-listed, as many added.
        const second = yield* ingest(index, "big", "2026-02-01", records(1_200, 12_000))
        assert.deepInclude(second, { added: 1_200, delisted: 1_200, unchanged: 10_800 })
        const [list] = yield* index.lists
        assert.deepInclude(list, { list: "big", active: 12_000, delisted: 1_200 })
        assert.deepStrictEqual(
          (yield* index.lookup([address(0), address(13_199)])).map((r) => [r.address, r.delistedAt ?? null]),
          [
            [address(0), "2026-02-01"],
            [address(13_199), null]
          ]
        )
        // Another connection, as the next process: verification finds the digest written with the list.
        const again = yield* open(filename)
        const status = yield* again.probe.check
        assert.deepStrictEqual(status.integrity.problems, [])
        assert.strictEqual(rowsOf(filename, "big"), 13_200)
      }).pipe(Effect.scoped)
  )

  it.effect("a version replacing every record: the earlier ones leave force at once and are swept", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const { index } = yield* open(filename)
      yield* ingest(index, "events", "2026-01-01", records(0, 7_000, "stablecoin_blacklist"), "history")
      yield* ingest(index, "events", "2026-02-01", records(100_000, 6_000, "stablecoin_blacklist"), "history")
      assert.deepStrictEqual(yield* index.lookup([address(0)]), [])
      assert.lengthOf(yield* index.lookup([address(100_000)]), 1)
      assert.strictEqual(rowsOf(filename, "events"), 6_000, "the replaced rows are gone")
      const again = yield* open(filename)
      assert.deepStrictEqual((yield* again.probe.check).integrity.problems, [])
    }).pipe(Effect.scoped)
  )

  it.effect(
    "rows a commit wrote before it was abandoned are never in force, and the next stage of the list sweeps them",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempPath()
        const { index } = yield* open(filename)
        yield* ingest(index, "ours", "2026-01-01", records(0, 10))
        // A commit killed after its first slice: its version staged, its rows written.
        const abandoned = yield* index.stage(info("ours", "2026-02-01"))
        const db = new Database(filename)
        db.prepare(
          `INSERT INTO intel_records (list, source, address, family, category, reference, listed_at, ingested_at, version)
         VALUES ('ours', 'OFAC', ?, 'evm', 'sanctions', 'x', '2026-02-01', '2026-02-01T00:00:00.000Z', ?)`
        ).run(address(500), abandoned)
        db.close()
        assert.deepStrictEqual(yield* index.lookup([address(500)]), [], "not in force")
        assert.deepInclude((yield* index.lists)[0], { active: 10 })
        // The next ingest of the list drops the abandoned version and its rows.
        yield* ingest(index, "ours", "2026-03-01", records(0, 11))
        assert.deepStrictEqual(yield* index.lookup([address(500)]), [])
        assert.strictEqual(rowsOf(filename, "ours"), 11)
      }).pipe(Effect.scoped)
  )

  it.live("a commit whose list another connection changed meanwhile plans again from the list as it is", () =>
    Effect.gen(function* () {
      const filename = yield* tempPath()
      const one = yield* open(filename)
      const other = yield* open(filename)
      yield* ingest(one.index, "ours", "2026-01-01", records(0, 6_000))
      // One commits a refresh; once its first slice is written, the other connection re-dates the list's first
      // version, which rebuilds the list (every row written anew).
      const id = yield* one.index.stage(info("ours", "2026-03-01"))
      yield* one.index.append(id, records(3_000, 6_000))
      const racing = yield* Effect.forkChild(one.index.commit(id, { asOf: "2026-03-01", contentHash: "c" }))
      const watcher = new Database(filename, { readonly: true })
      const written = watcher.prepare("SELECT count(*) AS n FROM intel_records WHERE version = ?").pluck()
      while ((written.get(id) as number) === 0) yield* Effect.promise(() => new Promise((next) => setTimeout(next, 1)))
      watcher.close()
      yield* other.index.redate("ours", 1, "2026-01-02", "2026-03-01T00:00:00.000Z")
      yield* Fiber.join(racing)
      const [ours] = yield* one.index.lists
      assert.deepInclude(ours, { list: "ours", active: 6_000, delisted: 3_000, versions: ["2026-01-02", "2026-03-01"] })
      assert.strictEqual(rowsOf(filename, "ours"), 9_000)
      assert.deepStrictEqual((yield* (yield* open(filename)).probe.check).integrity.problems, [])
    }).pipe(Effect.scoped)
  )
})
