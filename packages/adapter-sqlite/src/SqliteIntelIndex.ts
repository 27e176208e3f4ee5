/**
 * IntelIndex on SQLite: staged rows in their own table; a commit planned from a read, its new records written a
 * slice at a time (invisible, each slice a short transaction) and put in force by one short last transaction, so a
 * large list never holds the write lock for long.
 */
import { createHash } from "node:crypto"
import { Calibration, Intel, IntelIndex, StoredJson, StoreError } from "@vigil/core"
import { Effect, type Layer, Schema } from "effect"
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
  readonly cites: string | null
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
  readonly authority: Intel.Authority
  readonly contents_kept: 0 | 1
  readonly withdrawn_at: string | null
}

/** A calibration model as stored: its JSON. */
const encodeModel = Schema.encodeSync(Schema.fromJsonString(Calibration.Model))
const readModel = StoredJson.reader(Schema.fromJsonString(Calibration.Model), "IntelIndex", "calibration model")

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
  ...(row.cites === null ? {} : { cites: row.cites }),
  ingestedAt: row.ingested_at
})

/** A record as its row holds it (the row's own id and version aside). */
const rowOf = (r: Intel.IntelRecord): RecordRow => ({
  id: 0,
  list: r.list,
  source: r.source,
  address: r.address,
  family: r.family,
  category: r.category,
  reference: r.reference,
  jurisdiction: r.jurisdiction ?? null,
  entity_name: r.entityName ?? null,
  entity_type: r.entityType ?? null,
  label: r.label ?? null,
  listed_at: r.listedAt,
  delisted_at: r.delistedAt ?? null,
  ingested_at: r.ingestedAt,
  cites: r.cites ?? null
})

const infoOf = (row: VersionRow): IntelIndex.VersionInfo => ({
  list: row.list,
  source: row.source,
  kind: row.kind,
  mode: row.mode,
  asOf: row.as_of,
  contentHash: row.content_hash,
  origin: row.origin,
  ingestedAt: row.ingested_at,
  authority: row.authority
})

const notStaged = (operation: string, version: number) =>
  new StoreError.StoreError({ reason: "Conflict", operation, message: `version ${version} is not staged` })

const readStaged = StoredJson.reader(Intel.ParsedRecordJson, "IntelIndex", "staged record")
const encodeStaged = Schema.encodeSync(Intel.ParsedRecordJson)
const parseStaged = (row: { record: string }) => StoredJson.orThrow(readStaged(row.record))

/** A refusal raised inside a transaction, so that everything the transaction did is rolled back. */
class Refusal {
  constructor(readonly refused: IntelIndex.AmendRefused | IntelIndex.ShrinkRefused) {}
}

/** How many addresses' records are remembered before the memory starts over. */
const maxRemembered = 20_000

/**
 * Rows a commit writes (or a sweep removes) per transaction: about 20 to 40 ms of holding the write lock here, so a
 * request that needs it waits that long at most, not for the whole list.
 */
const rowsPerSlice = 5_000

/** Times a commit plans again when the list changed while its records were being written. */
const replans = 3

