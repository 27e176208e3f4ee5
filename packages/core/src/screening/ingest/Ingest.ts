/** Runs one list ingest: streams input through a parser into a staged version, then commits it atomically. */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Context, Effect, Exit, Schema, Stream } from "effect"
import type { Authority, ParsedRecord } from "../Intel.ts"
import { Administration, AmendRefused, IntelIndex, type VersionMode, Versions } from "../IntelIndex.ts"
import { Instant, type StoreError } from "../../kernel/index.ts"
import { ParseFailure, type Parser, type Skipped } from "./Parser.ts"

/** What to ingest the input as. */
export interface Request {
  readonly kind: string
  readonly list: string
  readonly source: string
  readonly mode: VersionMode
  /** The file or URL read, for provenance. */
  readonly origin: string
  /** The version's date when the data does not state one (ISO `YYYY-MM-DD`); default: today. */
  readonly asOf?: string
  /**
   * Accept a version with no valid record, or one that de-lists more than `maxDelistedShare` of the list's
   * active records (both refused by default: a malformed or wrong refresh must never silently empty a list).
   */
  readonly allowShrink?: boolean
  /** The largest share (0–1) of the active records one version may de-list; default {@link defaultMaxDelistedShare}. */
  readonly maxDelistedShare?: number
  /** Replace a list that holds another kind of data or another publisher's (refused by default). */
  readonly replace?: boolean
  /** The list's authority as the operator declares it; absent: the list keeps its own, a new list gets `defaultAuthority`. */
  readonly authority?: Authority
  /** The authority a new list of this kind gets when the operator declares none. */
  readonly defaultAuthority: Authority
  /**
   * Add a snapshot dated before the list's current version to the list's history: the listing intervals are
   * rebuilt as if the versions had been ingested in date order (refused without it).
   */
  readonly backfill?: boolean
}

/** One version may de-list at most this share of a list's active records unless the operator allows more. */
export const defaultMaxDelistedShare = 0.2

/** What an ingest did. `unchanged`: the input was identical to the list's current version. */
export interface Outcome {
  readonly status: "committed" | "unchanged"
  readonly list: string
  readonly version?: number
  readonly asOf: string
  readonly records: number
  readonly added: number
  readonly delisted: number
  readonly unchanged: number
  readonly skipped: Skipped
  readonly contentHash: string
  /**
   * Where `asOf` came from: the data's own date, the date the operator gave, or (an undated source such as a
   * label set or the legacy CSV) the day of the ingest standing in for listing dates nobody stated.
   */
  readonly dated: "data" | "given" | "ingest"
  /** The list's authority after the ingest, and before it when this ingest changed it. */
  readonly authority: Authority
  readonly authorityWas?: Authority
  /** The version was dated before the list's current one and took its place in the history. */
  readonly backfilled: boolean
}

/** The input could not be ingested; nothing was changed. */
export class IngestFailed extends Schema.TaggedError<IngestFailed>()("IngestFailed", {
  list: Schema.String,
  message: Schema.String
}) {}

const batchSize = 2_000

/** A running SHA-256 of an input's bytes. */
export interface ContentHash {
  readonly update: (bytes: Uint8Array) => void
  /** The digest of every byte given, as lowercase hex. */
  readonly hex: () => string
}

/**
 * How an ingest hashes its input (the version's `contentHash`, what tells an unchanged input): SHA-256 in
 * JavaScript unless the host provides its own. A host's must give the same digest; Node's runs natively, which
 * matters over a 115 MB file.
 */
export const ContentHashing = Context.Reference<() => ContentHash>("@vigil/core/Ingest/ContentHashing", {
  defaultValue: () => () => {
    const hash = sha256.create()
    return { update: (bytes) => void hash.update(bytes), hex: () => bytesToHex(hash.digest()) }
  }
})

/**
 * Ingests `input` (raw bytes, e.g. a file's contents) as a new version of `request.list`. Records are
 * appended in batches as the parser completes them; if anything fails or the fiber is interrupted the
 * staged version is discarded, so the previous version stays in force untouched. An input identical to the
 * current version changes nothing; a version dated before the current one is refused unless `backfill` asks
 * for it to take its place in the list's history.
 */
