/** The screening service: one address (or many) → the v3 intelligence result, read from the IntelIndex. */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Chain, Instant, type StoreError } from "../kernel/index.ts"
import * as Calibration from "./Calibration.ts"
import * as Intel from "./Intel.ts"
import type * as IntelResult from "./IntelResult.ts"
import { IntelIndex, type ListStatus } from "./IntelIndex.ts"
import * as Scoring from "./Scoring.ts"
import * as SystemAddresses from "./SystemAddresses.ts"
import { keepsWholeHistory } from "./ingest/Sources.ts"

/** The address given is not a valid address (of the requested network, when one was named). */
export class InvalidAddress extends Schema.TaggedError<InvalidAddress>()("InvalidAddress", {
  address: Schema.String,
  message: Schema.String
}) {}

/** Options of one screening. */
export interface Options {
  /** Network the address must be valid on; `auto` (default) accepts any. */
  readonly chain?: Chain.Network | "auto"
  /** Screen against the lists as they were on this date (ISO `YYYY-MM-DD`); default today (UTC). */
  readonly asOf?: string
  /** Add `details`: the raw records and the score breakdown. */
  readonly includeDetails?: boolean
  /**
   * Apply the calibration model of `asOf` where it grades the answer (`enable_agentic`); default true. False gives
   * the rule-based answer.
   */
  readonly agentic?: boolean
  /** The detection the caller already made of this address (for `chain`), so the checksum is not verified twice. */
  readonly detected?: Chain.Valid
}

/** The v3 result (spec §2.1), with `details` when asked for; its Schema is {@link IntelResult.IntelResult}. */
export type Result = IntelResult.IntelResult

/** A scored signal as the wire shows it. */
export const wireSignal = (s: Scoring.Signal): IntelResult.Signal => ({
  type: s.type,
  weight: s.weight,
  source: s.source,
  polarity: s.polarity,
  summary: s.summary,
  evidence: s.evidence
})

/** The summary of each band's recommendation. */
export const summaries: { readonly [B in Scoring.Band]: string } = {
  critical: "Critical risk: block transactions with this address.",
  high: "High risk: hold for manual compliance review before proceeding.",
  medium: "Medium risk: proceed with enhanced monitoring.",
  low: "Low risk: standard processing, with caution.",
  minimal: "No risk found in the intelligence consulted: standard processing."
}

const describe = (a: Scoring.Assessment): string =>
  a.signals.length === 0
    ? "No record in any list consulted names this address."
    : a.signals
        .map(
          (s) =>
            `${s.type} (${s.polarity === "risk" ? `weight ${s.weight}` : "positive"}) from ${s.evidence.list} [${s.evidence.reference}] listed ${s.evidence.listedAt}${s.evidence.entityName ? `, ${s.evidence.entityName}` : ""}`
        )
        .join("; ")

/** What the index answered for an address: its records, or that it could not be asked. */
interface Found {
  readonly complete: boolean
  readonly records: ReadonlyArray<Intel.IntelRecord>
}

const unavailable: Found = { complete: false, records: [] }

/** What screening needs to know of the lists in force: how many, and each one's authority. */
interface Catalog {
  readonly count: number
  readonly authority: ReadonlyMap<string, Intel.Authority>
  readonly official: ReadonlyArray<ListStatus>
  /** Lists the store's verification found altered: while there is one, no answer is complete. */
  readonly damaged: ReadonlyArray<ListStatus>
  /**
   * Snapshot lists (no whole history of their own): before the oldest of their versions they cannot vouch, and
   * between two versions they cannot date a change.
   */
  readonly snapshots: ReadonlyArray<Pick<ListStatus, "list" | "since" | "versions">>
  /** Every list's version dates, oldest first. */
  readonly versions: ReadonlyMap<string, ReadonlyArray<string>>
  /** The stored calibration models, oldest first. */
  readonly models: ReadonlyArray<Calibration.Stored>
}

const emptyCatalog: Catalog = {
  count: 0,
  authority: new Map(),
  official: [],
  damaged: [],
  snapshots: [],
  versions: new Map(),
  models: []
}

