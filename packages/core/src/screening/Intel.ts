/** Intelligence records: what a list says about an address, with the provenance an auditor needs. */
import { Schema } from "effect"
import { Chain } from "../kernel/index.ts"

/**
 * What a record says an address is. Risk categories raise the score; `exchange`, `service` and `smart_money`
 * are positive attributions that name the entity without raising it.
 */
export const Category = Schema.Literals([
  "sanctions",
  "stablecoin_blacklist",
  "hack",
  "exploit",
  "heist",
  "threat_actor",
  "phishing",
  "scam",
  "ransomware",
  "mixer",
  "darknet",
  "fraud",
  "gambling",
  "exchange",
  "service",
  "smart_money"
])

/** A record category. */
export type Category = typeof Category.Type

/**
 * How far a list's word goes, set per list: `official` is the issuer's own list (OFAC's SDN, Tether's blacklist
 * events, or a list the operator declares official), `curated` a third party that reviews what it publishes
 * (GraphSense tag packs, an operator's own list by default), `scraped` labels collected from explorers and the
 * like. Only official lists decide `flags.sanctioned`; authority also sets the confidence a record lends.
 */
export const Authority = Schema.Literals(["official", "curated", "scraped"])

/** A list's authority. */
export type Authority = typeof Authority.Type

/** Between which versions of a snapshot list a listing ended: all that is known when the source states no date. */
export const DelistedBetween = Schema.Struct({
  lastListed: Schema.String,
  firstUnlisted: Schema.String
}).annotate({
  description:
    "The listing ended after the list's version of `lastListed` (which still held it) and by its version of `firstUnlisted` (the first without it); the list states no date of its own."
})
export type DelistedBetween = typeof DelistedBetween.Type

/** One list entry about one address, as stored. Dates are ISO `YYYY-MM-DD`; `ingestedAt` is a full timestamp. */
export const IntelRecord = Schema.Struct({
  /** The list it came from, e.g. `ofac-sdn` or `usdt-ethereum`. */
  list: Schema.String,
  /** The publisher, e.g. `OFAC`, `Tether`. */
  source: Schema.String,
  /** The normalized address (see Chain.detect). */
  address: Schema.String,
  family: Chain.Family,
  category: Category,
  /** Where in the source the record is: an SDN uid, a transaction hash, a tag pack and line. */
  reference: Schema.String,
  jurisdiction: Schema.optionalKey(Schema.String),
  entityName: Schema.optionalKey(Schema.String),
  entityType: Schema.optionalKey(Schema.String),
  /** A human-readable label the source gives, e.g. `Tornado Cash`, `Phish / Hack`. */
  label: Schema.optionalKey(Schema.String),
  /** When the source says the listing started; else the issue date of the first version that had it. */
  listedAt: Schema.String,
  /** When the listing ended: the source's removal date, or the issue date of the first version without it. */
  delistedAt: Schema.optionalKey(Schema.String),
  /**
   * In answers only, for a listing a snapshot list ended: the last version that held it and the first that did not.
   * The answer then gives no `delistedAt`, since the source states no date.
   */
  delistedBetween: Schema.optionalKey(DelistedBetween),
  /**
   * The source a curated list's entry says it took the listing from (a GraphSense tag's `source`, e.g.
   * `https://etherscan.io/labelcloud`): what ties the entry to the lists it re-publishes.
   */
  cites: Schema.optionalKey(Schema.String),
  ingestedAt: Schema.String
})

/** A stored record. */
export type IntelRecord = typeof IntelRecord.Type

const { address, family, category, reference, jurisdiction, entityName, entityType, label, delistedAt, cites } =
  IntelRecord.fields

/**
 * A record as a parser produces it, before the index dates and stamps it (staged versions keep it as JSON): a stored
 * record's fields, but `listedAt` is omitted when the source gives no date (the version's issue date is used), and
 * `delistedAt` is given only by history sources (events) that state the end of a listing.
 */
export const ParsedRecord = Schema.Struct({
  address,
  family,
  category,
  reference,
  jurisdiction,
  entityName,
  entityType,
  label,
  listedAt: Schema.optionalKey(Schema.String),
  delistedAt,
  cites
})

/** A record as a parser produces it. */
export type ParsedRecord = typeof ParsedRecord.Type

/** A staged record as stored: the JSON of a {@link ParsedRecord}. */
export const ParsedRecordJson = Schema.fromJsonString(ParsedRecord)

/** True when `record` was in force on `date` (ISO `YYYY-MM-DD`). */
export const activeOn = (record: Pick<IntelRecord, "listedAt" | "delistedAt">, date: string): boolean =>
  record.listedAt <= date && (record.delistedAt === undefined || record.delistedAt > date)
