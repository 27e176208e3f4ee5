/**
 * An alert, declared once: as the follower stores it (one match of one bot's rule on one branch of the chain,
 * with its key) and as a key reads it back (`Listed`: its state and the delivery of each notice to each channel).
 * The HTTP contract and `/openapi.json` are made from these.
 */
import { Schema } from "effect"
import { Instant } from "../../kernel/index.ts"
import { Evidence } from "../rules/Evidence.ts"

/** Why an alert was recorded without being notified. */
export const Suppressed = Schema.Literals(["threshold", "interval"]).annotate({
  description:
    "Recorded but not notified: the bot's alertThreshold was not reached, or its notifyMinIntervalSeconds had not passed"
})
export type Suppressed = typeof Suppressed.Type

const fields = {
  /**
   * `al_` and a digest of the alert's identity (bot, bot version, chain, hash of the block that completed the
   * match, the bound transactions, the rule): the same match found twice is the same alert.
   */
  id: Schema.String.annotate({
    description:
      "al_ and 32 hex digits derived from the bot, its version, the chain, the block hash, the bound transactions and the rule: the same match is the same alert"
  }),
  botId: Schema.String,
  chainId: Schema.Int,
  blockNumber: Schema.Int.annotate({ description: "The block that completed the match" }),
  blockHash: Schema.String,
  /** The block's timestamp (seconds): the clock of notification limits. */
  blockTime: Schema.Int.annotate({ description: "The block's timestamp (seconds)" }),
  rule: Schema.Int,
  expression: Schema.String,
  /** The bound transactions' hashes, by the rule's names (`tx1`, …). */
  transactions: Schema.Record(Schema.String, Schema.String),
  evidence: Evidence,
  created: Instant.Timestamp,
  /** When its block left the chain; the alert is then retracted. */
  retractedAt: Schema.optionalKey(Instant.Timestamp.annotate({ description: "When its block left the chain" })),
  /**
   * When the follower was re-anchored after a reorganisation deeper than it could trace and the node no longer
   * had the alert's block: neither confirmed nor retracted.
   */
  unverifiedAt: Schema.optionalKey(
    Instant.Timestamp.annotate({
      description:
        "When the chain's follower was re-anchored after a reorganisation deeper than it could trace and the node no longer had the alert's block (neither confirmed nor retracted)"
    })
  ),
  suppressed: Schema.optionalKey(Suppressed)
}

/** An alert as stored: one match of one rule of one bot, on one branch of the chain, with the key it belongs to. */
export const Alert = Schema.Struct({ ...fields, keyId: Schema.String })
export interface Alert extends Schema.Schema.Type<typeof Alert> {}

/** An alert's message to one channel, and where its delivery stands. */
export const Notice = Schema.Struct({
  channelId: Schema.String,
  kind: Schema.Literals(["alert", "retraction", "unverified"]),
  deliveryId: Schema.String,
  status: Schema.Literals(["pending", "delivered", "dead"]),
  attempts: Schema.Int,
  lastError: Schema.optionalKey(Schema.String)
})
export interface Notice extends Schema.Schema.Type<typeof Notice> {}

/** An alert as its key reads it: its state and its notices. */
export const Listed = Schema.Struct({
  ...fields,
  state: Schema.Literals(["active", "retracted", "unverified"]),
  notifications: Schema.Array(Notice)
}).annotate({ identifier: "Alert" })
export interface Listed extends Schema.Schema.Type<typeof Listed> {}
