/**
 * A monitoring bot (spec §2.8), declared once: as stored (with its key, and `options.literalDefs` kept as the JSON
 * text it came in, so a number such as `1e+27` is never read through a double), as the API shows it (`View`: no
 * key, the literal definitions as values), and the fields a client sends (`Create`, `Update`: each checked, with
 * the message that names what is wrong). The HTTP contract and `/openapi.json` are made from these.
 */
import { Schema } from "effect"
import { Instant } from "../../kernel/index.ts"
import * as Messages from "../alerts/Messages.ts"
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
const Paused = Schema.Struct({
  reason: Schema.String,
  blockNumber: Schema.optionalKey(Schema.Int),
  at: Instant.Timestamp
}).annotate({
  description:
    "Why the follower switched the bot off: its rules went over the evaluation's bounds (bindings tried in one step, matches per block) at `blockNumber`, or its API key was revoked or expired (no block). Switching it on (active true) clears it."
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

/** Limits of one bot. */
export const limits = {
  maxExpressions: 20,
  maxBlockRange: 10_000,
  maxNameLength: 200,
  maxDescriptionLength: 2_000,
  /** Bots one key may have. */
  maxPerKey: 100,
  /** `options.literalDefs`: placeholders, and characters of its JSON text. */
  maxLiteralDefs: 64,
  maxLiteralDefsLength: 16_384
}

/**
 * `schema` refusing anything else with `message`, and any value `ok` does not accept with `ok`'s message: one
 * message per field, whatever is wrong with it. `schema` has no checks of its own (they would take the message).
 */
const refusing = <S extends Schema.Top>(
  schema: S,
  message: string,
  ok: (value: S["Type"]) => true | string = () => true,
  description?: string
) =>
  schema
    .annotate({ message, ...(description === undefined ? {} : { description }) })
    .check(Schema.makeFilter((value: S["Type"]) => ok(value)))

/** `options.literalDefs` of a request (a bot's, or a rule to check): at most `maxLiteralDefs` placeholder values. */
export const LiteralDefs = refusing(
  Schema.Record(Schema.String, LiteralValue),
  "must be an object of placeholder values",
  (o) => Object.keys(o).length <= limits.maxLiteralDefs || `must have at most ${limits.maxLiteralDefs} placeholders`,
  "Values of ${placeholders}; numbers are read from the body's text, so 1e+27 is exactly 10^27"
)

/** A whole number from `min` to `max`, anything else refused with `message`. */
const whole = (message: string, min: number, max: number, description?: string) =>
  Schema.Number.annotate({ message, ...(description === undefined ? {} : { description }) }).check(
    Schema.isInt({ message }),
    Schema.makeFilter((n: number) => (n >= min && n <= max) || message)
  )

/** Names reach Slack, Discord, Telegram and mail subjects: a CR or LF in one could forge lines of a message. */
const label = (max: number) => {
  const message = `must be a non-empty string of at most ${max} characters`
  return refusing(Schema.String, message, (s) =>
    Messages.controlCharacter.test(s)
      ? Messages.controlCharacterMessage
      : (s.trim() !== "" && s.length <= max) || message
  )
}

/** A name (a bot's, a channel's): 1 to 200 characters, not blank, no control character. */
export const Name = label(limits.maxNameLength)

const blocks = `must be a whole number of blocks from 0 (the same block) to ${limits.maxBlockRange}`

/** A field whose absence is refused with `message`. */
const missing =
  (message: string) =>
  <S extends Schema.Top>(schema: S): S["Rebuild"] =>
    schema.annotateKey({ messageMissingKey: message })

const scopeMessage = "must be {contractName, groupId, member}"
const thresholdMessage = "must be {count: 1 to 1000, windowSeconds: 1 to 604800}"
const expressionsMessage = `must be 1 to ${limits.maxExpressions} rule expressions (strings)`

/** Each field a client may send, with its checks and the message that names what is wrong. */
const requested = {
  botName: Name,
  botDescription: refusing(Schema.String, "must be a string", (s) =>
    Messages.invisibleCharacter.test(s)
      ? "must not contain invisible characters (bidirectional controls, zero-width characters)"
      : s.length <= limits.maxDescriptionLength || `must be at most ${limits.maxDescriptionLength} characters`
  ),
  chainId: whole("must be a positive whole number", 1, Number.MAX_SAFE_INTEGER),
  active: refusing(Schema.Boolean, "must be true or false"),
  severity: refusing(Severity, "must be one of Critical, High, Medium, Low"),
  watchRuleType: refusing(WatchRuleType, "must be simple or advanced"),
  expressions: refusing(
    Schema.Array(Schema.String.annotate({ message: expressionsMessage })),
    expressionsMessage,
    (e) => (e.length >= 1 && e.length <= limits.maxExpressions) || expressionsMessage
  ),
  notifications: refusing(
    Schema.Array(Schema.String.annotate({ message: "must be a list of notification channel ids" })),
    "must be a list of notification channel ids"
  ),
  botVersion: label(100),
  options: {
    topLevelTxBlockRange: whole(blocks, 0, limits.maxBlockRange),
    literalDefs: LiteralDefs,
    ruleScope: refusing(
      Schema.Struct({
        contractName: Schema.String.annotate({ message: scopeMessage }).pipe(missing(scopeMessage)),
        groupId: Schema.String.annotate({ message: scopeMessage }).pipe(missing(scopeMessage)),
        member: Schema.Boolean.annotate({ message: scopeMessage }).pipe(missing(scopeMessage))
      }),
      scopeMessage
    ),
    notifyMinIntervalSeconds: whole("must be a whole number of seconds from 0 to 604800", 0, 604_800),
    alertThreshold: refusing(
      Schema.Struct({
        count: whole(thresholdMessage, 1, 1_000).pipe(missing(thresholdMessage)),
        windowSeconds: whole(thresholdMessage, 1, 604_800).pipe(missing(thresholdMessage))
      }),
      thresholdMessage
    )
  }
}

const RequestOptions = refusing(
  Schema.Struct({
    topLevelTxBlockRange: Schema.optionalKey(requested.options.topLevelTxBlockRange),
    literalDefs: Schema.optionalKey(requested.options.literalDefs),
    ruleScope: Schema.optionalKey(requested.options.ruleScope),
    notifyMinIntervalSeconds: Schema.optionalKey(requested.options.notifyMinIntervalSeconds),
    alertThreshold: Schema.optionalKey(requested.options.alertThreshold)
  }),
  "must be an object"
)

const required = missing("is required")

/** What a client may change of a bot (`PUT /v1/bots/:botId`, spec §2.8): any subset of the fields, each checked. */
export const Update = Schema.Struct({
  botName: Schema.optionalKey(requested.botName),
  botDescription: Schema.optionalKey(requested.botDescription),
  chainId: Schema.optionalKey(
    whole(
      "must be a positive whole number",
      1,
      Number.MAX_SAFE_INTEGER,
      "Sent on create; may be repeated, never changed"
    )
  ),
  active: Schema.optionalKey(requested.active),
  severity: Schema.optionalKey(requested.severity),
  watchRule: Schema.optionalKey(
    refusing(
      Schema.Struct({
        watchRuleType: Schema.optionalKey(requested.watchRuleType),
        expressions: Schema.optionalKey(requested.expressions)
      }),
      "must be an object with expressions"
    )
  ),
  notifications: Schema.optionalKey(requested.notifications),
  botVersion: Schema.optionalKey(requested.botVersion),
  options: Schema.optionalKey(RequestOptions)
}).annotate({ identifier: "BotUpdate" })
export interface Update extends Schema.Schema.Type<typeof Update> {}

/**
 * What a client sends to make a bot (`POST /v1/bots`, spec §2.8): `botName`, `chainId` and `watchRule.expressions`
 * required, the rest as an update has them.
 */
export const Create = Schema.Struct({
  ...Update.fields,
  botName: requested.botName.pipe(required),
  chainId: requested.chainId.pipe(required),
  watchRule: refusing(
    Schema.Struct({
      watchRuleType: Schema.optionalKey(requested.watchRuleType),
      expressions: requested.expressions.pipe(missing(expressionsMessage))
    }),
    "must be an object with expressions"
  ).pipe(required)
}).annotate({ identifier: "BotCreate" })
export interface Create extends Schema.Schema.Type<typeof Create> {}
