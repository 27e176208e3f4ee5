/**
 * A bot request checked field by field, with today's messages: the errors of the bots service, the limits of one
 * bot, and the merge of a create or update request over the bot it changes.
 */
import { randomBytes } from "@noble/hashes/utils.js"
import { Effect, Schema } from "effect"
import * as Messages from "../alerts/Messages.ts"
import { type Bot, Severity } from "./BotStore.ts"

/** A problem of one expression of a bot's rule: which expression, where in it, what, and the names that would fit. */
export const ExpressionProblem = Schema.Struct({
  expression: Schema.Int.annotate({ description: "Index of the expression in watchRule.expressions" }),
  offset: Schema.Int.annotate({ description: "Character offset of the problem in the expression" }),
  message: Schema.String,
  candidates: Schema.Array(Schema.String).annotate({ description: "Names that would fit there" })
}).annotate({ identifier: "ExpressionProblem" })

/** A field of a bot request is wrong; with rule problems, each expression's, positioned. */
export class InvalidBot extends Schema.TaggedError<InvalidBot>()("InvalidBot", {
  field: Schema.String,
  message: Schema.String,
  problems: Schema.optionalKey(Schema.Array(ExpressionProblem))
}) {}

/** The key has no bot of that id. */
export class BotNotFound extends Schema.TaggedError<BotNotFound>()("BotNotFound", { id: Schema.String }) {
  override get message(): string {
    return `no bot ${this.id}`
  }
}

/** The bot was changed by another request since it was read. */
export class BotConflict extends Schema.TaggedError<BotConflict>()("BotConflict", { id: Schema.String }) {
  override get message(): string {
    return `bot ${this.id} was changed by another request; read it again and retry`
  }
}

/**
 * A create or update request as it arrives: its fields, and the JSON text of `options.literalDefs` as received,
 * when the host has it (an HTTP body's own text): numbers beyond a double's precision are then kept exact.
 */
export interface BotRequest {
  readonly fields: Readonly<Record<string, unknown>>
  readonly literalDefs?: string
}

/** A bot whose rules no longer check against the key's contracts, and why. */
export interface Broken {
  readonly bot: Bot
  readonly problems: NonNullable<InvalidBot["problems"]>
}

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
export const randomSuffix = (n: number) => Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join("")

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

/** The key has as many bots as it may have. */
export class BotLimitReached extends Schema.TaggedError<BotLimitReached>()("BotLimitReached", { max: Schema.Int }) {
  override get message(): string {
    return `the key has ${this.max} bots, the most it may have; delete one first`
  }
}

const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

export type Fields = Omit<Bot, "id" | "keyId" | "revision" | "created" | "updated">

/**
 * What decides a bot's matches, as text to compare: a change of it is a new rule (the bot watches afresh, and its
 * transactions must be joined); names, severity, channels and notification limits are not.
 */
export const ruleOf = (b: Fields): string =>
  JSON.stringify([
    b.watchRule,
    b.options.literalDefs ?? null,
    b.options.ruleScope ?? null,
    b.options.topLevelTxBlockRange
  ])

const invalid = (field: string, message: string) => new InvalidBot({ field, message })

/** The bot `fields` describe over `base` (create: none), each field checked; the rules are checked apart. */
export const merge = (base: Fields | undefined, request: BotRequest): Effect.Effect<Fields, InvalidBot> =>
  Effect.gen(function* () {
    const f = request.fields
    const has = (name: string) => f[name] !== undefined
    if (base === undefined) {
      for (const name of ["botName", "chainId", "watchRule"]) if (!has(name)) return yield* invalid(name, "is required")
    }
    const chainId = f.chainId
    if (has("chainId")) {
      if (typeof chainId !== "number" || !Number.isSafeInteger(chainId) || chainId < 1)
        return yield* invalid("chainId", "must be a positive whole number")
      if (base !== undefined && chainId !== base.chainId)
        return yield* invalid("chainId", `cannot be changed (the bot watches chain ${base.chainId})`)
    }
    const text = (name: string, max: number) =>
      typeof f[name] === "string" && (f[name] as string).trim() !== "" && (f[name] as string).length <= max
    // Names reach Slack, Discord, Telegram and mail subjects: a CR or LF in one could forge lines of a message.
    for (const name of ["botName", "botVersion"])
      if (typeof f[name] === "string" && Messages.controlCharacter.test(f[name] as string))
        return yield* invalid(name, "must not contain control characters (line breaks, tabs, escapes)")
    if (has("botName") && !text("botName", limits.maxNameLength))
      return yield* invalid("botName", `must be a non-empty string of at most ${limits.maxNameLength} characters`)
    if (has("botDescription") && typeof f.botDescription !== "string")
      return yield* invalid("botDescription", "must be a string")
    if (has("botDescription") && (f.botDescription as string).length > limits.maxDescriptionLength)
      return yield* invalid("botDescription", `must be at most ${limits.maxDescriptionLength} characters`)
    if (has("botVersion") && !text("botVersion", 100))
      return yield* invalid("botVersion", "must be a non-empty string of at most 100 characters")
    if (has("active") && typeof f.active !== "boolean") return yield* invalid("active", "must be true or false")
    if (has("severity") && !Schema.is(Severity)(f.severity))
      return yield* invalid("severity", "must be one of Critical, High, Medium, Low")
    const watchRule = has("watchRule") ? yield* watchRuleOf(base, f.watchRule) : base!.watchRule
    if (
      has("notifications") &&
      (!Array.isArray(f.notifications) || !f.notifications.every((n) => typeof n === "string"))
    )
      return yield* invalid("notifications", "must be a list of notification channel ids")
    const options = has("options")
      ? yield* optionsOf(base?.options ?? { topLevelTxBlockRange: 100 }, f.options, request.literalDefs)
      : (base?.options ?? { topLevelTxBlockRange: 100 })
    const pick = <K extends keyof Fields>(name: K, fallback: Fields[K]) =>
      (has(name) ? f[name] : (base?.[name] ?? fallback)) as Fields[K]
    const description = has("botDescription") ? (f.botDescription as string) : base?.botDescription
    const version = has("botVersion") ? (f.botVersion as string) : base?.botVersion
    return {
      chainId: (base?.chainId ?? chainId) as number,
      botName: pick("botName", ""),
      ...(description === undefined ? {} : { botDescription: description }),
      active: pick("active", true),
      severity: pick("severity", "Medium"),
      watchRule,
      notifications: pick("notifications", []),
      ...(version === undefined ? {} : { botVersion: version }),
      options
    }
  })