/** The statements of the index, prepared once. */
const prepare = (db: SqliteDatabase.SqliteHandle) => ({
  dropStaged: db.prepare<[string]>("DELETE FROM intel_versions WHERE list = ? AND state = 'staged'"),
  insertVersion: db.prepare<[string, string, string, string, string, string, string]>(
    `INSERT INTO intel_versions (list, source, kind, mode, as_of, content_hash, origin, ingested_at, state,
         authority, contents_kept)
       VALUES (?, ?, ?, ?, '', '', ?, ?, 'staged', ?, 1)`
  ),
  complete: db.prepare<[string, string, number]>("UPDATE intel_versions SET as_of = ?, content_hash = ? WHERE id = ?"),
  version: db.prepare<[number], VersionRow>("SELECT * FROM intel_versions WHERE id = ?"),
  stageRecord: db.prepare<[number, string]>("INSERT INTO intel_staged (version, record) VALUES (?, ?)"),
  stagedRecords: db.prepare<[number], { record: string }>(
    "SELECT record FROM intel_staged WHERE version = ? ORDER BY rowid"
  ),
  // The versions in effect, in the order they were ingested (a rebuild orders them by date).
  inEffect: db.prepare<[string], VersionRow>(
    "SELECT * FROM intel_versions WHERE list = ? AND state = 'committed' AND withdrawn_at IS NULL ORDER BY id"
  ),
  newest: db.prepare<[string], { id: number }>(
    `SELECT id FROM intel_versions WHERE list = ? AND state = 'committed' AND withdrawn_at IS NULL
       ORDER BY as_of DESC, id DESC LIMIT 1`
  ),
  byNumber: db.prepare<[string, number], VersionRow>(
    "SELECT * FROM intel_versions WHERE list = ? AND state = 'committed' ORDER BY id LIMIT 1 OFFSET ?"
  ),
  withdraw: db.prepare<[string, number]>("UPDATE intel_versions SET withdrawn_at = ? WHERE id = ?"),
  withdrawAll: db.prepare<[string, string]>(
    "UPDATE intel_versions SET withdrawn_at = ? WHERE list = ? AND state = 'committed' AND withdrawn_at IS NULL"
  ),
  setDate: db.prepare<[string, number]>("UPDATE intel_versions SET as_of = ? WHERE id = ?"),
  recordAmendment: db.prepare<[string, string, number, string, string]>(
    "INSERT INTO intel_amendments (list, action, version, detail, at) VALUES (?, ?, ?, ?, ?)"
  ),
  // A list's records in force: written by a version between its floor and its current version.
  listRecords: db.prepare<[string], RecordRow>(
    `SELECT r.* FROM intel_records r JOIN intel_lists l ON l.list = r.list
       WHERE r.list = ? AND r.version BETWEEN l.floor AND l.version`
  ),
  setDigest: db.prepare<[string, string]>("UPDATE intel_lists SET records_digest = ? WHERE list = ?"),
  digests: db.prepare<[], { list: string; version: number; records_digest: string | null }>(
    "SELECT list, version, records_digest FROM intel_lists"
  ),
  activeRecords: db.prepare<[string], { id: number; address: string; category: Intel.Category; reference: string }>(
    `SELECT r.id, r.address, r.category, r.reference FROM intel_records r JOIN intel_lists l ON l.list = r.list
       WHERE r.list = ? AND r.delisted_at IS NULL AND r.version BETWEEN l.floor AND l.version`
  ),
  deleteList: db.prepare<[string]>("DELETE FROM intel_records WHERE list = ?"),
  close: db.prepare<[string, number]>("UPDATE intel_records SET delisted_at = ? WHERE id = ?"),
  insertRecord: db.prepare(
    `INSERT INTO intel_records (list, source, address, family, category, reference, jurisdiction, entity_name,
         entity_type, label, listed_at, delisted_at, ingested_at, cites, version)
       VALUES (@list, @source, @address, @family, @category, @reference, @jurisdiction, @entityName,
         @entityType, @label, @listedAt, @delistedAt, @ingestedAt, @cites, @version)`
  ),
  markCommitted: db.prepare<[number]>("UPDATE intel_versions SET state = 'committed' WHERE id = ?"),
  // Every change of a list's records moves its revision (a commit under way checks it before its last step).
  setCurrent: db.prepare<[string, number, number]>(
    `INSERT INTO intel_lists (list, version, floor) VALUES (?, ?, ?)
       ON CONFLICT (list) DO UPDATE SET version = excluded.version, floor = excluded.floor, revision = revision + 1`
  ),
  listState: db.prepare<[string], { version: number; floor: number; revision: number }>(
    "SELECT version, floor, revision FROM intel_lists WHERE list = ?"
  ),
  // Rows no longer in force or never put in force, a slice at a time: below the list's floor, or written by a
  // version above its current one that is not staged any more (a commit that failed or was abandoned).
  sweep: db.prepare<[string, string, number]>(
    `DELETE FROM intel_records WHERE rowid IN (
         SELECT r.rowid FROM intel_records r LEFT JOIN intel_lists l ON l.list = r.list
         WHERE r.list = ?
           AND (l.list IS NULL OR r.version < l.floor OR r.version > l.version)
           AND r.version NOT IN (SELECT id FROM intel_versions WHERE list = ? AND state = 'staged')
         LIMIT ?)`
  ),
  dropStagedSlice: db.prepare<[number, number]>(
    "DELETE FROM intel_staged WHERE rowid IN (SELECT rowid FROM intel_staged WHERE version = ? LIMIT ?)"
  ),
  sweepVersion: db.prepare<[string, number, number]>(
    "DELETE FROM intel_records WHERE rowid IN (SELECT rowid FROM intel_records WHERE list = ? AND version = ? LIMIT ?)"
  ),
  // Rows of the list written by versions between its current one and `version`: none, unless swept yet.
  strays: db.prepare<[string, number, number], { n: number }>(
    "SELECT count(*) AS n FROM intel_records WHERE list = ? AND version > ? AND version < ?"
  ),
  discard: db.prepare<[number]>("DELETE FROM intel_versions WHERE id = ? AND state = 'staged'"),
  byAddress: db.prepare<[string], RecordRow>(
    `SELECT r.* FROM intel_records r JOIN intel_lists l ON l.list = r.list
       WHERE r.address = ? AND r.version BETWEEN l.floor AND l.version`
  ),
  scan: db.prepare<[string, number], RecordRow>(
    `SELECT r.* FROM intel_records r JOIN intel_lists l ON l.list = r.list
       WHERE r.version BETWEEN l.floor AND l.version AND r.address IN
         (SELECT DISTINCT i.address FROM intel_records i JOIN intel_lists k ON k.list = i.list
          WHERE i.address > ? AND i.version BETWEEN k.floor AND k.version ORDER BY i.address LIMIT ?)
       ORDER BY r.address, r.id`
  ),
  storeModel: db.prepare<[string, string, string], { version: number }>(
    "INSERT INTO intel_models (as_of, fitted_at, model) VALUES (?, ?, ?) RETURNING version"
  ),
  recordRefusal: db.prepare<[string, string, string, string]>(
    `INSERT INTO intel_refusals (list, at, origin, message) VALUES (?, ?, ?, ?)
       ON CONFLICT (list) DO UPDATE SET at = excluded.at, origin = excluded.origin, message = excluded.message`
  ),
  refusals: db.prepare<[], IntelIndex.ListRefusal & { list: string }>(
    "SELECT list, at, origin, message FROM intel_refusals"
  ),
  models: db.prepare<[], { version: number; model: string }>(
    "SELECT version, model FROM intel_models ORDER BY version"
  ),
  // Commits raise the newest committed version id; deletions and amendments add to their counts: each moves it.
  generation: db.prepare<[], { g: number }>(
    `SELECT (SELECT coalesce(max(id), 0) FROM intel_versions WHERE state = 'committed')
         + (SELECT count(*) FROM intel_deletions) + (SELECT count(*) FROM intel_amendments)
         + (SELECT count(*) FROM intel_models) AS g`
  ),
  currentOf: db.prepare<[string], { version: number }>("SELECT version FROM intel_lists WHERE list = ?"),
  countRecords: db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM intel_records r JOIN intel_lists l ON l.list = r.list
       WHERE r.list = ? AND r.version BETWEEN l.floor AND l.version`
  ),
  dropCurrent: db.prepare<[string]>("DELETE FROM intel_lists WHERE list = ?"),
  recordDeletion: db.prepare<[string, number, number, string]>(
    "INSERT INTO intel_deletions (list, version, records, deleted_at) VALUES (?, ?, ?, ?)"
  ),
  versionNumber: db.prepare<[string, number], { n: number }>(
    "SELECT count(*) AS n FROM intel_versions WHERE list = ? AND state = 'committed' AND id <= ?"
  ),
  lists: db.prepare<
    [],
    VersionRow & {
      active: number
      delisted: number
      number: number
      since: string
      dates: string
      declared: Intel.Authority
    }
  >(
    `SELECT v.*,
         (SELECT count(*) FROM intel_versions c WHERE c.list = l.list AND c.state = 'committed' AND c.id <= v.id) AS number,
         (SELECT min(e.as_of) FROM intel_versions e
            WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL) AS since,
         (SELECT group_concat(e.as_of) FROM intel_versions e
            WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL) AS dates,
         (SELECT e.authority FROM intel_versions e
            WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL
            ORDER BY e.id DESC LIMIT 1) AS declared,
         (SELECT count(*) FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NULL
            AND r.version BETWEEN l.floor AND l.version) AS active,
         (SELECT count(*) FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NOT NULL
            AND r.version BETWEEN l.floor AND l.version) AS delisted
       FROM intel_lists l JOIN intel_versions v ON v.id = l.version ORDER BY l.list`
  )
})
type Statements = ReturnType<typeof prepare>

/** What the operations of the index share: the database, its statements, what is remembered, what was found. */
interface Store {
  readonly database: SqliteDatabase.SqliteDatabase["Service"]
  readonly s: Statements
  /** The generation, remembered until a commit here or another connection changes the records. */
  readonly generation: SqliteDatabase.Memory<"generation", number>
  /** The records of recently looked-up addresses (most have none). */
  readonly found: SqliteDatabase.Memory<string, ReadonlyArray<Intel.IntelRecord>>
  /**
   * The lists with their counts (every `/health` and lists answer reads them): remembered until any write here
   * (each forgets them) or a commit by another connection.
   */
  readonly lists: SqliteDatabase.Memory<"lists", ReadonlyArray<IntelIndex.ListStatus>>
  /** Forgets all three. */
  readonly forget: Effect.Effect<void>
  /** Forgets the lists only (the writes of an ingest under way, which change no lookup). */
  readonly forgetLists: Effect.Effect<void>
  /** Lists whose records no longer match their digest, and what to say of them. */
  readonly damaged: ReadonlyMap<string, string>
}

const stagedVersion = (st: Store, version: number) => {
  const row = st.s.version.get(version)
  return row?.state === "staged" ? row : undefined
}

/** Writes `records`, as written by version `version`. */
const insertAll = (st: Store, records: ReadonlyArray<Intel.IntelRecord>, version: number) => {
  for (const r of records) {
    st.s.insertRecord.run({
      jurisdiction: null,
      entityName: null,
      entityType: null,
      label: null,
      delistedAt: null,
      cites: null,
      ...r,
      version
    })
  }
}

/** A digest of records: what verification compares a list's stored records against later. */
const digest = (records: ReadonlyArray<Intel.IntelRecord>) => {
  const hash = createHash("sha256")
  // Each as a stored row reads back, whatever the order of its fields in memory.
  const lines = records.map((r) => JSON.stringify(fromRow(rowOf(r))))
  lines.sort()
  for (const line of lines) hash.update(`${line}\n`)
  return hash.digest("hex")
}
/** A digest of a list's records as stored. */
const digestOf = (st: Store, list: string) => digest(st.s.listRecords.all(list).map(fromRow))
/** Records the digest of `list`'s records, inside the transaction that changed them. */
const sealList = (st: Store, list: string) => st.s.setDigest.run(digestOf(st, list), list)

/** Runs a deleting statement a slice at a time, each its own transaction, until it deletes less than a slice. */
const sliced = (st: Store, f: () => number) =>
  Effect.gen(function* () {
    while ((yield* st.database.slice("IntelIndex.sweep", f)) >= rowsPerSlice);
  })
/** Removes, a slice at a time, the rows of `list` not in force and not of a commit under way. */
const sweep = (st: Store, list: string) => sliced(st, () => st.s.sweep.run(list, list, rowsPerSlice).changes)

/** The number the list gives the version with id `id`. */
const numberOf = (st: Store, list: string, id: number) => st.s.versionNumber.get(list, id)!.n

/**
 * Rebuilds a list's records from its versions in effect, in date order, and points the list at its newest;
 * a refusal when a version in effect was committed before versions kept their contents.
 */
const rebuildList = (st: Store, list: string): ReadonlyArray<Intel.IntelRecord> | IntelIndex.AmendRefused => {
  const versions = st.s.inEffect.all(list)
  const missing = versions.find((v) => v.contents_kept === 0)
  if (missing !== undefined) {
    return new IntelIndex.AmendRefused({
      list,
      message: `version ${numberOf(st, list, missing.id)} of ${list} (${missing.as_of}) was stored before versions kept their contents, so the list's history cannot be rebuilt; ingest its sources again in date order into a new list`
    })
  }
  const records = IntelIndex.rebuild(
    versions.map((v) => ({ info: infoOf(v), records: st.s.stagedRecords.all(v.id).map(parseStaged) }))
  )
  st.s.deleteList.run(list)
  const newest = st.s.newest.get(list)
  if (newest !== undefined) {
    insertAll(st, records, newest.id)
    st.s.setCurrent.run(list, newest.id, 0)
  }
  sealList(st, list)
  return records
}

