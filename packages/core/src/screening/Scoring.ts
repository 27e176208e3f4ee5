/**
 * The published scoring model: records in force → signals → a 0–100 score, band, action, confidence, flags,
 * entity and labels, with a breakdown an auditor can recompute by hand. Pure and deterministic.
 */
import { Schema } from "effect"
import type { Authority, Category, IntelRecord } from "./Intel.ts"

/** Signal types, one per kind of finding. */
export const SignalType = Schema.Literals([
  "sanctions_match",
  "sanctions_reported",
  "stablecoin_blacklist",
  "threat_actor",
  "phishing",
  "scam",
  "ransomware",
  "darknet",
  "mixer",
  "fraud",
  "gambling",
  "known_exchange",
  "known_service",
  "smart_money",
  "exposure_sanctioned",
  "exposure_blacklisted",
  "exposure_threat",
  "exposure_mixer",
  "exposure_fraud",
  "exposure_reported"
])
export type SignalType = typeof SignalType.Type

/** How each category becomes a signal: its type, weight (0–100; 0 for positive signals) and tier. */
export const weights: {
  readonly [C in Category]: { readonly type: SignalType; readonly weight: number; readonly tier: 1 | 2 | 3 | 4 | 0 }
} = {
  sanctions: { type: "sanctions_match", weight: 100, tier: 1 },
  stablecoin_blacklist: { type: "stablecoin_blacklist", weight: 95, tier: 1 },
  hack: { type: "threat_actor", weight: 92, tier: 1 },
  exploit: { type: "threat_actor", weight: 92, tier: 1 },
  heist: { type: "threat_actor", weight: 92, tier: 1 },
  threat_actor: { type: "threat_actor", weight: 92, tier: 1 },
  phishing: { type: "phishing", weight: 90, tier: 1 },
  scam: { type: "scam", weight: 90, tier: 1 },
  ransomware: { type: "ransomware", weight: 85, tier: 2 },
  darknet: { type: "darknet", weight: 80, tier: 2 },
  mixer: { type: "mixer", weight: 75, tier: 2 },
  fraud: { type: "fraud", weight: 70, tier: 2 },
  gambling: { type: "gambling", weight: 40, tier: 3 },
  exchange: { type: "known_exchange", weight: 0, tier: 0 },
  service: { type: "known_service", weight: 0, tier: 0 },
  smart_money: { type: "smart_money", weight: 0, tier: 0 }
}

/**
 * A sanctions claim of a curated or scraped list that no official list in force confirms: a signal of its own,
 * weighted so that by itself it asks for review (high) and never blocks (critical).
 */
export const reported = { type: "sanctions_reported", weight: 60, tier: 3 } as const

/** How much each further risk signal adds, relative to what the strongest one left open. */
export const corroboration = 0.5

/** One signal with the record that raised it. */
export interface Signal {
  readonly type: SignalType
  readonly weight: number
  readonly polarity: "risk" | "positive"
  /** The publisher of the evidence, e.g. `OFAC`. */
  readonly source: string
  /** One sentence saying what was found, where, and how far that source's word goes. */
  readonly summary: string
  readonly evidence: {
    readonly list: string
    readonly authority: Authority
    readonly reference: string
    readonly category: Category
    readonly listedAt: string
    readonly delistedAt?: string
    readonly label?: string
    readonly entityName?: string
  }
  /** Points of the score this signal accounts for; the contributions add up to the unrounded score. */
  readonly contribution: number
}

/** Bands of the v3 score (spec §2.2) and the actions they call for (§2.3). */
export const Band = Schema.Literals(["critical", "high", "medium", "low", "minimal"])
export type Band = typeof Band.Type
export const Action = Schema.Literals(["ALLOW", "ALLOW_CAUTIOUS", "MONITOR", "REVIEW", "BLOCK"])
export type Action = typeof Action.Type

/** v3 band of a score: 85+ critical, 60+ high, 35+ medium, 15+ low, else minimal. */
export const band = (score: number): Band =>
  score >= 85 ? "critical" : score >= 60 ? "high" : score >= 35 ? "medium" : score >= 15 ? "low" : "minimal"

