/**
 * A bot request decoded by its Schema, with the messages the API documents: the errors of the bots service, the
 * limits of one bot, and the merge of a create or update request over the bot it changes.
 */
import { Effect, Schema, SchemaIssue } from "effect"
import * as BotModel from "./Bot.ts"
import type { Bot } from "./BotStore.ts"

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
 * A create or update request, decoded ({@link decodeCreate}, {@link decodeUpdate}, or a host's own decoding of the
 * same Schemas): its fields, and the JSON text of `options.literalDefs` as received, when the host has it (an HTTP
 * body's own text): numbers beyond a double's precision are then kept exact.
 */
export interface BotRequest<Fields = BotModel.Update> {
  readonly fields: Fields
  readonly literalDefs?: string
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** A refusal of a request's Schema as the bots service names it: the field's path and the field's message. */
const refusal = (issue: SchemaIssue.Issue): InvalidBot => {
  const first = formatter(issue).issues[0]
  const path = (first?.path ?? []).map((p) => String(typeof p === "object" && p !== null && "key" in p ? p.key : p))
  return path.length === 0
    ? new InvalidBot({ field: "body", message: "must be an object of bot fields" })
    : new InvalidBot({ field: path.join("."), message: first?.message ?? "is not valid" })
}

const decoding =
  <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) =>
  (fields: unknown): Effect.Effect<S["Type"], InvalidBot> =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(fields), (e) => refusal(e.issue))

/** The fields of a create request decoded, or the first wrong one named. */
export const decodeCreate = decoding(BotModel.Create)

/** The fields of an update request decoded, or the first wrong one named. */
export const decodeUpdate = decoding(BotModel.Update)

/** A bot whose rules no longer check against the key's contracts, and why. */
export interface Broken {
  readonly bot: Bot
  readonly problems: NonNullable<InvalidBot["problems"]>
}

/** Limits of one bot. */
export const limits = BotModel.limits

/** The key has as many bots as it may have. */
export class BotLimitReached extends Schema.TaggedError<BotLimitReached>()("BotLimitReached", { max: Schema.Int }) {
  override get message(): string {
    return `the key has ${this.max} bots, the most it may have; delete one first`
  }
}

const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

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

const defaults: Fields["options"] = { topLevelTxBlockRange: 100 }

/**
 * The bot a decoded request describes over `base` (create: none). Each field was checked as it was decoded; what
 * is left needs the bot: the chain cannot change, and the literal definitions' text has a length.
 */
export const merge = (
  base: Fields | undefined,
  request: BotRequest<BotModel.Update | BotModel.Create>
): Effect.Effect<Fields, InvalidBot> =>
  Effect.gen(function* () {
    const f = request.fields
    if (base !== undefined && f.chainId !== undefined && f.chainId !== base.chainId)
      return yield* new InvalidBot({
        field: "chainId",
        message: `cannot be changed (the bot watches chain ${base.chainId})`
      })
    const chainId = base?.chainId ?? f.chainId
    const expressions = f.watchRule?.expressions ?? base?.watchRule.expressions
    if (chainId === undefined || (f.botName === undefined && base === undefined))
      return yield* new InvalidBot({ field: chainId === undefined ? "chainId" : "botName", message: "is required" })
    if (expressions === undefined) return yield* new InvalidBot({ field: "watchRule", message: "is required" })
    const options =
      f.options === undefined
        ? (base?.options ?? defaults)
        : optionsOf(base?.options ?? defaults, f.options, request.literalDefs)
    if (options.literalDefs !== undefined && options.literalDefs.length > limits.maxLiteralDefsLength)
      return yield* new InvalidBot({
        field: "options.literalDefs",
        message: `must be at most ${limits.maxLiteralDefsLength} characters of JSON`
      })
    const description = f.botDescription ?? base?.botDescription
    const version = f.botVersion ?? base?.botVersion
    return {
      chainId,
      botName: f.botName ?? base?.botName ?? "",
      ...(description === undefined ? {} : { botDescription: description }),
      active: f.active ?? base?.active ?? true,
      severity: f.severity ?? base?.severity ?? "Medium",
      watchRule: {
        watchRuleType: f.watchRule?.watchRuleType ?? base?.watchRule.watchRuleType ?? "advanced",
        expressions
      },
      notifications: f.notifications ?? base?.notifications ?? [],
      ...(version === undefined ? {} : { botVersion: version }),
      options
    }
  })

/**
 * The options a request gives over `options` (the bot's, or the defaults): the given ones taken, the others kept.
 * `literalDefs` is kept as the text received when the host has it (exact numbers), else as JSON.
 */
const optionsOf = (
  options: Fields["options"],
  given: NonNullable<BotModel.Update["options"]>,
  literalDefsText: string | undefined
): Fields["options"] => {
  const literalDefs =
    given.literalDefs === undefined ? options.literalDefs : (literalDefsText ?? encodeJson(given.literalDefs))
  const ruleScope = given.ruleScope ?? options.ruleScope
  const interval = given.notifyMinIntervalSeconds ?? options.notifyMinIntervalSeconds
  const threshold = given.alertThreshold ?? options.alertThreshold
  return {
    ...(interval === undefined ? {} : { notifyMinIntervalSeconds: interval }),
    ...(threshold === undefined ? {} : { alertThreshold: threshold }),
    topLevelTxBlockRange: given.topLevelTxBlockRange ?? options.topLevelTxBlockRange,
    ...(literalDefs === undefined ? {} : { literalDefs }),
    ...(ruleScope === undefined ? {} : { ruleScope })
  }
}