/** The date of `list`'s version in force on `asOf` (its newest dated that day or before), when there is one. */
export const versionOn = (catalog: Pick<Catalog, "versions">, list: string, asOf: string): string | undefined =>
  catalog.versions
    .get(list)
    ?.filter((d) => d <= asOf)
    .at(-1)

/**
 * The snapshot lists that cannot vouch for `asOf`: it precedes their oldest stored version, so an entry they
 * de-listed before then is not known (an address absent from them may have been on them that day).
 */
export const blindOn = (catalog: Pick<Catalog, "snapshots">, asOf: string) =>
  catalog.snapshots.filter((l) => asOf < l.since)

/** A record whose state on a day its list's stored versions cannot tell, with the two versions around the day. */
interface Undated {
  readonly record: Intel.IntelRecord
  readonly after: string
  readonly before: string
  /** Whether the intervals have it in force on the day (its end may have come earlier) or not (its start). */
  readonly shownInForce: boolean
}

/**
 * The records of `records` whose state on `asOf` the stored history cannot tell: a snapshot list dates a change by
 * the first version that shows it, so a record that ended (or began) at a version has an unknown state on a day
 * strictly between that version and the one before it. A record whose start the source states is not in doubt
 * unless that date is itself a version's.
 */
export const undatedOn = (
  catalog: Pick<Catalog, "snapshots">,
  records: ReadonlyArray<Intel.IntelRecord>,
  asOf: string
): ReadonlyArray<Undated> => {
  if (records.length === 0) return []
  const versions = new Map(catalog.snapshots.map((l) => [l.list, l.versions]))
  const around = (list: string, change: string) => {
    const dates = versions.get(list)
    if (dates === undefined || !dates.includes(change)) return undefined
    const before = dates.filter((d) => d < change).at(-1)
    return before !== undefined && before < asOf && asOf < change ? before : undefined
  }
  return records.flatMap((record): ReadonlyArray<Undated> => {
    const ended = record.delistedAt === undefined ? undefined : around(record.list, record.delistedAt)
    if (ended !== undefined && record.listedAt <= asOf)
      return [{ record, after: ended, before: record.delistedAt!, shownInForce: true }]
    const began = record.listedAt > asOf ? around(record.list, record.listedAt) : undefined
    return began === undefined ? [] : [{ record, after: began, before: record.listedAt, shownInForce: false }]
  })
}

/** What an answer says of a record the stored history cannot date. */
const undatedWarning = (asOf: string) => (u: Undated) =>
  `${u.record.list}: this address's listing ${u.shownInForce ? "ended" : "began"} between its versions of ${u.after} and ${u.before}, so whether it was listed on ${asOf} is not known`

/** At most three names, then how many more. */
const someOf = (names: ReadonlyArray<string>) =>
  names.length <= 3 ? names.join(", ") : `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`

/**
 * What an answer says of the lists that cannot vouch for its date: one line per oldest-version date, with the count
 * and a few names, so that 68 label lists that start on the same day are one line, not 68.
 */
const blindWarnings = (asOf: string, blind: ReadonlyArray<Pick<ListStatus, "list" | "since">>) => {
  const bySince = new Map<string, Array<string>>()
  for (const l of blind) bySince.set(l.since, [...(bySince.get(l.since) ?? []), l.list])
  return [...bySince]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([since, lists]) =>
      lists.length === 1
        ? `${lists[0]} has no stored version on or before ${asOf} (its oldest is of ${since}): an entry it de-listed before ${since} is not known, so this answer cannot say the address was not on it on ${asOf}`
        : `${lists.length} lists have no stored version on or before ${asOf} (their oldest is of ${since}): ${someOf(lists.sort())}; an entry they de-listed before ${since} is not known, so this answer cannot say the address was not on them on ${asOf}`
    )
}

/**
 * A record as an answer shows it: a snapshot list dates a de-listing by the first version without the record, which
 * is not when it happened, so such a record says between which versions it ended (`delistedBetween`) and gives
 * `delistedAt` only where the source states it (a history list's events).
 */