/** The action each band calls for. */
export const actions: { readonly [B in Band]: Action } = {
  critical: "BLOCK",
  high: "REVIEW",
  medium: "MONITOR",
  low: "ALLOW_CAUTIOUS",
  minimal: "ALLOW"
}

/**
 * How far a record is trusted, for confidence: an official list's own record most, then a curated third party's,
 * then scraped labels; within each, the strongest kinds of finding more.
 */
export const reliability = (category: Category, authority: Authority, tier = weights[category].tier): number => {
  const strong = tier === 1
  switch (authority) {
    case "official":
      return category === "sanctions" ? 0.99 : 0.98
    case "curated":
      return strong ? 0.85 : 0.75
    case "scraped":
      return strong ? 0.75 : 0.65
  }
}

/** What scoring needs to know beyond the records: the lists' authority and what official lists are in force. */
export interface Context {
  /** The authority of a list, by name. */
  readonly authorityOf: (list: string) => Authority
  /**
   * The official lists a third-party sanctions claim was checked against, as a reader should see them, e.g.
   * `the official lists in force on 2026-11-24 (ofac-sdn of 2025-11-19)`.
   */
  readonly officialLists: string
}

/**
 * The composite score of risk weights: the strongest counts in full, and the others, each at `corroboration`
 * of its weight, close part of the gap it leaves: s = w₁ + (100 − w₁) · (1 − Π(1 − c·wᵢ/100)) for i ≥ 2.
 * Adding a risk signal never lowers it; it stays within [0, 100].
 */
export const composite = (riskWeights: ReadonlyArray<number>): number => {
  const sorted = [...riskWeights].sort((a, b) => b - a)
  const [top = 0, ...rest] = sorted
  const others = 1 - rest.reduce((p, w) => p * (1 - (corroboration * w) / 100), 1)
  return top + (100 - top) * others
}

/** What scoring concludes from the records in force. */
export interface Assessment {
  readonly score: number
  readonly band: Band
  readonly action: Action
  readonly confidence: number
  readonly flags: {
    readonly sanctioned: boolean
    readonly blacklisted: boolean
    readonly threat_actor: boolean
    readonly smart_money: boolean
  }
  readonly entity: { readonly name: string; readonly type: string; readonly category: string }
  readonly labels: ReadonlyArray<string>
  /** Risk signals strongest first, then positive ones. */
  readonly signals: ReadonlyArray<Signal>
}

const threatCategories: ReadonlyArray<Category> = [
  "hack",
  "exploit",
  "heist",
  "threat_actor",
  "phishing",
  "scam",
  "ransomware"
]

const entityCategory = (category: Category, confirmed: boolean): string =>
  category === "sanctions"
    ? confirmed
      ? "sanctioned"
      : "sanctions_reported"
    : category === "stablecoin_blacklist"
      ? "blacklisted"
      : threatCategories.includes(category)
        ? "threat_actor"
        : category

const labelOf = (r: IntelRecord, confirmed: boolean): string =>
  r.category === "sanctions"
    ? confirmed
      ? `${r.source} Sanctioned`
      : `Sanctions reported by ${r.source}`
    : r.category === "stablecoin_blacklist"
      ? `${r.label ?? "Stablecoin"} Blacklisted`
      : (r.label ?? r.category.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()))

const authorityWords: { readonly [A in Authority]: string } = {
  official: "official list",
  curated: "curated list",
  scraped: "scraped labels"
}

/**
 * Scores the records in force for one address (de-listed records must already be filtered out). A sanctions
 * record counts as a sanctions match only when it is official, or when an official sanctions record in force
 * confirms it; otherwise it is a `sanctions_reported` signal that says it is unconfirmed.
 */
