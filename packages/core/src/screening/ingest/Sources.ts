/**
 * The sources a host can ingest, named by kind, and how a source becomes an ingest request and its parser:
 * the defaults (list names, publishers, version modes) every host applies alike, the CLI and the facade.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Effect, Schema } from "effect"
import { Instant } from "../../kernel/index.ts"
import { Authority, Category } from "../Intel.ts"
import type { Outcome, Request } from "./Ingest.ts"
import * as AddressList from "./AddressList.ts"
import * as GraphSense from "./GraphSense.ts"
import * as Labels from "./Labels.ts"
import * as OfacSdnCsv from "./OfacSdnCsv.ts"
import * as OfacSdnXml from "./OfacSdnXml.ts"
import type { Parser } from "./Parser.ts"
import * as UsdtEvents from "./UsdtEvents.ts"

/** The kinds of input that can be ingested. */
export const kinds = ["ofac-sdn-xml", "ofac-sdn-csv", "usdt-events", "graphsense", "labels", "address-list"] as const
export type Kind = (typeof kinds)[number]

/**
 * The authority a new list of each kind gets unless the operator declares one: the issuers' own lists are
 * official, reviewed third-party packs and the operator's own lists curated, label sets collected from
 * explorers and the like scraped.
 */
export const defaultAuthority: { readonly [K in Kind]: Authority } = {
  "ofac-sdn-xml": "official",
  "ofac-sdn-csv": "official",
  "usdt-events": "official",
  graphsense: "curated",
  labels: "scraped",
  "address-list": "curated"
}

/**
 * Whether a list of this kind carries its whole history in its own data: every listing and de-listing with the
 * day it happened, since the list began (an issuer's on-chain event log, read from the contract's deployment).
 * Such a list answers for any day, also before its first stored version; a snapshot (a sanctions file, a label
 * set) says nothing of the entries it dropped before it was taken, so before its oldest stored version it cannot
 * vouch that an address was not on it.
 */
export const wholeHistory: { readonly [K in Kind]: boolean } = {
  "ofac-sdn-xml": false,
  "ofac-sdn-csv": false,
  "usdt-events": true,
  graphsense: false,
  labels: false,
  "address-list": false
}

/**
 * The kind of a freeze log read from its token contract by `vigil refresh` (USDC's), which is not ingested from a
 * file: like an event export, it carries its whole history.
 */
export const freezeLogKind = "stablecoin-freezes"

/** {@link wholeHistory} for a stored list's kind (a kind this code does not know is taken as a snapshot). */
export const keepsWholeHistory = (kind: string): boolean =>
  kind === freezeLogKind || ((kinds as ReadonlyArray<string>).includes(kind) && wholeHistory[kind as Kind])

/** A calendar day given as YYYY-MM-DD. */
export const IsoDate = Instant.IsoDate

/** One source to ingest: a kind, a file or URL, and what the data does not say itself. */
export const SourceSpec = Schema.Struct({
  kind: Schema.Literals(kinds),
  input: Schema.NonEmptyString,
  list: Schema.optionalKey(Schema.NonEmptyString),
  source: Schema.optionalKey(Schema.NonEmptyString),
  category: Schema.optionalKey(Category),
  label: Schema.optionalKey(Schema.NonEmptyString),
  format: Schema.optionalKey(Schema.Literals(Labels.formats)),
  asOf: Schema.optionalKey(IsoDate),
  /** Accept a version with no valid record, or one that de-lists more than `maxDelistedShare` of the list. */
  allowShrink: Schema.optionalKey(Schema.Boolean),
  /** Replace a list that holds another kind of data or another publisher's (refused otherwise). */
  replace: Schema.optionalKey(Schema.Boolean),
  /** The list's authority (official, curated, scraped); default: the list keeps its own, a new one its kind's. */
  authority: Schema.optionalKey(Authority),
  /** Add a snapshot dated before the list's current version to its history. */
  backfill: Schema.optionalKey(Schema.Boolean),
  /** The largest share (0–1) of the list's active records this version may de-list; default 0.2. */
  maxDelistedShare: Schema.optionalKey(
    Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }, { message: "must be a share from 0 to 1" }))
  )
})
export type SourceSpec = typeof SourceSpec.Type

/** A source that cannot be ingested as given (e.g. an address list without a list name or category). */
export class InvalidSource extends Schema.TaggedError<InvalidSource>()("InvalidSource", {
  message: Schema.String
}) {}