export const dated =
  (catalog: Pick<Catalog, "snapshots">) =>
  <R extends { readonly list: string; readonly listedAt: string; readonly delistedAt?: string }>(
    record: R
  ): R | (Omit<R, "delistedAt"> & { readonly delistedBetween: Intel.DelistedBetween }) => {
    if (record.delistedAt === undefined) return record
    const versions = catalog.snapshots.find((l) => l.list === record.list)?.versions
    if (versions === undefined) return record
    const { delistedAt, ...rest } = record
    const lastListed = versions.filter((d) => d < delistedAt).at(-1) ?? record.listedAt
    return { ...rest, delistedBetween: { lastListed, firstUnlisted: delistedAt } }
  }

/** A list the index no longer names (deleted since the lookup) is taken at the weakest authority. */
const authorityIn = (catalog: Catalog) => (list: string) => catalog.authority.get(list) ?? "scraped"

/** How the official lists a third-party sanctions claim was checked against read on `asOf`. */
export const officialLists = (official: ReadonlyArray<Pick<ListStatus, "list" | "asOf" | "since">>, asOf: string) => {
  const inForce = official.filter((l) => l.since <= asOf)
  if (inForce.length === 0) return `any official list: none is loaded for ${asOf}`
  const named = inForce
    .slice(0, 3)
    .map((l) => (l.asOf <= asOf ? `${l.list} of ${l.asOf}` : `${l.list} as it stood on ${asOf}`))
  const more = inForce.length > 3 ? ` and ${inForce.length - 3} more` : ""
  return `the official ${inForce.length === 1 ? "list" : "lists"} in force on ${asOf} (${named.join(", ")}${more})`
}

/** Whether an assessment makes the address critical. */
const critical = (a: Pick<Scoring.Assessment, "band">) => a.band === "critical"

/** The assessment of what is certain on `asOf`: the records in force, less those the history cannot date. */
const certainly = (
  inForce: ReadonlyArray<Intel.IntelRecord>,
  undated: ReadonlyArray<Undated>,
  catalog: Catalog,
  asOf: string
) => {
  const doubtful = new Set(undated.map((u) => u.record))
  const certain = inForce.filter((r) => !doubtful.has(r))
  return Scoring.assess(
    certain,
    certain.length === 0
      ? { authorityOf: () => "scraped", officialLists: "" }
      : { authorityOf: authorityIn(catalog), officialLists: officialLists(catalog.official, asOf) }
  )
}

