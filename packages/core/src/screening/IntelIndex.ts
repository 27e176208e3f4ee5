/** Port: the store of intelligence records, filled by atomic, versioned list ingests and read by address. */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type * as Calibration from "./CalibrationModel.ts"
import { Authority, type IntelRecord, type ParsedRecord } from "./Intel.ts"
import type { StoreError } from "../kernel/index.ts"

/**
 * How a version relates to the previous one.
 * - `snapshot`: the version is the whole list as of `asOf`; records missing from it are de-listed on `asOf`.
 * - `history`: the version carries the full history (listings and their ends, e.g. blacklist events)
 *   and replaces the list's records wholesale.
 */
export type VersionMode = "snapshot" | "history"

/** What is known about a list version when its ingest starts. */
export interface StageInfo {
  readonly list: string
  readonly source: string
  /** The ingest kind that produced it, e.g. `ofac-sdn-xml`. */
  readonly kind: string
  readonly mode: VersionMode
  /** Where the input came from (a file name or URL), for provenance. */
  readonly origin: string
  readonly ingestedAt: string
  /** How far the list's word goes; the list's is that of its version ingested last (and still in effect). */
  readonly authority: Authority
}

/** What is known once the whole input has been read. */
export interface Completion {
  /** The date the version speaks for (ISO `YYYY-MM-DD`), e.g. the SDN's DateOfIssue. */
  readonly asOf: string
  /** Hash of the input, to recognise an unchanged re-ingest. */
  readonly contentHash: string
  /**
   * The largest share (0–1) of the list's active records the commit may de-list; more and nothing is applied
   * (`ShrinkRefused`). Absent: no limit. Checked inside the atomic step, against the list as it is then.
   */
  readonly maxDelistedShare?: number
}

/** A commit would have de-listed more of a list than its completion allowed; nothing was applied. */
export class ShrinkRefused extends Schema.TaggedError<ShrinkRefused>()("ShrinkRefused", {
  list: Schema.String,
  active: Schema.Int,
  removed: Schema.Int,
  maxShare: Schema.Finite
}) {
  override get message() {
    const share = this.active === 0 ? 0 : Math.round((100 * this.removed) / this.active)
    return `this version would de-list ${this.removed} of the ${this.active} active records of ${this.list} (${share}%, more than ${Math.round(100 * this.maxShare)}%)`
  }
}

/** A committed version's description. */
export interface VersionInfo extends StageInfo, Completion {}

/** The state of one list. */
/** A refresh of a list that the guard refused (it would have emptied the list, or de-listed too much of it). */
export const ListRefusal = Schema.Struct({
  /** When it was refused (an ISO instant). */
  at: Schema.String,
  /** The file or URL that was refused. */
  origin: Schema.String,
  /** Why, as the ingest said it. */
  message: Schema.String
})
export type ListRefusal = typeof ListRefusal.Type

export const ListStatus = Schema.Struct({
  list: Schema.String,
  source: Schema.String,
  kind: Schema.String,
  /** The list's own version number: 1 for its first committed version, then 2, 3… (refused or discarded attempts use none). */
  version: Schema.Int,
  asOf: Schema.String,
  contentHash: Schema.String,
  origin: Schema.String,
  ingestedAt: Schema.String,
  /** The authority of the version ingested last: the operator's latest word on the list. */
  authority: Authority,
  /** The date of the list's oldest version in effect: before it, the list says nothing. */
  since: Schema.String,
  /** The dates of the list's versions in effect, oldest first, each once (`since` is the first). */
  versions: Schema.Array(Schema.String),
  /** Records in force as of the list's current version. */
  active: Schema.Int,
  /** Records kept as history (de-listed). */
  delisted: Schema.Int,
  /** Set when the store's verification found the list's records altered: answers cannot rely on it. */
  problem: Schema.optionalKey(Schema.String),
  /** The latest refresh the guard refused since the version in force was ingested: the list may be out of date. */
  refused: Schema.optionalKey(ListRefusal)
})

/** The state of one list. */
export type ListStatus = typeof ListStatus.Type

/** `status` with `refusal` when it came after the version in force was ingested: what `lists` shows of refusals. */
export const withRefusal = (status: ListStatus, refusal: ListRefusal | undefined): ListStatus =>
  refusal === undefined || refusal.at <= status.ingestedAt ? status : { ...status, refused: refusal }

/** What deleting a list removed: its records (active and de-listed) and the version that was in force. */
export interface RemoveOutcome {
  readonly list: string
  /** The list's own number of the version that was in force. */
  readonly version: number
  readonly records: number
}