export const run = Effect.fnUntraced(function* <E>(
  request: Request,
  parser: Parser,
  input: Stream.Stream<Uint8Array, E>,
  onProgress: (bytes: number, records: number) => void = () => {}
): Effect.fn.Return<Outcome, IngestFailed | StoreError.StoreError | E, IntelIndex | Versions> {
  const index = yield* IntelIndex
  const versions = yield* Versions
  const now = yield* Clock.currentTimeMillis
  const ingestedAt = Instant.iso(now)
  const current = (yield* index.lists).find((l) => l.list === request.list)
  // A list's identity is the kind of data and its publisher: another source never replaces it by accident.
  if (
    current !== undefined &&
    request.replace !== true &&
    (current.kind !== request.kind || current.source !== request.source)
  ) {
    return yield* new IngestFailed({
      list: request.list,
      message: `${request.list} holds ${current.kind} data of ${current.source} (from ${current.origin}); ${request.origin} is ${request.kind} data of ${request.source}: give it a list of its own (--list NAME), or --replace to replace this one; nothing changed`
    })
  }
  const authority = request.authority ?? current?.authority ?? request.defaultAuthority
  const version = yield* versions.stage({
    list: request.list,
    source: request.source,
    kind: request.kind,
    mode: request.mode,
    origin: request.origin,
    ingestedAt,
    authority
  })
  const hash = (yield* ContentHashing)()
  let bytes = 0
  let records = 0
  let pending: Array<ParsedRecord> = []
  const failed = (cause: unknown) =>
    new IngestFailed({
      list: request.list,
      message:
        cause instanceof ParseFailure ? `${request.origin}: ${cause.message}` : `${request.origin}: ${String(cause)}`
    })
  const flush = Effect.suspend(() => {
    const batch = pending
    pending = []
    records += batch.length
    return batch.length === 0 ? Effect.void : versions.append(version, batch)
  })
  const take = (produce: () => ReadonlyArray<ParsedRecord>) =>
    Effect.try({ try: produce, catch: failed }).pipe(
      Effect.flatMap((out) => {
        for (const r of out) pending.push(r)
        return pending.length >= batchSize ? flush : Effect.void
      })
    )

  const body = Effect.gen(function* () {
    yield* input.pipe(
      Stream.tap((chunk) =>
        Effect.sync(() => {
          hash.update(chunk)
          bytes += chunk.length
        })
      ),
      Stream.decodeText,
      Stream.runForEach((text) =>
        take(() => parser.write(text)).pipe(
          Effect.tap(() => Effect.sync(() => onProgress(bytes, records + pending.length)))
        )
      )
    )
    yield* take(() => parser.end())
    yield* flush
    const contentHash = hash.hex()
    const stated = parser.asOf()
    const asOf = request.asOf ?? stated ?? Instant.day(now)
    const dated = request.asOf !== undefined ? "given" : stated !== undefined ? "data" : "ingest"
    const backfilled = current !== undefined && asOf < current.asOf
    const base = {
      list: request.list,
      asOf,
      dated,
      records,
      skipped: parser.skipped(),
      contentHash,
      authority,
      ...(current !== undefined && current.authority !== authority ? { authorityWas: current.authority } : {}),
      backfilled
    } as const
    // The same content under the same authority changes nothing, unless it is dated before the list's current
    // version (then it can date listings back, as a backfill).
    if (
      current !== undefined &&
      current.contentHash === contentHash &&
      current.authority === authority &&
      !backfilled
    ) {
      yield* versions.discard(version)
      return { ...base, status: "unchanged", added: 0, delisted: 0, unchanged: current.active } satisfies Outcome
    }
    const today = Instant.day(now)
    const wrongDate = !Instant.isCalendarDate(asOf)
      ? "not a calendar date"
      : asOf > today
        ? `after today (${today})`
        : undefined
    if (wrongDate !== undefined) {
      return yield* new IngestFailed({
        list: request.list,
        message: `${request.origin} is dated ${asOf}, ${wrongDate}; nothing changed`
      })
    }
    if (backfilled && request.mode === "history") {
      return yield* new IngestFailed({
        list: request.list,
        message: `${request.origin} is dated ${asOf}, older than the list's current version (${current.asOf}), and a ${request.kind} input carries its whole history, so an older one adds nothing; nothing changed`
      })
    }
    if (backfilled && request.backfill !== true) {
      return yield* new IngestFailed({
        list: request.list,
        message: `${request.origin} is dated ${asOf}, older than the list's current version (${current.asOf}); --backfill adds it to the list's history; nothing changed`
      })
    }
    // The refresh guard's refusals are recorded beside the list, so whoever reads its state sees it is behind.
    const refused = (message: string) =>
      Effect.andThen(
        versions.recordRefusal(request.list, { at: ingestedAt, origin: request.origin, message }),
        Effect.fail(new IngestFailed({ list: request.list, message }))
      )
    if (records === 0 && request.allowShrink !== true) {
      const skipped = parser.skipped()
      return yield* refused(
        `${request.origin} holds no valid record (${skipped.count} skipped${skipped.reasons[0] === undefined ? "" : `, first: ${skipped.reasons[0]}`}); refused, the list is unchanged (--allow-shrink to accept an empty version)`
      )
    }
    const outcome = yield* versions
      .commit(version, {
        asOf,
        contentHash,
        ...(request.allowShrink === true
          ? {}
          : { maxDelistedShare: request.maxDelistedShare ?? defaultMaxDelistedShare })
      })
      .pipe(
        Effect.catchTags({
          ShrinkRefused: (shrink) =>
            refused(
              `${request.origin}: ${shrink.message}; refused, the list is unchanged (--allow-shrink if this is intended)`
            ),
          AmendRefused: (refused) =>
            Effect.fail(
              new IngestFailed({
                list: request.list,
                message: `${request.origin}: ${refused.message}; nothing changed`
              })
            )
        })
      )
    return {
      ...base,
      status: "committed",
      version: outcome.version,
      added: outcome.added,
      delisted: outcome.delisted,
      unchanged: outcome.unchanged
    } satisfies Outcome
  })
  return yield* body.pipe(
    Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.ignore(versions.discard(version))))
  )
})

/** Withdraws `list`'s current version (see {@link Administration.rollback}), recorded with the time now. */
export const rollback = (list: string) =>
  Effect.flatMap(Administration, (index) => Effect.flatMap(Instant.now, (at) => index.rollback(list, at)))

/**
 * Corrects the date of `list`'s version numbered `version` to `asOf` (see {@link Administration.redate}); a date that
 * is not a calendar date or lies after today is refused, as it is for an ingest.
 */
export const redate = (list: string, version: number, asOf: string) =>
  Effect.gen(function* () {
    const index = yield* Administration
    const today = yield* Instant.today
    if (!Instant.isCalendarDate(asOf))
      return yield* new AmendRefused({ list, message: `${asOf} is not a calendar date (YYYY-MM-DD)` })
    if (asOf > today) return yield* new AmendRefused({ list, message: `${asOf} is after today (${today})` })
    return yield* index.redate(list, version, asOf, yield* Instant.now)
  })
