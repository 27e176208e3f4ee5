/**
 * The v2 projection of a screening result (spec §2.5): v2 bands, `clean`, priority, classification, tags; and
 * the v2 wire shapes (the intelligence answer and the asynchronous delivery's data, §6), declared once here.
 */
import { Schema } from "effect"
import { Instant } from "../kernel/index.ts"
import * as ChainActivity from "./ChainActivity.ts"
import type { Result } from "./Screening.ts"
import type * as Scoring from "./Scoring.ts"

const Timestamp = Instant.Timestamp

/** v2 risk levels: `clean` when no risk signal is in force, else bands at 80, 60 and 30. */
export const Level = Schema.Literals(["critical", "high", "medium", "low", "clean"])
export type Level = typeof Level.Type

/** v2 priorities, one per level. */
export const Priority = Schema.Literals(["URGENT", "HIGH", "MEDIUM", "LOW", "ROUTINE"])
export type Priority = typeof Priority.Type

/** v2 entity types; `unknown` when no list names the address. */
export const EntityType = Schema.Literals(["malicious", "sanctioned", "suspicious", "service", "individual", "unknown"])
export type EntityType = typeof EntityType.Type

/** The `data` object of a v2 intelligence response. */
export const Data = Schema.Struct({
  address: Schema.String,
  entity: Schema.Struct({ type: EntityType, name: Schema.NullOr(Schema.String) }),
  risk_assessment: Schema.Struct({ risk_score: Schema.Finite, risk_level: Level }),
  recommendation: Schema.String,
  classification: Schema.String,
  risk_tags: Schema.String.annotate({ description: 'Tags joined with "; ".' }),
  priority: Priority,
  labels: Schema.Array(Schema.String),
  chains_with_activity: Schema.Array(Schema.String),
  warnings: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description:
        "Present when something is not known: each network whose on-chain activity could not be checked, and why (`every network: … no node is configured` when none is), so an empty `chains_with_activity` is not read as an unused address."
    })
  )
})
export type Data = typeof Data.Type

/** The text every successful v2 intelligence answer carries. */
export const processedMessage = "Address intelligence processed successfully"

/** The v2 intelligence answer: `data` in the v2 envelope, with the key's client name. */
export const IntelResponse = Schema.Struct({
  success: Schema.Literal(true),
  data: Data,
  message: Schema.Literal(processedMessage),
  timestamp: Timestamp,
  client: Schema.String
})
export type IntelResponse = typeof IntelResponse.Type

/** What an asynchronous screening delivers as the event's `data` (spec §6). */
export const Delivered = Schema.Struct({
  success: Schema.Literal(true),
  data: Data,
  message: Schema.Literal(processedMessage),
  timestamp: Timestamp,
  processing_time_ms: Schema.Finite,
  webhook_delivery: Schema.Literal(true)
})
export type Delivered = typeof Delivered.Type

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

const tagOf: { readonly [T in Scoring.SignalType]: string } = {
  sanctions_match: "Sanctioned Entity",
  sanctions_reported: "Sanctions Reported (Unconfirmed)",
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
  smart_money: "Smart Money",
  exposure_sanctioned: "Exposure to a Sanctioned Address",
  exposure_blacklisted: "Exposure to a Blacklisted Address",
  exposure_threat: "Exposure to a Threat Actor",
  exposure_mixer: "Exposure to a Mixer",
  exposure_fraud: "Exposure to Fraud",
  exposure_reported: "Exposure to a Reported Address"
}

/**
 * Projects a v3 result to the v2 `data` object. `chains_with_activity` is the networks on which the address was
 * seen active (`ChainActivity`), and `warnings` what could not be checked: never guessed.
 */
export const project = (
  result: Result,
  activity: Pick<ChainActivity.Activity, "active" | "unchecked"> = ChainActivity.noNode
): Data => {
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
          : result.signals.length > 0
            ? "individual"
            : "unknown"
  const tags = [...new Set(result.signals.map((s) => tagOf[s.type]))]
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
    chains_with_activity: activity.active,
    ...(activity.unchecked.length === 0 ? {} : { warnings: activity.unchecked.map(ChainActivity.uncheckedWarning) })
  }
}