/** What rolling a list back or correcting a version's date did; the list's current version afterwards. */
export interface AmendOutcome {
  readonly list: string
  /** The list's own number of the version withdrawn (rollback) or re-dated. */
  readonly version: number
  /** The version in force afterwards and its date. */
  readonly current: number
  readonly asOf: string
  readonly active: number
  readonly delisted: number
}

/** A rollback or date correction that cannot be made; nothing was changed. */
export class AmendRefused extends Schema.TaggedError<AmendRefused>()("AmendRefused", {
  list: Schema.String,
  message: Schema.String
}) {}

/** What committing a version changed. */
export interface CommitOutcome {
  readonly list: string
  /** The list's own version number: 1 for its first committed version, then 2, 3… (refused or discarded attempts use none). */
  readonly version: number
  readonly added: number
  readonly delisted: number
  readonly unchanged: number
}

/** Port: the intelligence index as screening reads it: records by address, the lists, models, and what changed. */
export class IntelIndex extends Context.Service<
  IntelIndex,
  {
    /** Every record ever ingested for these normalized addresses, de-listed ones included. */
    readonly lookup: (
      addresses: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<IntelRecord>, StoreError.StoreError>
    /** The committed lists, by name. */
    readonly lists: Effect.Effect<ReadonlyArray<ListStatus>, StoreError.StoreError>
    /**
     * A number that changes whenever a commit changes what `lookup` can return or a model is stored (0 before any),
     * also when another process did; caches of screening results compare it to know they are stale.
     */
    readonly generation: Effect.Effect<number, StoreError.StoreError>
    /** Every stored calibration model, oldest first. */
    readonly models: Effect.Effect<ReadonlyArray<Calibration.Stored>, StoreError.StoreError>
    /**
     * Every record (de-listed ones included) of the first `limit` addresses after `after`, in the store's order of
     * addresses (the next page starts after the last address of this one): the whole index read in pages, e.g. to
     * fit a calibration. An empty page is the end.
     */
    readonly scan: (after: string, limit: number) => Effect.Effect<ReadonlyArray<IntelRecord>, StoreError.StoreError>
  }
>()("@vigil/core/IntelIndex") {}

/**
 * Port: writing versions of lists, as ingest and refresh do, and recording a refresh the guard refused. A list
 * version is written in three steps so that a huge input never sits in memory and a failed or interrupted ingest
 * changes nothing: `stage` opens a version, `append` adds batches to it, and `commit` applies it to the list in one
 * atomic step (or `discard` drops it). Readers only ever see committed versions.
 */
export class Versions extends Context.Service<
  Versions,
  {
    /** Opens a new staged version of `info.list`; any earlier staged, uncommitted version of it is dropped. */
    readonly stage: (info: StageInfo) => Effect.Effect<number, StoreError.StoreError>
    /** Adds records to a staged version. */
    readonly append: (
      version: number,
      records: ReadonlyArray<ParsedRecord>
    ) => Effect.Effect<void, StoreError.StoreError>
    /**
     * Applies a staged version, completed with its date and hash, to its list atomically. A version dated before
     * the list's newest takes its place in the list's history (a backfill): the listing intervals are rebuilt from
     * every version in date order, exactly as ingesting them in that order would have made them.
     */
    readonly commit: (
      version: number,
      completion: Completion
    ) => Effect.Effect<CommitOutcome, StoreError.StoreError | ShrinkRefused | AmendRefused>
    /** Drops a staged version. */
    readonly discard: (version: number) => Effect.Effect<void, StoreError.StoreError>
    /**
     * Records that a refresh of `list` was refused by the guard (the latest refusal of a list replaces the one
     * before). `lists` shows it until a version of the list is committed after it.
     */
    readonly recordRefusal: (list: string, refusal: ListRefusal) => Effect.Effect<void, StoreError.StoreError>
  }
>()("@vigil/core/IntelIndex/Versions") {}

/**
 * Port: what an operator changes besides ingesting: delete a list, withdraw or redate one of its versions, store a
 * fitted calibration model. Each moves `generation`.
 */
export class Administration extends Context.Service<
  Administration,
  {
    /**
     * Deletes a list: its records and its place among the lists, in one atomic step, recorded with `at` (an ISO
     * instant). Its versions stay as history, so a list made again under the name numbers on from them.
     * `undefined` when there is no such list. Lookups and caches see the change at once (`generation` moves).
     */
    readonly remove: (list: string, at: string) => Effect.Effect<RemoveOutcome | undefined, StoreError.StoreError>
    /**
     * Withdraws the list's current version (its newest in date) and rebuilds the list from the versions left, as
     * if the withdrawn one had never been ingested; recorded with `at`. Refused for a list of one version.
     */
    readonly rollback: (list: string, at: string) => Effect.Effect<AmendOutcome, StoreError.StoreError | AmendRefused>
    /**
     * Corrects the date of the list's version numbered `version` to `asOf` and rebuilds the list's listing
     * intervals from its versions in their new date order; recorded with `at`.
     */
    readonly redate: (
      list: string,
      version: number,
      asOf: string,
      at: string
    ) => Effect.Effect<AmendOutcome, StoreError.StoreError | AmendRefused>
    /** Stores a fitted calibration model as the next version, in one atomic step; `generation` moves. */
    readonly storeModel: (model: Calibration.Model) => Effect.Effect<Calibration.Stored, StoreError.StoreError>
  }
>()("@vigil/core/IntelIndex/Administration") {}

/** The three ports, as an adapter implements them over one store. */
export type All = IntelIndex["Service"] & Versions["Service"] & Administration["Service"]

/** The three ports as one object, from the context (a host or a test that both reads and writes). */
export const all: Effect.Effect<All, never, IntelIndex | Versions | Administration> = Effect.gen(function* () {
  return { ...(yield* IntelIndex), ...(yield* Versions), ...(yield* Administration) }
})

/** The three ports as one object, from a built context. */
export const allOf = (context: Context.Context<IntelIndex | Versions | Administration>): All => ({
  ...Context.get(context, IntelIndex),
  ...Context.get(context, Versions),
  ...Context.get(context, Administration)
})

/** The layer of the three ports from an adapter's one implementation. */
export const layerOf = <E, R>(
  make: Effect.Effect<All, E, R>
): Layer.Layer<IntelIndex | Versions | Administration, E, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(
    Effect.map(make, (index) =>
      Context.make(IntelIndex, index).pipe(Context.add(Versions, index), Context.add(Administration, index))
    )
  )

/** The identity of a record within its list: the same address, category and reference across versions. */
export const recordKey = (r: Pick<IntelRecord, "address" | "category" | "reference">): string =>
  `${r.address}\u0000${r.category}\u0000${r.reference}`

/** Completes a staged record into a stored one. */
export const toRecord = (info: VersionInfo, parsed: ParsedRecord): IntelRecord => ({
  list: info.list,
  source: info.source,
  address: parsed.address,
  family: parsed.family,
  category: parsed.category,
  reference: parsed.reference,
  ...(parsed.jurisdiction === undefined ? {} : { jurisdiction: parsed.jurisdiction }),
  ...(parsed.entityName === undefined ? {} : { entityName: parsed.entityName }),
  ...(parsed.entityType === undefined ? {} : { entityType: parsed.entityType }),
  ...(parsed.label === undefined ? {} : { label: parsed.label }),
  listedAt: parsed.listedAt ?? info.asOf,
  ...(parsed.delistedAt === undefined ? {} : { delistedAt: parsed.delistedAt }),
  ...(parsed.cites === undefined ? {} : { cites: parsed.cites }),
  ingestedAt: info.ingestedAt
})

/** The changes a commit makes to one list: records to insert, keys of active records to close, and counts. */
export interface CommitPlan {
  readonly insert: ReadonlyArray<IntelRecord>
  /** Keys of currently active records to de-list on `info.asOf` (snapshot mode). */
  readonly close: ReadonlyArray<string>
  /** True when every current record of the list is removed first (history mode). */
  readonly replaceAll: boolean
  readonly added: number
  readonly delisted: number
  readonly unchanged: number
}

/** The keys active after a plan is applied to a list whose active keys are `activeKeys`. */
export const activeAfter = (plan: CommitPlan, activeKeys: ReadonlySet<string>): ReadonlySet<string> => {
  const after = new Set(plan.replaceAll ? [] : activeKeys)
  for (const k of plan.close) after.delete(k)
  for (const r of plan.insert) if (r.delistedAt === undefined) after.add(recordKey(r))
  return after
}

/**
 * The refusal of a change from the active keys `before` to `after` under `completion.maxDelistedShare`, or
 * undefined when it may be applied.
 */
export const shrinkRefusal = (
  list: string,
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
  completion: Completion
): ShrinkRefused | undefined => {
  const maxShare = completion.maxDelistedShare
  if (maxShare === undefined || before.size === 0) return undefined
  let removed = 0
  for (const k of before) if (!after.has(k)) removed++
  return removed > maxShare * before.size
    ? new ShrinkRefused({ list, active: before.size, removed, maxShare })
    : undefined
}

/** A version with what it contained, as kept for rebuilding a list. */
export interface KeptVersion {
  readonly info: VersionInfo
  readonly records: ReadonlyArray<ParsedRecord>
}

/** The keys of the records in force after the last version (no de-listing date). */
export const activeKeysOf = (records: ReadonlyArray<IntelRecord>): ReadonlySet<string> =>
  new Set(records.filter((r) => r.delistedAt === undefined).map(recordKey))

/** Applies one version to a list's records: the step of every commit, and of every rebuild. */
export const apply = (
  records: ReadonlyArray<IntelRecord>,
  info: VersionInfo,
  staged: ReadonlyArray<ParsedRecord>
): { readonly records: ReadonlyArray<IntelRecord>; readonly plan: CommitPlan } => {
  const plan = planCommit(info, activeKeysOf(records), staged)
  const closing = new Set(plan.close)
  const kept = plan.replaceAll
    ? []
    : records.map((r) =>
        r.delistedAt === undefined && closing.has(recordKey(r)) ? { ...r, delistedAt: info.asOf } : r
      )
  return { records: [...kept, ...plan.insert], plan }
}

/**
 * A list's records rebuilt from its versions in effect: ordered by date (versions of one date in the order
 * given, which callers make the order of ingest) and applied one by one, so the result is what ingesting them in
 * date order gives, whatever order they arrived in.
 */
export const rebuild = (versions: ReadonlyArray<KeptVersion>): ReadonlyArray<IntelRecord> =>
  inDateOrder(versions).reduce<ReadonlyArray<IntelRecord>>(
    (records, v) => apply(records, v.info, v.records).records,
    []
  )

/**
 * What a rebuild changed, counted in listing intervals: `added` intervals it made or reshaped, of which
 * `delisted` have an end, and `unchanged` ones it kept as they were.
 */
export const intervalChanges = (
  before: ReadonlyArray<IntelRecord>,
  after: ReadonlyArray<IntelRecord>
): { readonly added: number; readonly delisted: number; readonly unchanged: number } => {
  const interval = (r: IntelRecord) => `${recordKey(r)}\u0000${r.listedAt}\u0000${r.delistedAt ?? ""}`
  const old = new Set(before.map(interval))
  const changed = after.filter((r) => !old.has(interval(r)))
  return {
    added: changed.length,
    delisted: changed.filter((r) => r.delistedAt !== undefined).length,
    unchanged: after.length - changed.length
  }
}

/** Versions ordered by date, keeping the given order within a date. */
export const inDateOrder = <V extends { readonly info: { readonly asOf: string } }>(
  versions: ReadonlyArray<V>
): ReadonlyArray<V> =>
  versions
    .map((v, i) => [v, i] as const)
    .sort(([a, i], [b, j]) => (a.info.asOf < b.info.asOf ? -1 : a.info.asOf > b.info.asOf ? 1 : i - j))
    .map(([v]) => v)

/**
 * Plans a commit from the list's currently active keys and the staged records: the one rule every adapter
 * applies inside its atomic step. Duplicate staged records (same key) count once.
 */
export const planCommit = (
  info: VersionInfo,
  activeKeys: ReadonlySet<string>,
  staged: ReadonlyArray<ParsedRecord>
): CommitPlan => {
  const seen = new Map<string, ParsedRecord>()
  for (const r of staged) if (!seen.has(recordKey(r))) seen.set(recordKey(r), r)
  if (info.mode === "history") {
    const insert = [...seen.values()].map((r) => toRecord(info, r))
    return {
      insert,
      close: [],
      replaceAll: true,
      added: insert.filter((r) => r.delistedAt === undefined).length,
      delisted: insert.filter((r) => r.delistedAt !== undefined).length,
      unchanged: 0
    }
  }
  const insert = [...seen.entries()].filter(([k]) => !activeKeys.has(k)).map(([, r]) => toRecord(info, r))
  const close = [...activeKeys].filter((k) => !seen.has(k))
  return {
    insert,
    close,
    replaceAll: false,
    added: insert.length,
    delisted: close.length,
    unchanged: seen.size - insert.length
  }
}