/** The v3 result of one screening. */
const result = (
  address: string,
  detected: Chain.Valid,
  asOf: string,
  found: Found,
  catalog: Catalog,
  started: number,
  finished: number,
  includeDetails: boolean,
  agentic: boolean
): Result => {
  const sources = catalog.count
  // A list whose stored records were altered may have lost the very record that names this address; a snapshot
  // taken after `asOf` may have dropped it before it was taken.
  const blind = found.complete ? blindOn(catalog, asOf) : []
  const undated = found.complete ? undatedOn(catalog, found.records, asOf) : []
  const complete =
    found.complete && sources > 0 && catalog.damaged.length === 0 && blind.length === 0 && undated.length === 0
  // The address's own evidence first, then what the lists cannot vouch for.
  const warnings = [
    ...(detected.warning === undefined ? [] : [detected.warning]),
    ...undated.map(undatedWarning(asOf)),
    ...blindWarnings(asOf, blind)
  ]
  const shown = dated(catalog)
  const metadataOf = (said: ReadonlyArray<string>): Result["metadata"] => ({
    version: "v3",
    latency_ms: finished - started,
    sources_used: sources,
    is_complete: complete,
    timestamp: Instant.iso(finished),
    chain: { family: detected.family, networks: detected.networks, normalized: detected.normalized },
    as_of: asOf,
    ...(said.length === 0 ? {} : { warnings: said })
  })
  const inForce = found.records.filter((r) => Intel.activeOn(r, asOf))
  const system = SystemAddresses.of(detected.normalized)
  if (system !== undefined && found.complete) {
    // No one holds its key: what the lists say of it is not a verdict on a holder, so it is not scored.
    const lists = [...new Set(inForce.map((r) => r.list))].sort()
    const explained = SystemAddresses.explanation(system, lists)
    return {
      address: detected.family === "evm" ? detected.normalized : address,
      score: 0,
      risk_level: "minimal",
      // Sure of its action whatever the lists hold: what the address is does not depend on them.
      confidence: 1,
      flags: { sanctioned: false, blacklisted: false, threat_actor: false, smart_money: false },
      entity: SystemAddresses.entity(system),
      signals: [],
      labels: [],
      recommendation: {
        action: "REVIEW",
        summary: "System address: no one holds its key; anything sent to it is lost. Do not send funds to it.",
        details: explained,
        ai_enhanced: false
      },
      metadata: metadataOf([explained, ...warnings]),
      ...(includeDetails
        ? { details: { records: found.records, breakdown: [], formula: "a system address is not scored" } }
        : {})
    }
  }
  const a = Scoring.assess(
    inForce,
    inForce.length === 0
      ? { authorityOf: () => "scraped", officialLists: "" }
      : { authorityOf: authorityIn(catalog), officialLists: officialLists(catalog.official, asOf) }
  )
  // The model of the day grades whenever the store answered intact: a list ingested since (which cannot vouch for
  // the day) makes the answer incomplete, not ungraded.
  const model =
    found.complete && catalog.damaged.length === 0 && agentic && inForce.length > 0
      ? Calibration.modelOn(catalog.models, asOf)
      : undefined
  const calibrated = model === undefined ? undefined : Calibration.apply(a, inForce, authorityIn(catalog), model, asOf)
  const score = calibrated?.score ?? a.score
  const risk = calibrated?.band ?? a.band
  return {
    // EVM addresses are case-insensitive and answered lowercase (spec §4.1); other families keep their case.
    address: detected.family === "evm" ? detected.normalized : address,
    score,
    risk_level: risk,
    // How sure the answer is of its action: how far the lists it rests on are trusted (the calibration's probability
    // is in details.calibration); nothing of an incomplete answer.
    confidence: complete ? a.confidence : 0,
    flags: a.flags,
    entity: a.entity,
    signals: a.signals.map(wireSignal).map((w) => {
      const listAsOf = versionOn(catalog, w.evidence.list, asOf)
      return { ...w, evidence: { ...shown(w.evidence), ...(listAsOf === undefined ? {} : { listAsOf }) } }
    }),
    labels: a.labels,
    recommendation: complete
      ? calibrated === undefined
        ? { action: a.action, summary: summaries[a.band], details: describe(a), ai_enhanced: false }
        : {
            action: calibrated.action,
            summary: summaries[calibrated.band],
            details: `${describe(a)}. ${calibrated.sentence}`,
            ai_enhanced: true
          }
      : {
          action: critical(calibrated ?? (undated.length === 0 ? a : certainly(inForce, undated, catalog, asOf)))
            ? "BLOCK"
            : "REVIEW",
          summary: "Intelligence could not be fully consulted: do not treat this address as clean; review it manually.",
          details: !found.complete
            ? "The intelligence store did not answer, so no list was checked."
            : catalog.damaged.length > 0
              ? `The store's verification found ${catalog.damaged.map((l) => l.list).join(", ")} altered, so a listing may be missing from this answer.`
              : undated.length > 0 || blind.length > 0
                ? [
                    ...(undated.length === 0
                      ? []
                      : [
                          `${asOf} falls between two stored versions of ${[...new Set(undated.map((u) => `${u.record.list} (${u.after} and ${u.before})`))].join(", ")}, and this address's listing changed between them: ingest a version dated in between with --backfill to answer for this date.`
                        ]),
                    ...(blind.length === 0
                      ? []
                      : [
                          `${asOf} precedes the oldest stored version of ${blind.length === 1 ? `${blind[0]!.list} (${blind[0]!.since})` : `${blind.length} lists (${someOf(blind.map((l) => l.list).sort())})`}, so a listing removed before then cannot be seen; ingest an older version with --backfill to answer for this date.`
                        ]),
                    ...(calibrated === undefined ? [] : [calibrated.sentence])
                  ].join(" ")
                : "No intelligence list has been ingested yet, so nothing was checked.",
          ai_enhanced: calibrated !== undefined
        },
    metadata: metadataOf(warnings),
    ...(includeDetails
      ? {
          details: {
            records: found.records.map(shown),
            breakdown: a.signals
              .filter((s) => s.polarity === "risk")
              .map((s) => ({
                type: s.type,
                weight: s.weight,
                contribution: s.contribution,
                list: s.evidence.list,
                reference: s.evidence.reference
              })),
            formula: `score = w1 + (100 - w1) * (1 - prod(1 - ${Scoring.corroboration} * wi / 100)), weights strongest first`,
            ...(calibrated === undefined
              ? {}
              : {
                  calibration: {
                    model: calibrated.model,
                    model_as_of: calibrated.modelAsOf,
                    fitted_at: calibrated.fittedAt,
                    probability: calibrated.probability,
                    rule_score: calibrated.ruleScore,
                    score: calibrated.score
                  }
                })
          }
        }
      : {})
  }
}

