/**
 * IntelIndex on PostgreSQL: staged rows in their own table, each commit applied in one transaction, so readers
 * (every instance) see the previous version until it commits, and a refused or interrupted ingest leaves it in
 * force. Changes to one list take its advisory lock: two instances ingesting or amending the same list take turns.
 * Records go in thousands per statement.
 */
import { Calibration, Intel, IntelIndex, StoredJson, StoreError } from "@vigil/core"
import { Effect, type Layer, Result, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { batcher, PgDatabase, serialised } from "./PgDatabase.ts"
import * as PgNotices from "./PgNotices.ts"

interface RecordRow {
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
  readonly cites: string | null
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
  readonly authority: Intel.Authority
  readonly withdrawn_at: string | null
}

/** A calibration model as stored: its JSON. */
const encodeModel = Schema.encodeSync(Schema.fromJsonString(Calibration.Model))
const readModel = StoredJson.reader(Schema.fromJsonString(Calibration.Model), "IntelIndex", "calibration model")
const readStaged = StoredJson.reader(Intel.ParsedRecordJson, "IntelIndex", "staged record")
const encodeStaged = Schema.encodeSync(Intel.ParsedRecordJson)

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
  ...(row.cites === null ? {} : { cites: row.cites }),
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
  ingestedAt: row.ingested_at,
  authority: row.authority
})

const notStaged = (operation: string, version: number) =>
  new StoreError.StoreError({ reason: "Conflict", operation, message: `version ${version} is not staged` })

const recordColumns =
  "list, source, address, family, category, reference, jurisdiction, entity_name, entity_type, label, listed_at, delisted_at, ingested_at, cites"
const versionColumns =
  "id::float8 AS id, list, source, kind, mode, as_of, content_hash, origin, ingested_at, state, authority, withdrawn_at"

/** Addresses whose lookups are remembered at once (then it starts over). */
const maxRemembered = 20_000

/** How many rows one statement inserts. */
const chunk = 5_000

/** The channel on which every change of the lists is announced at its commit (the payload: the schema). */
const channel = "vigil_intel"

