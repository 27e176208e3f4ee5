/** The v2 projection of a screening result (spec §2.5): v2 bands, `clean`, priority, classification, tags. */
import type { Result } from "./Screening.ts"

/** v2 risk levels: `clean` when no risk signal is in force, else bands at 80, 60 and 30. */
export type Level = "critical" | "high" | "medium" | "low" | "clean"

/** v2 priorities, one per level. */
export type Priority = "URGENT" | "HIGH" | "MEDIUM" | "LOW" | "ROUTINE"

/** v2 entity types. */
export type EntityType = "malicious" | "sanctioned" | "suspicious" | "service" | "individual" | "unknown"

/** The `data` object of a v2 intelligence response. */
export interface Data {
  readonly address: string
  readonly entity: { readonly type: EntityType; readonly name: string | null }
  readonly risk_assessment: { readonly risk_score: number; readonly risk_level: Level }
  readonly recommendation: string
  readonly classification: string
  /** Consolidated tags joined with "; ". */
  readonly risk_tags: string
  readonly priority: Priority
  readonly labels: ReadonlyArray<string>
  readonly chains_with_activity: ReadonlyArray<string>
}

/** v2 level of a score when some risk signal is in force. */
export const level = (score: number, hasRisk: boolean): Level =>
  !hasRisk ? "clean" : score >= 80 ? "critical" : score >= 60 ? "high" : score >= 30 ? "medium" : "low"

/** The priority of each level. */
export const priorities: { readonly [L in Level]: Priority } = {
  critical: "URGENT",
  high: "HIGH",
  medium: "MEDIUM",
  low: "LOW",
  clean: "ROUTINE"
}

const severity: { readonly [L in Level]: string } = {
  critical: "SEVERE",
  high: "HIGH",
  medium: "MODERATE",
  low: "LOW",
  clean: "NONE"
}

const guidance: { readonly [L in Level]: string } = {
  critical: "IMMEDIATE REVIEW REQUIRED: High-risk entity detected - enhanced due diligence mandatory",
  high: "ENHANCED DUE DILIGENCE: Elevated risk indicators - senior approval required before proceeding",
  medium: "MONITOR: Moderate risk indicators - standard KYC with transaction monitoring",
  low: "PROCEED WITH CAUTION: Minor risk indicators - standard processing",
  clean: "APPROVED: Clean risk profile - standard operations authorized"
}

const tagOf: Readonly<Record<string, string>> = {
  sanctions_match: "Sanctioned Entity",
  stablecoin_blacklist: "Stablecoin Blacklisted",
  threat_actor: "Threat Actor",
  phishing: "Phishing",
  scam: "Scam",
  ransomware: "Ransomware",
  darknet: "Darknet Market",
  mixer: "Mixer",
  fraud: "Fraud",
  gambling: "Gambling",
  known_exchange: "Known Exchange",
  known_service: "Known Service",
  smart_money: "Smart Money"
}

/**
 * Projects a v3 result to the v2 `data` object. `chains_with_activity` reports observed on-chain activity,
 * which needs chain data; until an activity probe is configured it is empty rather than guessed.
 */
export const project = (result: Result): Data => {
  const risk = result.signals.filter((s) => s.polarity === "risk")
  const lvl = level(result.score, risk.length > 0)
  const type: EntityType = result.flags.sanctioned
    ? "sanctioned"
    : result.flags.blacklisted || result.flags.threat_actor
      ? "malicious"
      : risk.length > 0
        ? "suspicious"
        : result.signals.some((s) => s.type === "known_exchange" || s.type === "known_service")
          ? "service"
          : "individual"
  const tags = [...new Set(result.signals.map((s) => tagOf[s.type] ?? s.type))]
  const named = result.entity.name === "Unknown Entity" ? null : result.entity.name
  return {
    address: result.address,
    entity: { type, name: named },
    risk_assessment: { risk_score: result.score, risk_level: lvl },
    recommendation:
      lvl === "clean" ? guidance.clean : `${guidance[lvl]} (Risk Score: ${result.score}/100 - ${severity[lvl]})`,
    classification:
      lvl === "clean"
        ? "Clean Entity"
        : type === "sanctioned"
          ? "Sanctioned Entity"
          : `${lvl.charAt(0).toUpperCase()}${lvl.slice(1)}-Risk Entity`,
    risk_tags: tags.length === 0 ? "Standard Address Profile" : tags.join("; "),
    priority: priorities[lvl],
    labels: result.labels,
    chains_with_activity: []
  }
}