const amendOutcome = (st: Store, list: string, version: number, records: ReadonlyArray<Intel.IntelRecord>) => {
  const current = st.s.currentOf.get(list)!.version
  const active = records.filter((r) => r.delistedAt === undefined).length
  return {
    list,
    version,
    current: numberOf(st, list, current),
    asOf: st.s.version.get(current)!.as_of,
    active,
    delisted: records.length - active
  }
}

/** Runs an amendment in one transaction; a refusal rolls it back. */
const amend = (
  st: Store,
  operation: string,
  f: () => IntelIndex.AmendOutcome | IntelIndex.AmendRefused
): Effect.Effect<IntelIndex.AmendOutcome, StoreError.StoreError | IntelIndex.AmendRefused> =>
  st.database
    .transaction(operation, () => {
      const outcome = f()
      if (outcome instanceof IntelIndex.AmendRefused) throw new Refusal(outcome)
      return outcome
    })
    .pipe(
      Effect.catchDefect((defect) =>
        defect instanceof Refusal && defect.refused instanceof IntelIndex.AmendRefused
          ? Effect.fail(defect.refused)
          : Effect.die(defect)
      ),
      Effect.ensuring(st.forget)
    )

const noList = (list: string) => new IntelIndex.AmendRefused({ list, message: `there is no list named ${list}` })

