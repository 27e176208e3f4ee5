/**
 * The published scoring model: records in force → signals → a 0–100 score, band, action, confidence, flags,
 * entity and labels, with a breakdown an auditor can recompute by hand. Pure and deterministic.
 */
import { Schema } from "effect"
import type { Category, IntelRecord } from "./Intel.ts"

/** Signal types, one per kind of finding. */
export const SignalType = Schema.Literals([
  "sanctions_match",
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
  "smart_money"
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

/** How much each further risk signal adds, relative to what the strongest one left open. */
export const corroboration = 0.5

/** One signal with the record that raised it. */
export interface Signal {
  readonly type: SignalType
  readonly weight: number
  readonly polarity: "risk" | "positive"
  /** The publisher of the evidence, e.g. `OFAC`. */
  readonly source: string
  readonly evidence: {
    readonly list: string
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

/** How far each kind of publisher is trusted, for confidence. */
const reliability = (category: Category): number =>
  category === "sanctions"
    ? 0.99
    : category === "stablecoin_blacklist"
      ? 0.98
      : weights[category].tier === 1
        ? 0.85
        : 0.75

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

const entityCategory = (category: Category): string =>
  category === "sanctions"
    ? "sanctioned"
    : category === "stablecoin_blacklist"
      ? "blacklisted"
      : threatCategories.includes(category)
        ? "threat_actor"
        : category

const labelOf = (r: IntelRecord): string =>
  r.category === "sanctions"
    ? `${r.source} Sanctioned`
    : r.category === "stablecoin_blacklist"
      ? `${r.label ?? "Stablecoin"} Blacklisted`
      : (r.label ?? r.category.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()))

/** Scores the records in force for one address (de-listed records must already be filtered out). */
export const assess = (records: ReadonlyArray<IntelRecord>): Assessment => {
  const raw = records.map((r) => ({ record: r, ...weights[r.category] }))
  const risk = raw
    .filter((s) => s.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.record.list.localeCompare(b.record.list))
  const positive = raw.filter((s) => s.weight === 0)
  const unrounded = composite(risk.map((s) => s.weight))
  const top = risk[0]?.weight ?? 0
  const restShares = risk.slice(1).map((s) => corroboration * s.weight)
  const restTotal = restShares.reduce((a, b) => a + b, 0)
  const contribution = (i: number) =>
    i === 0 ? top : restTotal === 0 ? 0 : ((unrounded - top) * restShares[i - 1]!) / restTotal
  const toSignal = (s: (typeof raw)[number], polarity: "risk" | "positive", points: number): Signal => ({
    type: s.type,
    weight: s.weight,
    polarity,
    source: s.record.source,
    evidence: {
      list: s.record.list,
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
    ...risk.map((s, i) => toSignal(s, "risk", contribution(i))),
    ...positive.map((s) => toSignal(s, "positive", 0))
  ]
  const score = Math.round(unrounded)
  const has = (cs: ReadonlyArray<Category>) => records.some((r) => cs.includes(r.category))
  const lists = new Set(records.map((r) => r.list))
  const confidence =
    records.length === 0
      ? 0.5
      : Math.min(0.99, Math.max(...records.map((r) => reliability(r.category))) + 0.03 * (lists.size - 1))
  const named = [...risk, ...positive].find((s) => s.record.entityName !== undefined)?.record
  const lead = risk[0]?.record ?? positive[0]?.record
  return {
    score,
    band: band(score),
    action: actions[band(score)],
    confidence: Math.round(confidence * 100) / 100,
    flags: {
      sanctioned: has(["sanctions"]),
      blacklisted: has(["stablecoin_blacklist"]),
      threat_actor: has(threatCategories),
      smart_money: has(["smart_money"])
    },
    entity: {
      name: named?.entityName ?? "Unknown Entity",
      type: named?.entityType ?? (lead === undefined ? "wallet" : lead.category === "exchange" ? "exchange" : "wallet"),
      category: lead === undefined ? "unknown" : entityCategory(lead.category)
    },
    labels: [...new Set(records.map(labelOf))],
    signals
  }
}
