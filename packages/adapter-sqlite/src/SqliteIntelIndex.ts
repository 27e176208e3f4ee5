/** IntelIndex on SQLite: staged rows in their own table, each commit applied in one immediate transaction. */
import { type Intel, IntelIndex, StoreError } from "@vigil/core"
import { Effect, Layer } from "effect"
import * as SqliteDatabase from "./SqliteDatabase.ts"

interface RecordRow {
  readonly id: number
  readonly list: string
  readonly source: string
  readonly address: string
  readonly family: Intel.IntelRecord["family"]
  readonly category: Intel.IntelRecord["category"]
  readonly reference: string
  readonly jurisdiction: string | null
  readonly entity_name: string | null
  readonly entity_type: string | null
  readonly label: string | null
  readonly listed_at: string
  readonly delisted_at: string | null
  readonly ingested_at: string
}

interface VersionRow {
  readonly id: number
  readonly list: string
  readonly source: string
  readonly kind: string
  readonly mode: IntelIndex.VersionMode
  readonly as_of: string
  readonly content_hash: string
  readonly origin: string
  readonly ingested_at: string
  readonly state: "staged" | "committed"
}

const fromRow = (row: RecordRow): Intel.IntelRecord => ({
  list: row.list,
  source: row.source,
  address: row.address,
  family: row.family,
  category: row.category,
  reference: row.reference,
  ...(row.jurisdiction === null ? {} : { jurisdiction: row.jurisdiction }),
  ...(row.entity_name === null ? {} : { entityName: row.entity_name }),
  ...(row.entity_type === null ? {} : { entityType: row.entity_type }),
  ...(row.label === null ? {} : { label: row.label }),
  listedAt: row.listed_at,
  ...(row.delisted_at === null ? {} : { delistedAt: row.delisted_at }),
  ingestedAt: row.ingested_at
})

const infoOf = (row: VersionRow): IntelIndex.VersionInfo => ({
  list: row.list,
  source: row.source,
  kind: row.kind,
  mode: row.mode,
  asOf: row.as_of,
  contentHash: row.content_hash,
  origin: row.origin,
  ingestedAt: row.ingested_at
})

const notStaged = (operation: string, version: number) =>
  new StoreError.StoreError({ reason: "Conflict", operation, message: `version ${version} is not staged` })