/**
 * What committing `version` does, planned from one read of the list (no write lock is held meanwhile): the
 * records to write, the ones to de-list (by row), the digest of the list after, and the list's state it was
 * planned from; or a refusal of the guard; or `backfill` for a version older than the newest (the list is
 * rebuilt in one transaction); undefined when the version is not staged.
 */
const plan = (st: Store, version: number, completion: IntelIndex.Completion) =>
  st.database.use("IntelIndex.commit", (db) =>
    db
      .transaction(() => {
        const row = stagedVersion(st, version)
        if (row === undefined) return undefined
        const info: IntelIndex.VersionInfo = { ...infoOf(row), ...completion }
        const current = st.s.currentOf.get(info.list)
        const newestDate = current === undefined ? undefined : st.s.version.get(current.version)!.as_of
        if (newestDate !== undefined && completion.asOf < newestDate) return { kind: "backfill" as const }
        const revision = st.s.listState.get(info.list)
        const activeRows = st.s.activeRecords.all(info.list)
        const active = new Map(activeRows.map((r) => [IntelIndex.recordKey(r), r.id]))
        const before = new Set(active.keys())
        const staged = st.s.stagedRecords.all(version).map(parseStaged)
        const commit = IntelIndex.planCommit(info, before, staged)
        const refused = IntelIndex.shrinkRefusal(info.list, before, IntelIndex.activeAfter(commit, before), completion)
        if (refused !== undefined) return { kind: "refused" as const, refused }
        const closing = new Set(commit.close)
        const kept = commit.replaceAll
          ? []
          : st.s.listRecords
              .all(info.list)
              .map((r) =>
                r.delisted_at === null && closing.has(IntelIndex.recordKey(r))
                  ? { ...fromRow(r), delistedAt: info.asOf }
                  : fromRow(r)
              )
        return {
          kind: "planned" as const,
          info,
          commit,
          revision,
          close: commit.close.map((key) => active.get(key)!),
          digest: digest([...kept, ...commit.insert])
        }
      })
      .deferred()
  )