/** What the operations of the index share: the database, and the lookups and generation this process remembers. */
interface Store {
  readonly database: PgDatabase["Service"]
  readonly sql: PgDatabase["Service"]["sql"]
  readonly run: PgDatabase["Service"]["run"]
  readonly transaction: PgDatabase["Service"]["transaction"]
  /** A transaction that changes the lists: announced to every listener at its commit, and forgotten here at once. */
  readonly changing: <A, E>(
    operation: string,
    effect: Effect.Effect<A, E>
  ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | StoreError.StoreError>
  readonly generation: IntelIndex.IntelIndex["Service"]["generation"]
  readonly lists: IntelIndex.IntelIndex["Service"]["lists"]
  readonly lookup: IntelIndex.IntelIndex["Service"]["lookup"]
}

const versionOf = (st: Store, id: number) =>
  Effect.map(
    st.sql<VersionRow>`SELECT ${st.sql.literal(versionColumns)} FROM intel_versions WHERE id = ${id}`,
    (rows) => rows[0]
  )
const stagedVersion = (st: Store, id: number) =>
  Effect.map(versionOf(st, id), (row) => (row?.state === "staged" ? row : undefined))
const stagedRecords = (st: Store, id: number) =>
  Effect.flatMap(
    st.sql<{ readonly record: string }>`SELECT record FROM intel_staged WHERE version = ${id} ORDER BY seq`,
    (rows) => StoredJson.each(rows, (r) => readStaged(r.record))
  )
const listRecords = (st: Store, list: string) =>
  Effect.map(
    st.sql<RecordRow>`SELECT ${st.sql.literal(recordColumns)} FROM intel_records WHERE list = ${list}`,
    (rows) => rows.map(fromRow)
  )
const currentOf = (st: Store, list: string) =>
  Effect.map(
    st.sql<{ readonly version: number }>`SELECT version::float8 AS version FROM intel_lists WHERE list = ${list}`,
    (rows) => rows[0]?.version
  )
const inEffect = (st: Store, list: string) =>
  st.sql<VersionRow>`SELECT ${st.sql.literal(versionColumns)} FROM intel_versions
                  WHERE list = ${list} AND state = 'committed' AND withdrawn_at IS NULL ORDER BY id`
/** The number the list gives the version with id `id`. */
const numberOf = (st: Store, list: string, id: number) =>
  Effect.map(
    st.sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM intel_versions
                                WHERE list = ${list} AND state = 'committed' AND id <= ${id}`,
    (rows) => rows[0]!.n
  )
const setCurrent = (st: Store, list: string, version: number) =>
  st.sql`INSERT INTO intel_lists (list, version) VALUES (${list}, ${version})
      ON CONFLICT (list) DO UPDATE SET version = excluded.version`

/** Inserts records, thousands per statement (as one JSON document: typed columns, nulls included). */
const insertAll = (st: Store, records: ReadonlyArray<Intel.IntelRecord>) =>
  Effect.forEach(
    Array.from({ length: Math.ceil(records.length / chunk) }, (_, i) => records.slice(i * chunk, (i + 1) * chunk)),
    (part) =>
      st.sql`
        INSERT INTO intel_records (${st.sql.literal(recordColumns)})
        SELECT t.list, t.source, t.address, t.family, t.category, t.reference, t.jurisdiction, t."entityName",
               t."entityType", t.label, t."listedAt", t."delistedAt", t."ingestedAt", t.cites
        FROM json_to_recordset(${JSON.stringify(part)}::json) AS t(
          list text, source text, address text, family text, category text, reference text, jurisdiction text,
          "entityName" text, "entityType" text, label text, "listedAt" text, "delistedAt" text, "ingestedAt" text,
          cites text)`,
    { discard: true }
  )

/** Rebuilds a list's records from its versions in effect, in date order, and points the list at its newest. */
const rebuildList = (st: Store, list: string) =>
  Effect.gen(function* () {
    const versions = yield* inEffect(st, list)
    const kept = yield* Effect.forEach(versions, (v) =>
      Effect.map(stagedRecords(st, v.id), (records) => ({ info: infoOf(v), records }))
    )
    const records = IntelIndex.rebuild(kept)
    yield* st.sql`DELETE FROM intel_records WHERE list = ${list}`
    yield* insertAll(st, records)
    const [newest] = yield* st.sql<{ readonly id: number }>`
      SELECT id::float8 AS id FROM intel_versions WHERE list = ${list} AND state = 'committed' AND withdrawn_at IS NULL
      ORDER BY as_of DESC, id DESC LIMIT 1`
    if (newest !== undefined) yield* setCurrent(st, list, newest.id)
    return records
  })

const amendOutcome = (st: Store, list: string, version: number, records: ReadonlyArray<Intel.IntelRecord>) =>
  Effect.gen(function* () {
    const current = (yield* currentOf(st, list))!
    const active = records.filter((r) => r.delistedAt === undefined).length
    return {
      list,
      version,
      current: yield* numberOf(st, list, current),
      asOf: (yield* versionOf(st, current))!.as_of,
      active,
      delisted: records.length - active
    }
  })

const noList = (list: string) => new IntelIndex.AmendRefused({ list, message: `there is no list named ${list}` })

const amendment = (
  st: Store,
  list: string,
  action: "rollback" | "redate",
  version: number,
  detail: string,
  at: string
) =>
  st.sql`INSERT INTO intel_amendments (list, action, version, detail, at)
      VALUES (${list}, ${action}, ${version}, ${detail}, ${at})`

/** Commits a staged version in one transaction, announced to every listener at its commit. */
const commitVersion = (st: Store, version: number, completion: IntelIndex.Completion) =>
  st.changing(
    "IntelIndex.commit",
    Effect.gen(function* () {
      const staged = yield* stagedVersion(st, version)
      if (staged === undefined) return yield* notStaged("IntelIndex.commit", version)
      yield* serialised(st.sql, `intel:${staged.list}`)
      const row = yield* stagedVersion(st, version)
      if (row === undefined) return yield* notStaged("IntelIndex.commit", version)
      const info: IntelIndex.VersionInfo = { ...infoOf(row), ...completion }
      const activeRows = yield* st.sql<{
        readonly id: number
        readonly address: string
        readonly category: Intel.Category
        readonly reference: string
      }>`SELECT id::float8 AS id, address, category, reference FROM intel_records
             WHERE list = ${info.list} AND delisted_at IS NULL`
      const active = new Map(activeRows.map((r) => [IntelIndex.recordKey(r), r.id]))
      const before = new Set(active.keys())
      const current = yield* currentOf(st, info.list)
      const newestDate = current === undefined ? undefined : (yield* versionOf(st, current))!.as_of
      yield* st.sql`UPDATE intel_versions SET as_of = ${completion.asOf}, content_hash = ${completion.contentHash},
                       state = 'committed' WHERE id = ${version}`
      if (newestDate !== undefined && completion.asOf < newestDate) {
        // A backfill: the version takes its place in the list's history and the list is rebuilt from it.
        const previous = yield* listRecords(st, info.list)
        const rebuilt = yield* rebuildList(st, info.list)
        const refused = IntelIndex.shrinkRefusal(info.list, before, IntelIndex.activeKeysOf(rebuilt), completion)
        if (refused !== undefined) return yield* refused
        return {
          list: info.list,
          version: yield* numberOf(st, info.list, version),
          ...IntelIndex.intervalChanges(previous, rebuilt)
        }
      }
      const plan = IntelIndex.planCommit(info, before, yield* stagedRecords(st, version))
      const refused = IntelIndex.shrinkRefusal(info.list, before, IntelIndex.activeAfter(plan, before), completion)
      if (refused !== undefined) return yield* refused
      if (plan.replaceAll) yield* st.sql`DELETE FROM intel_records WHERE list = ${info.list}`
      const closed = plan.close.map((key) => active.get(key)!)
      if (closed.length > 0)
        yield* st.sql`UPDATE intel_records SET delisted_at = ${info.asOf} WHERE id = ANY(${closed}::bigint[])`
      yield* insertAll(st, plan.insert)
      yield* setCurrent(st, info.list, version)
      return {
        list: info.list,
        version: yield* numberOf(st, info.list, version),
        added: plan.added,
        delisted: plan.delisted,
        unchanged: plan.unchanged
      }
    })
  )

/**
 * The committed lists with their counts and latest refusal, as the database holds them now.
 */
const readLists = (run: PgDatabase["Service"]["run"], sql: PgDatabase["Service"]["sql"]) =>
  Effect.map(
    run(
      "IntelIndex.lists",
      sql<
        VersionRow & {
          active: number
          delisted: number
          number: number
          since: string
          dates: string
          declared: Intel.Authority
          refused_at: string | null
          refused_origin: string | null
          refused_message: string | null
        }
      >`
        SELECT rf.at AS refused_at, rf.origin AS refused_origin, rf.message AS refused_message,
          v.id::float8 AS id, v.list, v.source, v.kind, v.mode, v.as_of, v.content_hash, v.origin,
          v.ingested_at, v.state, v.authority, v.withdrawn_at,
          (SELECT count(*)::int FROM intel_versions c WHERE c.list = l.list AND c.state = 'committed' AND c.id <= v.id) AS number,
          (SELECT min(e.as_of) FROM intel_versions e
             WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL) AS since,
          (SELECT string_agg(DISTINCT e.as_of, ',' ORDER BY e.as_of) FROM intel_versions e
             WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL) AS dates,
          (SELECT e.authority FROM intel_versions e
             WHERE e.list = l.list AND e.state = 'committed' AND e.withdrawn_at IS NULL
             ORDER BY e.id DESC LIMIT 1) AS declared,
          (SELECT count(*)::int FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NULL) AS active,
          (SELECT count(*)::int FROM intel_records r WHERE r.list = l.list AND r.delisted_at IS NOT NULL) AS delisted
        FROM intel_lists l JOIN intel_versions v ON v.id = l.version
          LEFT JOIN intel_refusals rf ON rf.list = l.list
        ORDER BY l.list`
    ),
    (rows) =>
      rows.map((row) =>
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
            delisted: row.delisted
          },
          row.refused_at === null
            ? undefined
            : { at: row.refused_at, origin: row.refused_origin!, message: row.refused_message! }
        )
      )
  )

/** The screening reads: lookups, scans, the calibration models, the generation and the lists. */
const reads = (st: Store): IntelIndex.IntelIndex["Service"] => ({
  lookup: st.lookup,
  scan: (after, limit) =>
    Effect.map(
      st.run(
        "IntelIndex.scan",
        // Pages in the st.database's own order of addresses, which its index serves (callers sort what they need).
        st.sql<RecordRow>`SELECT ${st.sql.literal(recordColumns)} FROM intel_records WHERE address IN
                           (SELECT DISTINCT address FROM intel_records WHERE address > ${after}
                              ORDER BY address LIMIT ${limit})
                         ORDER BY address, id`
      ),
      (rows) => rows.map(fromRow)
    ),
  models: Effect.flatMap(
    st.run(
      "IntelIndex.models",
      st.sql<{ readonly version: number; readonly model: string }>`
          SELECT version::int AS version, model FROM intel_models ORDER BY version`
    ),
    (rows) =>
      StoredJson.each(rows, (row) =>
        Result.map(readModel(row.model, `version ${row.version}`), (model) => ({ version: row.version, ...model }))
      )
  ),
  // Commits raise the newest committed version id; deletions, amendments and models add to their counts.
  generation: st.generation,
  // Remembered while notices are heard (every `/health` and lists answer reads them; their counts cost a scan of
  // each list's records).
  lists: st.lists
})

/** The ingest writes: staging a version, appending its records, committing or discarding it, a refusal. */
const versions = (st: Store): IntelIndex.Versions["Service"] => ({
  stage: (info) =>
    st.transaction(
      "IntelIndex.stage",
      Effect.gen(function* () {
        yield* serialised(st.sql, `intel:${info.list}`)
        yield* st.sql`DELETE FROM intel_versions WHERE list = ${info.list} AND state = 'staged'`
        const [row] = yield* st.sql<{ readonly id: number }>`
            INSERT INTO intel_versions (list, source, kind, mode, as_of, content_hash, origin, ingested_at, state, authority)
            VALUES (${info.list}, ${info.source}, ${info.kind}, ${info.mode}, '', '', ${info.origin}, ${info.ingestedAt},
                    'staged', ${info.authority})
            RETURNING id::float8 AS id`
        return row!.id
      })
    ),
  append: (version, records) =>
    st.transaction(
      "IntelIndex.append",
      Effect.gen(function* () {
        if ((yield* stagedVersion(st, version)) === undefined) return yield* notStaged("IntelIndex.append", version)
        for (let i = 0; i < records.length; i += chunk) {
          const part = records.slice(i, i + chunk).map((r) => encodeStaged(r))
          yield* st.sql`INSERT INTO intel_staged (version, record) SELECT ${version}, r FROM unnest(${part}::text[]) AS t(r)`
        }
      })
    ),
  commit: (version, completion) => commitVersion(st, version, completion),
  discard: (version) =>
    st.run(
      "IntelIndex.discard",
      Effect.asVoid(st.sql`DELETE FROM intel_versions WHERE id = ${version} AND state = 'staged'`)
    ),
  // Announced as a change, so every instance's remembered lists show it at once.
  recordRefusal: (list, refusal) =>
    Effect.asVoid(
      st.changing(
        "IntelIndex.recordRefusal",
        st.sql`
            INSERT INTO intel_refusals (list, at, origin, message)
            VALUES (${list}, ${refusal.at}, ${refusal.origin}, ${refusal.message})
            ON CONFLICT (list) DO UPDATE SET at = excluded.at, origin = excluded.origin, message = excluded.message`
      )
    )
})

/** An operator's amendments: removing a list, rolling back or redating a version, storing a model. */
const administration = (st: Store): IntelIndex.Administration["Service"] => ({
  remove: (list, at) =>
    st.changing(
      "IntelIndex.remove",
      Effect.gen(function* () {
        yield* serialised(st.sql, `intel:${list}`)
        const current = yield* currentOf(st, list)
        if (current === undefined) return undefined
        const version = yield* numberOf(st, list, current)
        const [count] = yield* st.sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM intel_records WHERE list = ${list}`
        const records = count?.n ?? 0
        yield* st.sql`DELETE FROM intel_records WHERE list = ${list}`
        yield* st.sql`DELETE FROM intel_versions WHERE list = ${list} AND state = 'staged'`
        yield* st.sql`DELETE FROM intel_lists WHERE list = ${list}`
        yield* st.sql`UPDATE intel_versions SET withdrawn_at = ${at}
                     WHERE list = ${list} AND state = 'committed' AND withdrawn_at IS NULL`
        yield* st.sql`INSERT INTO intel_deletions (list, version, records, deleted_at)
                     VALUES (${list}, ${version}, ${records}, ${at})`
        return { list, version, records }
      })
    ),
  rollback: (list, at) =>
    st.changing(
      "IntelIndex.rollback",
      Effect.gen(function* () {
        yield* serialised(st.sql, `intel:${list}`)
        const current = yield* currentOf(st, list)
        if (current === undefined) return yield* noList(list)
        const number = yield* numberOf(st, list, current)
        if ((yield* inEffect(st, list)).length < 2)
          return yield* new IntelIndex.AmendRefused({
            list,
            message: `${list} has only one version in effect (version ${number}); nothing to roll back to (--delete removes the list)`
          })
        yield* st.sql`UPDATE intel_versions SET withdrawn_at = ${at} WHERE id = ${current}`
        const records = yield* rebuildList(st, list)
        yield* amendment(st, list, "rollback", number, `withdrew version ${number}`, at)
        return yield* amendOutcome(st, list, number, records)
      })
    ),
  redate: (list, version, asOf, at) =>
    st.changing(
      "IntelIndex.redate",
      Effect.gen(function* () {
        yield* serialised(st.sql, `intel:${list}`)
        if ((yield* currentOf(st, list)) === undefined) return yield* noList(list)
        const [row] =
          version >= 1
            ? yield* st.sql<VersionRow>`SELECT ${st.sql.literal(versionColumns)} FROM intel_versions
                                       WHERE list = ${list} AND state = 'committed' ORDER BY id LIMIT 1 OFFSET ${version - 1}`
            : []
        if (row === undefined || row.withdrawn_at !== null)
          return yield* new IntelIndex.AmendRefused({ list, message: `${list} has no version ${version} in effect` })
        yield* st.sql`UPDATE intel_versions SET as_of = ${asOf} WHERE id = ${row.id}`
        const records = yield* rebuildList(st, list)
        yield* amendment(st, list, "redate", version, `${row.as_of} -> ${asOf}`, at)
        return yield* amendOutcome(st, list, version, records)
      })
    ),
  storeModel: (model) =>
    st.changing(
      "IntelIndex.storeModel",
      Effect.map(
        st.sql<{ readonly version: number }>`
            INSERT INTO intel_models (as_of, fitted_at, model)
            VALUES (${model.asOf}, ${model.fittedAt}, ${encodeModel(model)}) RETURNING version::int AS version`,
        (rows) => ({ version: rows[0]!.version, ...model })
      )
    )
})