/** How many addresses' records are remembered before the memory starts over. */
const maxRemembered = 20_000

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase.SqliteDatabase
  const s = yield* database.use("IntelIndex.prepare", (db) => ({
    dropStaged: db.prepare<[string]>("DELETE FROM intel_versions WHERE list = ? AND state = 'staged'"),
    insertVersion: db.prepare<[string, string, string, string, string, string]>(
      `INSERT INTO intel_versions (list, source, kind, mode, as_of, content_hash, origin, ingested_at, state)
       VALUES (?, ?, ?, ?, '', '', ?, ?, 'staged')`
    ),
    complete: db.prepare<[string, string, number]>(
      "UPDATE intel_versions SET as_of = ?, content_hash = ? WHERE id = ?"
    ),
    version: db.prepare<[number], VersionRow>("SELECT * FROM intel_versions WHERE id = ?"),
    stageRecord: db.prepare<[number, string]>("INSERT INTO intel_staged (version, record) VALUES (?, ?)"),
    stagedRecords: db.prepare<[number], { record: string }>("SELECT record FROM intel_staged WHERE version = ?"),
    activeRecords: db.prepare<[string], { id: number; address: string; category: Intel.Category; reference: string }>(
      "SELECT id, address, category, reference FROM intel_records WHERE list = ? AND delisted_at IS NULL"
    ),
    deleteList: db.prepare<[string]>("DELETE FROM intel_records WHERE list = ?"),
    close: db.prepare<[string, number]>("UPDATE intel_records SET delisted_at = ? WHERE id = ?"),
    insertRecord: db.prepare(
      `INSERT INTO intel_records (list, source, address, family, category, reference, jurisdiction, entity_name,
         entity_type, label, listed_at, delisted_at, ingested_at)
       VALUES (@list, @source, @address, @family, @category, @reference, @jurisdiction, @entityName,
         @entityType, @label, @listedAt, @delistedAt, @ingestedAt)`
    ),
    markCommitted: db.prepare<[number]>("UPDATE intel_versions SET state = 'committed' WHERE id = ?"),
    setCurrent: db.prepare<[string, number]>(
      "INSERT INTO intel_lists (list, version) VALUES (?, ?) ON CONFLICT (list) DO UPDATE SET version = excluded.version"
    ),
    clearStaged: db.prepare<[number]>("DELETE FROM intel_staged WHERE version = ?"),
    discard: db.prepare<[number]>("DELETE FROM intel_versions WHERE id = ? AND state = 'staged'"),
    byAddress: db.prepare<[string], RecordRow>("SELECT * FROM intel_records WHERE address = ?"),
    // Commits raise the newest committed version id; deletions add to the count of deletions: either moves it.
    generation: db.prepare<[], { g: number }>(
      `SELECT (SELECT coalesce(max(id), 0) FROM intel_versions WHERE state = 'committed')
         + (SELECT count(*) FROM intel_deletions) AS g`
    ),
    currentOf: db.prepare<[string], { version: number }>("SELECT version FROM intel_lists WHERE list = ?"),
    countRecords: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM intel_records WHERE list = ?"),
    dropCurrent: db.prepare<[string]>("DELETE FROM intel_lists WHERE list = ?"),
    recordDeletion: db.prepare<[string, number, number, string]>(
      "INSERT INTO intel_deletions (list, version, records, deleted_at) VALUES (?, ?, ?, ?)"
    ),
    versionNumber: db.prepare<[string, number], { n: number }>(
      "SELECT count(*) AS n FROM intel_versions WHERE list = ? AND state = 'committed' AND id <= ?"
    ),
    lists: db.prepare<[], VersionRow & { active: number; delisted: number; number: number }>(
      `SELECT v.*, 
         (SELECT count(*) FROM intel_versions c WHERE c.list = l.list AND c.state = 'committed' AND c.id <= v.id) AS number,
         (SELECT count(*) FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NULL) AS active,
         (SELECT count(*) FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NOT NULL) AS delisted
       FROM intel_lists l JOIN intel_versions v ON v.id = l.version ORDER BY l.list`
    )
  }))

  /**
   * The generation and the records of recently looked-up addresses (most have none): committed records change
   * only when a version is committed, here (then both are forgotten) or by another connection.
   */
  const generation = SqliteDatabase.memory<"generation", number>(database, 1)
  const found = SqliteDatabase.memory<string, ReadonlyArray<Intel.IntelRecord>>(database, maxRemembered)
  const forget = Effect.sync(() => {
    generation.forget()
    found.forget()
  })

  const stagedVersion = (version: number) => {
    const row = s.version.get(version)
    return row?.state === "staged" ? row : undefined
  }

  return IntelIndex.IntelIndex.of({
    stage: (info) =>
      database.transaction("IntelIndex.stage", () => {
        s.dropStaged.run(info.list)
        const result = s.insertVersion.run(info.list, info.source, info.kind, info.mode, info.origin, info.ingestedAt)
        return Number(result.lastInsertRowid)
      }),
    append: (version, records) =>
      database
        .transaction("IntelIndex.append", () => {
          if (stagedVersion(version) === undefined) return false
          for (const r of records) s.stageRecord.run(version, JSON.stringify(r))
          return true
        })
        .pipe(Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail(notStaged("IntelIndex.append", version))))),
    commit: (version, completion) =>
      database
        .transaction("IntelIndex.commit", () => {
          const row = stagedVersion(version)
          if (row === undefined) return undefined
          const info: IntelIndex.VersionInfo = { ...infoOf(row), ...completion }
          const active = new Map(s.activeRecords.all(info.list).map((r) => [IntelIndex.recordKey(r), r.id]))
          const staged = s.stagedRecords.all(version).map((r) => JSON.parse(r.record) as Intel.ParsedRecord)
          const plan = IntelIndex.planCommit(info, new Set(active.keys()), staged)
          const refused = IntelIndex.shrinkRefusal(info.list, plan, new Set(active.keys()), completion)
          if (refused !== undefined) return refused
          s.complete.run(completion.asOf, completion.contentHash, version)
          if (plan.replaceAll) s.deleteList.run(info.list)
          for (const key of plan.close) s.close.run(info.asOf, active.get(key)!)
          for (const r of plan.insert) {
            s.insertRecord.run({
              jurisdiction: null,
              entityName: null,
              entityType: null,
              label: null,
              delistedAt: null,
              ...r
            })
          }
          s.markCommitted.run(version)
          s.setCurrent.run(info.list, version)
          s.clearStaged.run(version)
          const number = s.versionNumber.get(info.list, version)!.n
          return {
            list: info.list,
            version: number,
            added: plan.added,
            delisted: plan.delisted,
            unchanged: plan.unchanged
          }
        })
        .pipe(
          Effect.ensuring(forget),
          Effect.flatMap(
            (outcome): Effect.Effect<IntelIndex.CommitOutcome, StoreError.StoreError | IntelIndex.ShrinkRefused> =>
              outcome === undefined
                ? Effect.fail(notStaged("IntelIndex.commit", version))
                : outcome instanceof IntelIndex.ShrinkRefused
                  ? Effect.fail(outcome)
                  : Effect.succeed(outcome)
          )
        ),
    remove: (list, at) =>
      database
        .transaction("IntelIndex.remove", () => {
          const current = s.currentOf.get(list)
          if (current === undefined) return undefined
          const version = s.versionNumber.get(list, current.version)!.n
          const records = s.countRecords.get(list)!.n
          s.deleteList.run(list)
          s.dropStaged.run(list)
          s.dropCurrent.run(list)
          s.recordDeletion.run(list, version, records, at)
          return { list, version, records }
        })
        .pipe(Effect.ensuring(forget)),
    discard: (version) =>
      database.transaction("IntelIndex.discard", () => {
        s.discard.run(version)
      }),
    lookup: (addresses) =>
      database.use("IntelIndex.lookup", () =>
        addresses.flatMap((a) => found.through(a, () => s.byAddress.all(a).map(fromRow)))
      ),
    generation: database.use("IntelIndex.generation", () =>
      generation.through("generation", () => s.generation.get()?.g ?? 0)
    ),
    lists: database.use("IntelIndex.lists", () =>
      s.lists.all().map((row) => ({
        list: row.list,
        source: row.source,
        kind: row.kind,
        version: row.number,
        asOf: row.as_of,
        contentHash: row.content_hash,
        origin: row.origin,
        ingestedAt: row.ingested_at,
        active: row.active,
        delisted: row.delisted
      }))
    )
  })
})

/** A layer providing IntelIndex over the SqliteDatabase in context. */
export const layer: Layer.Layer<IntelIndex.IntelIndex, never, SqliteDatabase.SqliteDatabase> = Layer.effect(
  IntelIndex.IntelIndex
)(make.pipe(Effect.orDie))