export const assess = (records: ReadonlyArray<IntelRecord>, context: Context): Assessment => {
  const officialSanctions = records.some(
    (r) => r.category === "sanctions" && context.authorityOf(r.list) === "official"
  )
  const kind = (r: IntelRecord) => (r.category === "sanctions" && !officialSanctions ? reported : weights[r.category])
  const raw = records.map((r) => ({ record: r, authority: context.authorityOf(r.list), ...kind(r) }))
  const risk = raw
    .filter((s) => s.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.record.list.localeCompare(b.record.list))
  const positive = raw.filter((s) => s.weight === 0)
  // Unconfirmed sanctions claims count once, however many lists repeat them: repetition is not confirmation.
  const firstReported = risk.findIndex((s) => s.type === reported.type)
  const counts = (s: (typeof risk)[number], i: number) => s.type !== reported.type || i === firstReported
  const counted = risk.filter(counts)
  const unrounded = composite(counted.map((s) => s.weight))
  const top = counted[0]?.weight ?? 0
  const restShares = counted.slice(1).map((s) => corroboration * s.weight)
  const restTotal = restShares.reduce((a, b) => a + b, 0)
  const contribution = (s: (typeof risk)[number]) => {
    const i = counted.indexOf(s)
    return i === -1 ? 0 : i === 0 ? top : restTotal === 0 ? 0 : ((unrounded - top) * restShares[i - 1]!) / restTotal
  }
  const summary = (s: (typeof raw)[number]) => {
    const reference = s.record.reference === s.record.list ? "" : ` ${s.record.reference}`
    const where = `${s.record.list}${reference}, ${authorityWords[s.authority]}`
    const what = s.record.label ?? s.record.entityName ?? s.record.category.replace(/_/g, " ")
    return s.type === reported.type
      ? `Sanctions reported by ${s.record.source} (${where}); not on ${context.officialLists}.`
      : `${what}: listed by ${s.record.source} since ${s.record.listedAt} (${where}).`
  }
  const toSignal = (s: (typeof raw)[number], polarity: "risk" | "positive", points: number): Signal => ({
    type: s.type,
    weight: s.weight,
    polarity,
    source: s.record.source,
    summary: summary(s),
    evidence: {
      list: s.record.list,
      authority: s.authority,
      reference: s.record.reference,
      category: s.record.category,
      listedAt: s.record.listedAt,
      ...(s.record.delistedAt === undefined ? {} : { delistedAt: s.record.delistedAt }),
      ...(s.record.label === undefined ? {} : { label: s.record.label }),
      ...(s.record.entityName === undefined ? {} : { entityName: s.record.entityName })
    },
    contribution: Math.round(points * 100) / 100
  })
  const signals = [
    ...risk.map((s) => toSignal(s, "risk", contribution(s))),
    ...positive.map((s) => toSignal(s, "positive", 0))
  ]
  const score = Math.round(unrounded)
  const has = (cs: ReadonlyArray<Category>) => records.some((r) => cs.includes(r.category))
  const lists = new Set(records.map((r) => r.list))
  const confidence =
    records.length === 0
      ? 0.5
      : Math.min(
          0.99,
          Math.max(...raw.map((s) => reliability(s.record.category, s.authority, s.tier))) + 0.03 * (lists.size - 1)
        )
  const named = [...risk, ...positive].find((s) => s.record.entityName !== undefined)?.record
  const lead = risk[0]?.record ?? positive[0]?.record
  return {
    score,
    band: band(score),
    action: actions[band(score)],
    confidence: Math.round(confidence * 100) / 100,
    flags: {
      sanctioned: officialSanctions,
      blacklisted: has(["stablecoin_blacklist"]),
      threat_actor: has(threatCategories),
      smart_money: has(["smart_money"])
    },
    entity: {
      name: named?.entityName ?? "Unknown Entity",
      type: named?.entityType ?? (lead === undefined ? "wallet" : lead.category === "exchange" ? "exchange" : "wallet"),
      category: lead === undefined ? "unknown" : entityCategory(lead.category, officialSanctions)
    },
    labels: [...new Set(records.map((r) => labelOf(r, officialSanctions)))],
    signals
  }
}