/** Commits a version dated before the list's newest: the list is rebuilt from its versions, in one transaction. */
const backfill = (st: Store, version: number, completion: IntelIndex.Completion) =>
  st.database
    .transaction("IntelIndex.commit", () => {
      const row = stagedVersion(st, version)
      if (row === undefined) return undefined
      const info: IntelIndex.VersionInfo = { ...infoOf(row), ...completion }
      const before = new Set(st.s.activeRecords.all(info.list).map(IntelIndex.recordKey))
      st.s.complete.run(completion.asOf, completion.contentHash, version)
      st.s.markCommitted.run(version)
      // The version takes its place in the list's history and the list is rebuilt from it.
      const previous = st.s.listRecords.all(info.list).map(fromRow)
      const rebuilt = rebuildList(st, info.list)
      if (rebuilt instanceof IntelIndex.AmendRefused) throw new Refusal(rebuilt)
      const refused = IntelIndex.shrinkRefusal(info.list, before, IntelIndex.activeKeysOf(rebuilt), completion)
      if (refused !== undefined) throw new Refusal(refused)
      return {
        list: info.list,
        version: numberOf(st, info.list, version),
        ...IntelIndex.intervalChanges(previous, rebuilt)
      }
    })
    .pipe(
      Effect.catchDefect((defect) => (defect instanceof Refusal ? Effect.fail(defect.refused) : Effect.die(defect))),
      Effect.flatMap(
        (
          outcome
        ): Effect.Effect<
          IntelIndex.CommitOutcome,
          StoreError.StoreError | IntelIndex.ShrinkRefused | IntelIndex.AmendRefused
        > => (outcome === undefined ? Effect.fail(notStaged("IntelIndex.commit", version)) : Effect.succeed(outcome))
      )
    )