/** Screens addresses against the IntelIndex. */
export class Screening extends Context.Service<
  Screening,
  {
    readonly screen: (address: string, options?: Options) => Effect.Effect<Result, InvalidAddress>
    /** The lists screening consults, with their versions and state. */
    readonly lists: Effect.Effect<ReadonlyArray<ListStatus>, StoreError.StoreError>
    /** The stored calibration models, oldest first (read again only when a commit changed the index). */
    readonly models: Effect.Effect<ReadonlyArray<Calibration.Stored>>
  }
>()("@vigil/core/Screening") {
  /** The service over an IntelIndex. */
  static readonly layer: Layer.Layer<Screening, never, IntelIndex> = Layer.effect(Screening)(
    Effect.gen(function* () {
      const index = yield* IntelIndex
      /** The lists in force, read again only when a commit changed the index. */
      let known: { readonly generation: number; readonly catalog: Catalog } | undefined
      const current = Effect.flatMap(index.generation, (generation) =>
        known?.generation === generation
          ? Effect.succeed(known.catalog)
          : Effect.zipWith(index.lists, index.models, (lists, models) => {
              const catalog: Catalog = {
                count: lists.length,
                authority: new Map(lists.map((l) => [l.list, l.authority])),
                official: lists.filter((l) => l.authority === "official"),
                damaged: lists.filter((l) => l.problem !== undefined),
                snapshots: lists.filter((l) => !keepsWholeHistory(l.kind)),
                versions: new Map(lists.map((l) => [l.list, l.versions])),
                models
              }
              known = { generation, catalog }
              return catalog
            })
      )

      const catalog = Effect.orElseSucceed(current, () => emptyCatalog)
      const noCatalog = Effect.succeed(emptyCatalog)

      const lookup = (normalized: string) =>
        index.lookup([normalized]).pipe(
          Effect.map((records): Found => ({ complete: true, records })),
          Effect.catchTag("StoreError", (error) =>
            Effect.as(Effect.logWarning(`intelligence unavailable: ${error.message}`), unavailable)
          )
        )

      // A pipeline rather than a generator: it runs on every request.
      const screen = (address: string, options: Options = {}): Effect.Effect<Result, InvalidAddress> =>
        Effect.flatMap(Clock.currentTimeMillis, (started) => {
          const detected = options.detected ?? Chain.detect(address, options.chain ?? "auto")
          if (!detected.valid) return Effect.fail(new InvalidAddress({ address, message: detected.reason }))
          const asOf = options.asOf ?? Instant.day(started)
          return Effect.flatMap(lookup(detected.normalized), (found) =>
            Effect.flatMap(found.complete ? catalog : noCatalog, (lists) =>
              Effect.map(Clock.currentTimeMillis, (finished) =>
                result(
                  address,
                  detected,
                  asOf,
                  found,
                  lists,
                  started,
                  finished,
                  options.includeDetails === true,
                  options.agentic !== false
                )
              )
            )
          )
        })
      return Screening.of({ screen, lists: index.lists, models: Effect.map(catalog, (c) => c.models) })
    })
  )
}
