/** Port: the store of intelligence records, filled by atomic, versioned list ingests and read by address. */
import { Context, type Effect, Schema } from "effect"
import type { IntelRecord, ParsedRecord } from "./Intel.ts"
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
export interface ListStatus {
  readonly list: string
  readonly source: string
  readonly kind: string
  /** The list's own version number: 1 for its first committed version, then 2, 3… (refused or discarded attempts use none). */
  readonly version: number
  readonly asOf: string
  readonly contentHash: string
  readonly origin: string
  readonly ingestedAt: string
  /** Records in force as of the list's current version. */
  readonly active: number
  /** Records kept as history (de-listed). */
  readonly delisted: number
}

/** What deleting a list removed: its records (active and de-listed) and the version that was in force. */
export interface RemoveOutcome {
  readonly list: string
  /** The list's own number of the version that was in force. */
  readonly version: number
  readonly records: number
}

/** What committing a version changed. */
export interface CommitOutcome {
  readonly list: string
  /** The list's own version number: 1 for its first committed version, then 2, 3… (refused or discarded attempts use none). */
  readonly version: number
  readonly added: number
  readonly delisted: number
  readonly unchanged: number
}

/**
 * A list version is written in three steps so that a huge input never sits in memory and a failed or
 * interrupted ingest changes nothing: `stage` opens a version, `append` adds batches to it, and `commit`
 * applies it to the list in one atomic step (or `discard` drops it). Readers only ever see committed versions.
 */
export class IntelIndex extends Context.Service<
  IntelIndex,
  {
    /** Opens a new staged version of `info.list`; any earlier staged, uncommitted version of it is dropped. */
    readonly stage: (info: StageInfo) => Effect.Effect<number, StoreError.StoreError>
    /** Adds records to a staged version. */
    readonly append: (
      version: number,
      records: ReadonlyArray<ParsedRecord>
    ) => Effect.Effect<void, StoreError.StoreError>
    /** Applies a staged version, completed with its date and hash, to its list atomically and makes it current. */
    readonly commit: (
      version: number,
      completion: Completion
    ) => Effect.Effect<CommitOutcome, StoreError.StoreError | ShrinkRefused>
    /**
     * Deletes a list: its records and its place among the lists, in one atomic step, recorded with `at` (an ISO
     * instant). Its versions stay as history, so a list made again under the name numbers on from them.
     * `undefined` when there is no such list. Lookups and caches see the change at once (`generation` moves).
     */
    readonly remove: (list: string, at: string) => Effect.Effect<RemoveOutcome | undefined, StoreError.StoreError>
    /** Drops a staged version. */
    readonly discard: (version: number) => Effect.Effect<void, StoreError.StoreError>
    /** Every record ever ingested for these normalized addresses, de-listed ones included. */
    readonly lookup: (
      addresses: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<IntelRecord>, StoreError.StoreError>
    /** The committed lists, by name. */
    readonly lists: Effect.Effect<ReadonlyArray<ListStatus>, StoreError.StoreError>
    /**
     * A number that changes whenever a commit changes what `lookup` can return (0 before any commit), also when
     * another process committed; caches of screening results compare it to know they are stale.
     */
    readonly generation: Effect.Effect<number, StoreError.StoreError>
  }
>()("@vigil/core/IntelIndex") {}

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

/** How many of the currently active records a plan leaves no longer active (de-listed or gone). */
export const removedActive = (plan: CommitPlan, activeKeys: ReadonlySet<string>): number => {
  if (!plan.replaceAll) return plan.close.length
  const stillActive = new Set(plan.insert.filter((r) => r.delistedAt === undefined).map(recordKey))
  let removed = 0
  for (const k of activeKeys) if (!stillActive.has(k)) removed++
  return removed
}

/** The refusal of a plan under `completion.maxDelistedShare`, or undefined when it may be applied. */
export const shrinkRefusal = (
  list: string,
  plan: CommitPlan,
  activeKeys: ReadonlySet<string>,
  completion: Completion
): ShrinkRefused | undefined => {
  const maxShare = completion.maxDelistedShare
  if (maxShare === undefined || activeKeys.size === 0) return undefined
  const removed = removedActive(plan, activeKeys)
  return removed > maxShare * activeKeys.size
    ? new ShrinkRefused({ list, active: activeKeys.size, removed, maxShare })
    : undefined
}

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
