/**
 * A monitoring bot (spec §2.8), declared once: as stored (with its key, and `options.literalDefs` kept as the JSON
 * text it came in, so a number such as `1e+27` is never read through a double), as the API shows it (`View`: no
 * key, the literal definitions as values), and the fields a client sends (`Request`). The HTTP contract and
 * `/openapi.json` are made from these.
 */
import { Schema } from "effect"
import { Instant } from "../../kernel/index.ts"
import * as Literals from "../rules/Literals.ts"

/** How severe a bot's matches are. */
export const Severity = Schema.Literals(["Critical", "High", "Medium", "Low"])
export type Severity = typeof Severity.Type

/** Limits the rule to the members (or non-members) of a group of a contract. */
export const RuleScope = Schema.Struct({ contractName: Schema.String, groupId: Schema.String, member: Schema.Boolean })

export const WatchRuleType = Schema.Literals(["simple", "advanced"])

const NotifyMinInterval = Schema.Int.annotate({
  description: "Live alerts within this many seconds (block time) of the last one notified are recorded, not notified"
})
const AlertThreshold = Schema.Struct({ count: Schema.Int, windowSeconds: Schema.Int }).annotate({
  description: "Live alerts are notified only once count of them fall within windowSeconds (block time)"
})
const WatchingFrom = Schema.Struct({ chainId: Schema.Int, blockNumber: Schema.Int }).annotate({
  description:
    "The first block the bot is run on live: the one after the chain node's head when it was created, switched on or given new rules, so every transaction mined after the answer is watched. Absent when no node was configured for the chain then, and on inactive bots."
})
const Paused = Schema.Struct({ reason: Schema.String, blockNumber: Schema.Int, at: Instant.Timestamp }).annotate({
  description:
    "Why the follower switched the bot off: its rules went over the evaluation's bounds (bindings tried in one step, matches per block) at this block. Switching it on (active true) clears it."
})

/** A placeholder's value as a client sends it and the API shows it. */
export const LiteralValue = Schema.Union([Schema.Finite, Schema.String, Schema.Boolean]).annotate({
  description: "A number (finite), a string (a decimal number, an address, bytes or text) or a boolean"
})

/** What every form of a bot shares (the stored one adds its key; options differ in `literalDefs`). */
const shared = {
  /** `bot_<epoch ms>_<9 lowercase alphanumerics>`. */
  id: Schema.String.annotate({ description: "bot_<epoch ms>_<9 lowercase alphanumerics>" }),
  botName: Schema.String,
  botDescription: Schema.optionalKey(Schema.String),
  chainId: Schema.Int,
  active: Schema.Boolean,
  severity: Severity,
  watchRule: Schema.Struct({ watchRuleType: WatchRuleType, expressions: Schema.Array(Schema.String) }),
  /** Notification channel ids of the same key. */
  notifications: Schema.Array(Schema.String),
  /** The client's own version label of the bot, when it gives one. */
  botVersion: Schema.optionalKey(Schema.String),
  /**
   * The first block the bot is run on: the one after the node's head when it was created, switched on or given
   * new rules. Absent when no node was configured for its chain then (it runs from the block the follower
   * processes next).
   */
  watchingFrom: Schema.optionalKey(WatchingFrom),
  /** Why the follower switched the bot off (`active` false); switching it on again clears it. */
  paused: Schema.optionalKey(Paused),
  /** Increases by one with every update, from 1. */
  revision: Schema.Int.annotate({ description: "1 on create, one more with every update" }),
  created: Instant.Timestamp,
  updated: Instant.Timestamp
}

const options = {
  topLevelTxBlockRange: Schema.Int,
  ruleScope: Schema.optionalKey(RuleScope),
  notifyMinIntervalSeconds: Schema.optionalKey(NotifyMinInterval),
  alertThreshold: Schema.optionalKey(AlertThreshold)
}

/** A bot, as stored (adapters keep it as this Schema's JSON and check it when they read it back). */
export const Bot = Schema.Struct({
  ...shared,
  /** The API key (its id) that owns it. */
  keyId: Schema.String,
  options: Schema.Struct({
    ...options,
    /** The JSON text of `options.literalDefs`, exactly as received (numbers kept exact). */
    literalDefs: Schema.optionalKey(Schema.String)
  })
})
export type Bot = typeof Bot.Type

/** A bot as the API shows it. */
export const View = Schema.Struct({
  ...shared,
  options: Schema.Struct({
    ...options,
    literalDefs: Schema.optionalKey(
      Schema.Record(Schema.String, LiteralValue).annotate({
        description: "As stored: a number a double cannot carry exactly is shown as its exact decimal text"
      })
    )
  })
}).annotate({ identifier: "Bot" })
export type View = typeof View.Type

/** A stored bot as the API shows it: without its key, the literal definitions as values. */
export const view = ({ keyId: _, options: { literalDefs, ...rest }, ...bot }: Bot): View => ({
  ...bot,
  options: { ...rest, ...(literalDefs === undefined ? {} : { literalDefs: Literals.shown(literalDefs) }) }
})

/**
 * The fields of a bot a client sends (spec §2.8): `POST /v1/bots` (botName, chainId and watchRule.expressions
 * required, which the service decides) and `PUT /v1/bots/:botId` (any subset).
 */
export const Request = Schema.Struct({
  botName: Schema.optionalKey(Schema.String),
  botDescription: Schema.optionalKey(Schema.String),
  chainId: Schema.optionalKey(Schema.Int.annotate({ description: "Sent on create; may be repeated, never changed" })),
  active: Schema.optionalKey(Schema.Boolean),
  severity: Schema.optionalKey(Severity),
  watchRule: Schema.optionalKey(
    Schema.Struct({
      watchRuleType: Schema.optionalKey(WatchRuleType),
      expressions: Schema.optionalKey(Schema.Array(Schema.String))
    })
  ),
  notifications: Schema.optionalKey(Schema.Array(Schema.String)),
  botVersion: Schema.optionalKey(Schema.String),
  options: Schema.optionalKey(
    Schema.Struct({
      topLevelTxBlockRange: Schema.optionalKey(Schema.Int),
      literalDefs: Schema.optionalKey(
        Schema.Record(Schema.String, LiteralValue).annotate({
          description: "Values of ${placeholders}; numbers are read from the body's text, so 1e+27 is exactly 10^27"
        })
      ),
      ruleScope: Schema.optionalKey(RuleScope),
      notifyMinIntervalSeconds: Schema.optionalKey(Schema.Int),
      alertThreshold: Schema.optionalKey(Schema.Struct({ count: Schema.Int, windowSeconds: Schema.Int }))
    })
  )
}).annotate({ identifier: "BotRequest" })