/** Commits a staged version: planned from a read, written a slice at a time, put in force in one short transaction. */
const commitVersion = (st: Store, version: number, completion: IntelIndex.Completion) =>
  Effect.gen(function* () {
    for (let attempt = 0; ; attempt++) {
      const planned = yield* plan(st, version, completion)
      if (planned === undefined) return yield* notStaged("IntelIndex.commit", version)
      if (planned.kind === "refused") return yield* planned.refused
      if (planned.kind === "backfill") return yield* backfill(st, version, completion)
      const { info, commit } = planned
      // The new records, a slice at a time: written by a version still staged, they are not in force yet.
      for (let i = 0; i < commit.insert.length; i += rowsPerSlice) {
        const written = yield* st.database.slice("IntelIndex.commit", () => {
          if (stagedVersion(st, version) === undefined) return false
          insertAll(st, commit.insert.slice(i, i + rowsPerSlice), version)
          return true
        })
        if (!written) {
          yield* sweep(st, info.list)
          return yield* notStaged("IntelIndex.commit", version)
        }
      }
      // What a commit that failed or was abandoned left below this version goes first (it would come in force).
      yield* sweep(st, info.list)
      // In force at once, if the list is still as planned from.
      const done = yield* st.database.transaction("IntelIndex.commit", () => {
        if (stagedVersion(st, version) === undefined) return "gone" as const
        const state = st.s.listState.get(info.list)
        if (
          state?.revision !== planned.revision?.revision ||
          state?.version !== planned.revision?.version ||
          st.s.strays.get(info.list, state?.version ?? 0, version)!.n > 0
        )
          return "changed" as const
        st.s.complete.run(completion.asOf, completion.contentHash, version)
        st.s.markCommitted.run(version)
        if (!commit.replaceAll) for (const id of planned.close) st.s.close.run(info.asOf, id)
        // Replacing every record: those of earlier versions fall below the floor, and are swept after.
        st.s.setCurrent.run(info.list, version, commit.replaceAll ? version : (state?.floor ?? 0))
        st.s.setDigest.run(planned.digest, info.list)
        return "committed" as const
      })
      yield* st.forget
      if (done === "committed" || done === "gone") yield* sweep(st, info.list)
      if (done === "gone") return yield* notStaged("IntelIndex.commit", version)
      if (done === "committed")
        return {
          list: info.list,
          version: yield* st.database.use("IntelIndex.commit", () => numberOf(st, info.list, version)),
          added: commit.added,
          delisted: commit.delisted,
          unchanged: commit.unchanged
        }
      // Another commit or amendment of the list came first: the rows written are swept, and it is planned again.
      yield* sliced(st, () => st.s.sweepVersion.run(info.list, version, rowsPerSlice).changes)
      if (attempt + 1 >= replans)
        return yield* new StoreError.StoreError({
          reason: "Conflict",
          operation: "IntelIndex.commit",
          message: `${info.list} changed ${replans} times while version ${version} was being committed; ingest it again`
        })
    }
  }).pipe(Effect.ensuring(st.forget))