/** The last part of a path or URL, without `pattern`. */
const stem = (input: string, pattern: RegExp) => (input.split(/[\\/]/).pop() ?? input).replace(pattern, "")

/**
 * A list name derived from an input's file name, made unique to the input: two files both named `accounts.json`
 * (in different folders, or fetched from different URLs) can never land in one list and de-list each other.
 * `originKey` identifies the input (an absolute path or a URL); ingesting the same input again keeps the name.
 */
const derivedName = (prefix: string, input: string, pattern: RegExp, originKey: string) =>
  `${prefix}-${stem(input, pattern)}-${bytesToHex(sha256(utf8ToBytes(originKey))).slice(0, 8)}`

/** The ingest request and parser of a source. */
export const plan = (
  spec: SourceSpec,
  originKey: string = spec.input
): Effect.Effect<{ request: Request; parser: Parser }, InvalidSource> => {
  const common = {
    kind: spec.kind,
    origin: spec.input,
    ...(spec.asOf === undefined ? {} : { asOf: spec.asOf }),
    ...(spec.allowShrink === undefined ? {} : { allowShrink: spec.allowShrink }),
    ...(spec.maxDelistedShare === undefined ? {} : { maxDelistedShare: spec.maxDelistedShare }),
    ...(spec.replace === undefined ? {} : { replace: spec.replace }),
    ...(spec.authority === undefined ? {} : { authority: spec.authority }),
    ...(spec.backfill === undefined ? {} : { backfill: spec.backfill }),
    defaultAuthority: defaultAuthority[spec.kind]
  }
  switch (spec.kind) {
    case "ofac-sdn-xml":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "ofac-sdn", source: spec.source ?? "OFAC", mode: "snapshot" },
        parser: OfacSdnXml.make()
      })
    case "ofac-sdn-csv":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "ofac-sdn-csv", source: spec.source ?? "OFAC", mode: "snapshot" },
        parser: OfacSdnCsv.make()
      })
    case "usdt-events":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "usdt-ethereum", source: spec.source ?? "Tether", mode: "history" },
        parser: UsdtEvents.make({ label: spec.label ?? "USDT" })
      })
    case "graphsense":
      return Effect.succeed({
        request: {
          ...common,
          list: spec.list ?? derivedName("graphsense", spec.input, /\.ya?ml$/i, originKey),
          source: spec.source ?? "GraphSense",
          mode: "snapshot"
        },
        parser: GraphSense.make()
      })
    case "labels": {
      const list = spec.list ?? derivedName("labels", spec.input, /\.(json|csv)$/i, originKey)
      return Effect.succeed({
        request: { ...common, list, source: spec.source ?? list, mode: "snapshot" },
        parser: Labels.make({
          list,
          ...(spec.format === undefined ? {} : { format: spec.format }),
          ...(spec.category === undefined ? {} : { category: spec.category })
        })
      })
    }
    case "address-list":
      if (spec.list === undefined || spec.category === undefined) {
        return Effect.fail(new InvalidSource({ message: "address-list needs --list NAME and --category CATEGORY" }))
      }
      return Effect.succeed({
        request: { ...common, list: spec.list, source: spec.source ?? spec.list, mode: "snapshot" },
        parser: AddressList.make({
          list: spec.list,
          category: spec.category,
          ...(spec.label === undefined ? {} : { label: spec.label })
        })
      })
  }
}

/** One line saying what an ingest did. */
export const summary = (origin: string, o: Outcome): string => {
  const skipped = o.skipped.count === 0 ? "" : `; skipped ${o.skipped.count} (first: ${o.skipped.reasons[0] ?? ""})`
  return o.status === "unchanged"
    ? `${o.list}: unchanged, ${origin} is identical to the current version${skipped}`
    : `${o.list} (${authority(o)}): version ${o.version} as of ${o.asOf}${o.backfilled ? ", added to its history (backfill)" : ""} from ${origin}: ${o.records} records (${o.backfilled ? "listing intervals made or reshaped" : "added"} ${o.added}, de-listed ${o.delisted}, unchanged ${o.unchanged})${skipped}${undated(o)}`
}

const authority = (o: Outcome) => (o.authorityWas === undefined ? o.authority : `${o.authorityWas} -> ${o.authority}`)

/** What an undated source's summary says: its listing dates are unknown, and which date stands in for them. */
const undated = (o: Outcome) =>
  o.dated === "ingest"
    ? `; the source states no date: listing dates unknown, the ingest date ${o.asOf} stands in (--as-of sets it)`
    : ""