/** The watch rule a request gives (its type and expressions, each kept from `base` when not given). */
const watchRuleOf = (base: Fields | undefined, w: unknown): Effect.Effect<Fields["watchRule"], InvalidBot> =>
  Effect.gen(function* () {
    if (!isObject(w)) return yield* invalid("watchRule", "must be an object with expressions")
    const type = w.watchRuleType ?? base?.watchRule.watchRuleType ?? "advanced"
    if (type !== "simple" && type !== "advanced")
      return yield* invalid("watchRule.watchRuleType", "must be simple or advanced")
    const expressions = w.expressions ?? base?.watchRule.expressions
    if (
      !Array.isArray(expressions) ||
      expressions.length === 0 ||
      expressions.length > limits.maxExpressions ||
      !expressions.every((e) => typeof e === "string")
    )
      return yield* invalid("watchRule.expressions", `must be 1 to ${limits.maxExpressions} rule expressions (strings)`)
    return { watchRuleType: type, expressions: expressions as ReadonlyArray<string> }
  })

/**
 * The options a request gives over `options` (the bot's, or the defaults): each given one checked, the others
 * kept. `literalDefs` is kept as the text received when the host has it (exact numbers), else as JSON.
 */
const optionsOf = (
  options: Fields["options"],
  o: unknown,
  literalDefsText: string | undefined
): Effect.Effect<Fields["options"], InvalidBot> =>
  Effect.gen(function* () {
    if (!isObject(o)) return yield* invalid("options", "must be an object")
    const range = o.topLevelTxBlockRange
    if (
      range !== undefined &&
      (typeof range !== "number" || !Number.isSafeInteger(range) || range < 0 || range > limits.maxBlockRange)
    )
      return yield* invalid(
        "options.topLevelTxBlockRange",
        `must be a whole number of blocks from 0 (the same block) to ${limits.maxBlockRange}`
      )
    const scope = o.ruleScope
    if (
      scope !== undefined &&
      !(
        isObject(scope) &&
        typeof scope.contractName === "string" &&
        typeof scope.groupId === "string" &&
        typeof scope.member === "boolean"
      )
    )
      return yield* invalid("options.ruleScope", "must be {contractName, groupId, member}")
    if (o.literalDefs !== undefined && !isObject(o.literalDefs))
      return yield* invalid("options.literalDefs", "must be an object of placeholder values")
    // The text as received when the host has it (exact numbers); else the object as JSON.
    const literalDefs =
      o.literalDefs === undefined ? options.literalDefs : (literalDefsText ?? encodeJson(o.literalDefs))
    if (o.literalDefs !== undefined && Object.keys(o.literalDefs as object).length > limits.maxLiteralDefs)
      return yield* invalid("options.literalDefs", `must have at most ${limits.maxLiteralDefs} placeholders`)
    if (literalDefs !== undefined && literalDefs.length > limits.maxLiteralDefsLength)
      return yield* invalid("options.literalDefs", `must be at most ${limits.maxLiteralDefsLength} characters of JSON`)
    const interval = o.notifyMinIntervalSeconds
    if (
      interval !== undefined &&
      (typeof interval !== "number" || !Number.isSafeInteger(interval) || interval < 0 || interval > 604_800)
    )
      return yield* invalid("options.notifyMinIntervalSeconds", "must be a whole number of seconds from 0 to 604800")
    const threshold = o.alertThreshold
    if (
      threshold !== undefined &&
      !(
        isObject(threshold) &&
        typeof threshold.count === "number" &&
        Number.isSafeInteger(threshold.count) &&
        threshold.count >= 1 &&
        threshold.count <= 1_000 &&
        typeof threshold.windowSeconds === "number" &&
        Number.isSafeInteger(threshold.windowSeconds) &&
        threshold.windowSeconds >= 1 &&
        threshold.windowSeconds <= 604_800
      )
    )
      return yield* invalid("options.alertThreshold", "must be {count: 1 to 1000, windowSeconds: 1 to 604800}")
    const kept = <K extends "notifyMinIntervalSeconds" | "alertThreshold">(name: K, given: unknown) =>
      given === undefined ? (options[name] === undefined ? {} : { [name]: options[name] }) : { [name]: given }
    return {
      ...kept("notifyMinIntervalSeconds", interval),
      ...kept("alertThreshold", threshold),
      topLevelTxBlockRange: range ?? options.topLevelTxBlockRange,
      ...(literalDefs === undefined ? {} : { literalDefs }),
      ...(scope === undefined
        ? options.ruleScope === undefined
          ? {}
          : { ruleScope: options.ruleScope }
        : {
            ruleScope: scope as { contractName: string; groupId: string; member: boolean }
          })
    }
  })