/** The screening reads: lookups, scans, the calibration models, the generation and the lists. */
const reads = (st: Store): IntelIndex.IntelIndex["Service"] => ({
  lookup: (addresses) =>
    st.database.use("IntelIndex.lookup", () =>
      addresses.flatMap((a) => st.found.through(a, () => st.s.byAddress.all(a).map(fromRow)))
    ),
  scan: (after, limit) => st.database.use("IntelIndex.scan", () => st.s.scan.all(after, limit).map(fromRow)),
  models: st.database.use("IntelIndex.models", () =>
    st.s.models
      .all()
      .map((row) => ({ version: row.version, ...StoredJson.orThrow(readModel(row.model, `version ${row.version}`)) }))
  ),
  generation: st.database.use("IntelIndex.generation", () =>
    st.generation.through("generation", () => st.s.generation.get()?.g ?? 0)
  ),
  lists: st.database.use("IntelIndex.lists", () =>
    st.lists.through("lists", () => {
      const refusals = new Map(st.s.refusals.all().map(({ list, ...refusal }) => [list, refusal]))
      return st.s.lists.all().map((row) =>
        IntelIndex.withRefusal(
          {
            list: row.list,
            source: row.source,
            kind: row.kind,
            authority: row.declared,
            version: row.number,
            asOf: row.as_of,
            since: row.since,
            versions: [...new Set(row.dates.split(","))].sort(),
            contentHash: row.content_hash,
            origin: row.origin,
            ingestedAt: row.ingested_at,
            active: row.active,
            delisted: row.delisted,
            ...(st.damaged.has(row.list) ? { problem: st.damaged.get(row.list)! } : {})
          },
          refusals.get(row.list)
        )
      )
    })
  )
})

/** The ingest writes: staging a version, appending its records, committing or discarding it, a refusal. */
const versions = (st: Store): IntelIndex.Versions["Service"] => ({
  stage: (info) =>
    st.database
      .transaction("IntelIndex.stage", () => {
        // A version staged before of the list is dropped (its commit, if under way, fails), its rows swept after.
        st.s.dropStaged.run(info.list)
        const result = st.s.insertVersion.run(
          info.list,
          info.source,
          info.kind,
          info.mode,
          info.origin,
          info.ingestedAt,
          info.authority
        )
        return Number(result.lastInsertRowid)
      })
      .pipe(
        Effect.tap(() => sweep(st, info.list)),
        Effect.ensuring(st.forgetLists)
      ),
  append: (version, records) =>
    st.database
      .slice("IntelIndex.append", () => {
        if (stagedVersion(st, version) === undefined) return false
        for (const r of records) st.s.stageRecord.run(version, encodeStaged(r))
        return true
      })
      .pipe(
        Effect.ensuring(st.forgetLists),
        Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail(notStaged("IntelIndex.append", version))))
      ),
  commit: (version, completion) => commitVersion(st, version, completion),
  discard: (version) =>
    Effect.gen(function* () {
      // Its staged records a slice at a time (a large list's would hold the lock for long in one go), then itself.
      yield* sliced(st, () =>
        stagedVersion(st, version) === undefined ? 0 : st.s.dropStagedSlice.run(version, rowsPerSlice).changes
      )
      const list = yield* st.database.transaction("IntelIndex.discard", () => {
        const staged = stagedVersion(st, version)?.list
        st.s.discard.run(version)
        return staged
      })
      if (list !== undefined) yield* sweep(st, list)
    }).pipe(Effect.ensuring(st.forgetLists)),
  recordRefusal: (list, refusal) =>
    st.database
      .transaction("IntelIndex.recordRefusal", () =>
        st.s.recordRefusal.run(list, refusal.at, refusal.origin, refusal.message)
      )
      .pipe(Effect.ensuring(st.forgetLists))
})

