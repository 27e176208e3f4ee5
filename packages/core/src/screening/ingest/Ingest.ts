/** Runs one list ingest: streams input through a parser into a staged version, then commits it atomically. */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Effect, Exit, Schema, Stream } from "effect"
import type { ParsedRecord } from "../Intel.ts"
import { IntelIndex, type VersionMode } from "../IntelIndex.ts"
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
}

/** The input could not be ingested; nothing was changed. */
export class IngestFailed extends Schema.TaggedError<IngestFailed>()("IngestFailed", {
  list: Schema.String,
  message: Schema.String
}) {}

const batchSize = 2_000

/**
 * Ingests `input` (raw bytes, e.g. a file's contents) as a new version of `request.list`. Records are
 * appended in batches as the parser completes them; if anything fails or the fiber is interrupted the
 * staged version is discarded, so the previous version stays in force untouched. An input identical to the
 * current version changes nothing; a version dated before the current one is refused.
 */
export const run = Effect.fnUntraced(function* <E>(
  request: Request,
  parser: Parser,
  input: Stream.Stream<Uint8Array, E>,
  onProgress: (bytes: number, records: number) => void = () => {}
): Effect.fn.Return<Outcome, IngestFailed | StoreError.StoreError | E, IntelIndex> {
  const index = yield* IntelIndex
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
  const version = yield* index.stage({
    list: request.list,
    source: request.source,
    kind: request.kind,
    mode: request.mode,
    origin: request.origin,
    ingestedAt
  })
  const hash = sha256.create()
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
    return batch.length === 0 ? Effect.void : index.append(version, batch)
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
    const contentHash = bytesToHex(hash.digest())
    const stated = parser.asOf()
    const asOf = request.asOf ?? stated ?? Instant.day(now)
    const dated = request.asOf !== undefined ? "given" : stated !== undefined ? "data" : "ingest"
    const base = { list: request.list, asOf, dated, records, skipped: parser.skipped(), contentHash } as const
    if (current !== undefined && current.contentHash === contentHash) {
      yield* index.discard(version)
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
    if (current !== undefined && asOf < current.asOf) {
      return yield* new IngestFailed({
        list: request.list,
        message: `${request.origin} is dated ${asOf}, older than the list's current version (${current.asOf}); nothing changed`
      })
    }
    if (records === 0 && request.allowShrink !== true) {
      const skipped = parser.skipped()
      return yield* new IngestFailed({
        list: request.list,
        message: `${request.origin} holds no valid record (${skipped.count} skipped${skipped.examples[0] === undefined ? "" : `, first: ${skipped.examples[0]}`}); refused, the list is unchanged (--allow-shrink to accept an empty version)`
      })
    }
    const outcome = yield* index
      .commit(version, {
        asOf,
        contentHash,
        ...(request.allowShrink === true
          ? {}
          : { maxDelistedShare: request.maxDelistedShare ?? defaultMaxDelistedShare })
      })
      .pipe(
        Effect.catchTag("ShrinkRefused", (refused) =>
          Effect.fail(
            new IngestFailed({
              list: request.list,
              message: `${request.origin}: ${refused.message}; refused, the list is unchanged (--allow-shrink if this is intended)`
            })
          )
        )
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
    Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.ignore(index.discard(version))))
  )
})