const make = Effect.gen(function* () {
  const database = yield* PgDatabase
  const { sql, run } = database

  /**
   * The generation and the lists, remembered while this process hears the notices of changes (`LISTEN`): a commit
   * or a refusal here or in any other process (another instance, `vigil ingest`) is announced to every listener as
   * it commits, and forgets them.
   * A remembered reading is trusted for a second at most; while the listener is down (a dropped connection), none
   * is remembered: every request asks the database, and the listener subscribes again after a pause.
   */
  const heard = yield* PgNotices.listen(
    channel,
    "intelligence: not listening for list changes (every request asks the database meanwhile)"
  )
  const generation = PgNotices.remembered(
    heard,
    Effect.map(
      run(
        "IntelIndex.generation",
        sql<{ readonly g: number }>`
          SELECT ((SELECT coalesce(max(id), 0) FROM intel_versions WHERE state = 'committed')
            + (SELECT count(*) FROM intel_deletions) + (SELECT count(*) FROM intel_amendments)
            + (SELECT count(*) FROM intel_models))::float8 AS g`
      ),
      (rows) => rows[0]?.g ?? 0
    )
  )
  const lists = PgNotices.remembered(heard, readLists(run, sql))
  const { transaction } = database
  /** The records of recently looked-up addresses (most have none), at the generation they were read at. */
  let found: { readonly at: number; readonly records: Map<string, ReadonlyArray<Intel.IntelRecord>> } = {
    at: -1,
    records: new Map()
  }
  /**
   * The records of addresses not remembered, read for every request waiting at once in one statement (a group
   * read, as the quota charges are): concurrent screenings of distinct addresses share a round trip.
   */
  const readRecords = batcher((requests: ReadonlyArray<ReadonlyArray<string>>) =>
    Effect.map(
      run(
        "IntelIndex.lookup",
        sql<RecordRow>`SELECT ${sql.literal(recordColumns)} FROM intel_records
                       WHERE address = ANY(${[...new Set(requests.flat())]}::text[]) ORDER BY id`
      ),
      (rows) => {
        const byAddress = new Map<string, Array<Intel.IntelRecord>>()
        for (const row of rows) {
          const record = fromRow(row)
          const kept = byAddress.get(record.address)
          if (kept === undefined) byAddress.set(record.address, [record])
          else kept.push(record)
        }
        return requests.map((addresses) => addresses.flatMap((a) => byAddress.get(a) ?? []))
      }
    )
  )
  /** A transaction that changes the lists: announced to every listener at its commit, and forgotten here at once. */
  const changing = <A, E>(operation: string, effect: Effect.Effect<A, E>) =>
    database
      .transaction(operation, Effect.andThen(heard.announce, effect))
      .pipe(Effect.ensuring(Effect.sync(heard.forget)))

  /** The records of `addresses`: those remembered at this generation, the others read together with other requests. */
  const lookup: IntelIndex.IntelIndex["Service"]["lookup"] = (addresses) =>
    addresses.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(generation, (at) => {
          // What was read at this generation still holds: only the addresses not remembered are asked for.
          // A full memory starts over before reading, so nothing this request relies on is dropped under it.
          if (found.at !== at || found.records.size >= maxRemembered) found = { at, records: new Map() }
          const known = found
          const missing = [...new Set(addresses.filter((a) => !known.records.has(a)))]
          const read =
            missing.length === 0
              ? Effect.void
              : Effect.map(readRecords(missing), (rows) => {
                  for (const a of missing) known.records.set(a, [])
                  for (const row of rows) (known.records.get(row.address) as Array<Intel.IntelRecord>).push(row)
                })
          return Effect.map(read, () => addresses.flatMap((a) => known.records.get(a) ?? []))
        })

  const st: Store = { database, sql, run, transaction, changing, generation, lists, lookup }
  return { ...reads(st), ...versions(st), ...administration(st) } satisfies IntelIndex.All
})

/** A layer providing IntelIndex over the PgDatabase in context. */
export const layer: Layer.Layer<
  IntelIndex.IntelIndex | IntelIndex.Versions | IntelIndex.Administration,
  never,
  PgDatabase
> = IntelIndex.layerOf(make)