/** An operator's amendments: removing a list, rolling back or redating a version, storing a model. */
const administration = (st: Store): IntelIndex.Administration["Service"] => ({
  remove: (list, at) =>
    st.database
      .transaction("IntelIndex.remove", () => {
        const current = st.s.currentOf.get(list)
        if (current === undefined) return undefined
        const version = numberOf(st, list, current.version)
        const records = st.s.countRecords.get(list)!.n
        st.s.deleteList.run(list)
        st.s.dropStaged.run(list)
        st.s.dropCurrent.run(list)
        st.s.withdrawAll.run(at, list)
        st.s.recordDeletion.run(list, version, records, at)
        return { list, version, records }
      })
      .pipe(Effect.ensuring(st.forget)),
  rollback: (list, at) =>
    amend(st, "IntelIndex.rollback", () => {
      const current = st.s.currentOf.get(list)
      if (current === undefined) return noList(list)
      const number = numberOf(st, list, current.version)
      if (st.s.inEffect.all(list).length < 2) {
        return new IntelIndex.AmendRefused({
          list,
          message: `${list} has only one version in effect (version ${number}); nothing to roll back to (--delete removes the list)`
        })
      }
      st.s.withdraw.run(at, current.version)
      const records = rebuildList(st, list)
      if (records instanceof IntelIndex.AmendRefused) return records
      st.s.recordAmendment.run(list, "rollback", number, `withdrew version ${number}`, at)
      return amendOutcome(st, list, number, records)
    }),
  redate: (list, version, asOf, at) =>
    amend(st, "IntelIndex.redate", () => {
      if (st.s.currentOf.get(list) === undefined) return noList(list)
      const row = version >= 1 ? st.s.byNumber.get(list, version - 1) : undefined
      if (row === undefined || row.withdrawn_at !== null) {
        return new IntelIndex.AmendRefused({
          list,
          message: `${list} has no version ${version} in effect`
        })
      }
      st.s.setDate.run(asOf, row.id)
      const records = rebuildList(st, list)
      if (records instanceof IntelIndex.AmendRefused) return records
      st.s.recordAmendment.run(list, "redate", version, `${row.as_of} -> ${asOf}`, at)
      return amendOutcome(st, list, version, records)
    }),
  storeModel: (model) =>
    st.database
      .transaction("IntelIndex.storeModel", () => {
        const row = st.s.storeModel.get(model.asOf, model.fittedAt, encodeModel(model))!
        return { version: row.version, ...model }
      })
      .pipe(Effect.ensuring(st.forget))
})

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase.SqliteDatabase
  const s = yield* database.use("IntelIndex.prepare", prepare)
  /**
   * The generation and the records of recently looked-up addresses (most have none): committed records change
   * only when a version is committed, here (then both are forgotten) or by another connection.
   */
  const generation = SqliteDatabase.memory<"generation", number>(database, 1)
  const found = SqliteDatabase.memory<string, ReadonlyArray<Intel.IntelRecord>>(database, maxRemembered)
  const lists = SqliteDatabase.memory<"lists", ReadonlyArray<IntelIndex.ListStatus>>(database, 1)
  const forget = Effect.sync(() => {
    generation.forget()
    found.forget()
    lists.forget()
  })
  const forgetLists = Effect.sync(() => lists.forget())

  /**
   * Lists whose records no longer match the digest written with their last change (SQLite keeps no checksums:
   * a changed byte in a stored address would otherwise make a listed address answer clean). Verified at open;
   * a list stored before digests were kept gets one now.
   */
  const damaged = new Map<string, string>()
  const st: Store = { database, s, generation, found, lists, forget, forgetLists, damaged }
  // Verifying reads only (another process may hold the write lock); lists stored before digests were kept get one.
  const unsealed = yield* database.use("IntelIndex.verify", () => {
    const missing: Array<string> = []
    for (const row of s.digests.all()) {
      if (row.records_digest === null) missing.push(row.list)
      else if (row.records_digest !== digestOf(st, row.list)) {
        const problem = `list ${row.list}: its stored records no longer match the digest written with its last change; every answer is incomplete until it is rewritten (vigil lists --delete it, then ingest its sources again)`
        damaged.set(row.list, problem)
        database.reportProblem(problem)
      }
    }
    return missing
  })
  if (unsealed.length > 0) {
    yield* database.transaction("IntelIndex.seal", () => {
      for (const list of unsealed) sealList(st, list)
    })
  }
  return { ...reads(st), ...versions(st), ...administration(st) } satisfies IntelIndex.All
})

/** A layer providing IntelIndex over the SqliteDatabase in context. */
export const layer: Layer.Layer<
  IntelIndex.IntelIndex | IntelIndex.Versions | IntelIndex.Administration,
  never,
  SqliteDatabase.SqliteDatabase
> = IntelIndex.layerOf(make.pipe(Effect.orDie))
