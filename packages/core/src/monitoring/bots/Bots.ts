/**
 * Monitoring bots (spec §2.8): created and updated with their watch rules checked against the key's contracts on
 * the bot's chain, so a bot that is stored is a bot that can run. Decisions where the spec is silent:
 * - Required on create: `botName`, `chainId`, `watchRule.expressions` (1 to 20). Defaults: `active` true,
 *   `severity` Medium, `watchRule.watchRuleType` advanced, `notifications` none,
 *   `options.topLevelTxBlockRange` 100 (0 to 10,000; 0 is the same block). `notifications` are ids of the key's
 *   notification channels (an unknown one is refused; repeats are dropped).
 * - An update takes any subset; `chainId` may be repeated but not changed. An update checks the rules again
 *   against the contracts as they are then (unless it only leaves the bot inactive: a bot a removed contract
 *   broke can be switched off), and raises the revision; two updates of one revision conflict.
 * - `options.literalDefs` is taken as its JSON text, so its numbers are read exactly (`1e+27` is 10^27).
 * - `options.notifyMinIntervalSeconds` and `options.alertThreshold {count, windowSeconds}` limit the notifications
 *   of live alerts (block time); alerts are recorded all the same.
 * - The expressions of a bot are one rule: AND-ed, `txN` naming the same transaction in each (FailSafe: "equivalent
 *   to using the && operator").
 * - A bot watches from the moment it is created: create, and an update that switches it on or changes its rules,
 *   set `watchingFrom` to the block after the chain node's head as it answers, and the follower runs the bot on
 *   every block from there (one it processed before the bot was stored too, and the blocks a bot missed while it
 *   was skipped, once it can run again). A node that does not answer fails the request (nothing is stored); with
 *   no node configured for the chain the bot is stored without `watchingFrom` (it is not followed until a node is
 *   configured, and then runs from the block the follower processes next).
 */
import { randomBytes } from "@noble/hashes/utils.js"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { WebhookStore } from "../../delivery/index.ts"
import { Instant, type StoreError } from "../../kernel/index.ts"
import { type Bot, BotStore, Severity } from "./BotStore.ts"
import { ChainData, type ChainDataError } from "../chain/ChainData.ts"
import { ContractStore } from "../contracts/ContractStore.ts"
import * as Messages from "../alerts/Messages.ts"
import * as Checker from "../rules/Checker.ts"
import * as Literals from "../rules/Literals.ts"

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
const randomSuffix = (n: number) => Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join("")

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

type Fields = Omit<Bot, "id" | "keyId" | "revision" | "created" | "updated">

/**
 * What decides a bot's matches, as text to compare: a change of it is a new rule (the bot watches afresh, and its
 * transactions must be joined); names, severity, channels and notification limits are not.
 */
const ruleOf = (b: Fields): string =>
  JSON.stringify([
    b.watchRule,
    b.options.literalDefs ?? null,
    b.options.ruleScope ?? null,
    b.options.topLevelTxBlockRange
  ])

/** The bot `fields` describe over `base` (create: none), each field checked; the rules are checked apart. */
const merge = (base: Fields | undefined, request: BotRequest): Effect.Effect<Fields, InvalidBot> =>
  Effect.gen(function* () {
    const f = request.fields
    const invalid = (field: string, message: string) => new InvalidBot({ field, message })
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
    let watchRule = base?.watchRule
    if (has("watchRule")) {
      const w = f.watchRule
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
        return yield* invalid(
          "watchRule.expressions",
          `must be 1 to ${limits.maxExpressions} rule expressions (strings)`
        )
      watchRule = { watchRuleType: type, expressions: expressions as ReadonlyArray<string> }
    }
    if (
      has("notifications") &&
      (!Array.isArray(f.notifications) || !f.notifications.every((n) => typeof n === "string"))
    )
      return yield* invalid("notifications", "must be a list of notification channel ids")
    let options = base?.options ?? { topLevelTxBlockRange: 100 }
    if (has("options")) {
      const o = f.options
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
        o.literalDefs === undefined ? options.literalDefs : (request.literalDefs ?? encodeJson(o.literalDefs))
      if (o.literalDefs !== undefined && Object.keys(o.literalDefs as object).length > limits.maxLiteralDefs)
        return yield* invalid("options.literalDefs", `must have at most ${limits.maxLiteralDefs} placeholders`)
      if (literalDefs !== undefined && literalDefs.length > limits.maxLiteralDefsLength)
        return yield* invalid(
          "options.literalDefs",
          `must be at most ${limits.maxLiteralDefsLength} characters of JSON`
        )
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
      options = {
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
    }
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
      watchRule: watchRule!,
      notifications: pick("notifications", []),
      ...(version === undefined ? {} : { botVersion: version }),
      options
    }
  })

/** Bots, per API key. */
export class Bots extends Context.Service<
  Bots,
  {
    readonly create: (
      keyId: string,
      request: BotRequest
    ) => Effect.Effect<Bot, InvalidBot | BotLimitReached | ChainDataError | StoreError.StoreError>
    readonly update: (
      keyId: string,
      id: string,
      request: BotRequest
    ) => Effect.Effect<Bot, InvalidBot | BotNotFound | BotConflict | ChainDataError | StoreError.StoreError>
    readonly list: (keyId: string, chainId?: number) => Effect.Effect<ReadonlyArray<Bot>, StoreError.StoreError>
    readonly get: (keyId: string, id: string) => Effect.Effect<Bot, BotNotFound | StoreError.StoreError>
    readonly remove: (keyId: string, id: string) => Effect.Effect<void, BotNotFound | StoreError.StoreError>
    /**
     * The key's bots (on one chain, when given) whose rules do not check against its contracts as they are now,
     * or as they would be `without` one of them: what removing a contract would break, reported rather than found
     * out when nothing matches.
     */
    readonly audit: (
      keyId: string,
      options?: { readonly chainId?: number; readonly without?: string }
    ) => Effect.Effect<ReadonlyArray<Broken>, StoreError.StoreError>
  }
>()("@vigil/core/Bots") {
  /** The service over a BotStore and a ContractStore. */
  static readonly layer: Layer.Layer<Bots, never, BotStore | ContractStore | WebhookStore.WebhookStore | ChainData> =
    Layer.effect(Bots)(
      Effect.gen(function* () {
        const store = yield* BotStore
        const chain = yield* ChainData
        /**
         * The block a bot switched on now watches from: the one after the node's head, so every transaction mined
         * after the answer is watched (and none mined before); none when no node is configured.
         */
        const watchingFrom = (chainId: number) =>
          chain.head(chainId).pipe(
            Effect.map((head) => ({ watchingFrom: { chainId, blockNumber: head + 1 } })),
            Effect.catchIf(
              (e) => e.reason === "NotConfigured",
              () => Effect.succeed({})
            )
          )
        const contracts = yield* ContractStore
        const destinations = yield* WebhookStore.WebhookStore

        /** Every channel id of `fields` is a notification channel of the key. */
        const channelsOf = Effect.fnUntraced(function* (keyId: string, fields: Fields) {
          if (fields.notifications.length === 0) return fields
          const known = new Set((yield* destinations.list(keyId, "channels")).map((c) => c.id))
          const unknown = [...new Set(fields.notifications)].filter((id) => !known.has(id))
          if (unknown.length > 0)
            return yield* new InvalidBot({
              field: "notifications",
              message: `${unknown.join(", ")} ${unknown.length === 1 ? "is not a notification channel" : "are not notification channels"} of this key (POST /v1/notifications)`
            })
          return { ...fields, notifications: [...new Set(fields.notifications)] }
        })

        /** The problems of `fields`' rules against the key's contracts on its chain, positioned per expression. */
        const problemsOf = Effect.fnUntraced(function* (
          keyId: string,
          fields: Fields,
          options: { readonly without?: string; readonly requireJoin?: boolean } = {}
        ) {
          const onChain = (yield* contracts.list(keyId, fields.chainId)).filter((c) => c.id !== options.without)
          const literalDefs =
            fields.options.literalDefs === undefined ? new Map() : Literals.fromJson(fields.options.literalDefs)
          if (typeof literalDefs === "string")
            return { field: "options.literalDefs", message: literalDefs, problems: [] }
          const result = Checker.checkRule(fields.watchRule.expressions, {
            contracts: onChain,
            literalDefs,
            watchRuleType: fields.watchRule.watchRuleType,
            ...(fields.options.ruleScope === undefined ? {} : { ruleScope: fields.options.ruleScope }),
            ...(options.requireJoin === true ? { requireJoin: true } : {})
          })
          return result.ok ? undefined : { field: "watchRule.expressions", message: "", problems: result.problems }
        })

        /**
         * Parks the backlog of those of `channels` no bot of the key sends to any more: dead-lettered with the
         * reason (visible, sent again on redelivery), so it is never retried ahead of live messages.
         */
        const parkUnused = Effect.fnUntraced(function* (keyId: string, channels: ReadonlyArray<string>) {
          if (channels.length === 0) return
          const used = new Set((yield* store.list(keyId)).flatMap((b) => b.notifications))
          const unused = channels.filter((c) => !used.has(c))
          if (unused.length === 0) return
          yield* destinations.park(
            keyId,
            unused,
            "parked: no bot sends to this channel any more (POST /v1/notifications/:channelId/redeliver sends it)"
          )
        })

        /** `fields` with their rules checked; new rules must join their transactions (stored ones run as they are). */
        const checked = Effect.fnUntraced(function* (keyId: string, fields: Fields, newRules: boolean) {
          const found = yield* problemsOf(keyId, fields, { requireJoin: newRules })
          if (found === undefined) return fields
          const first = found.problems[0]
          return yield* new InvalidBot({
            field: found.field,
            message:
              first === undefined
                ? found.message
                : `expression ${first.expression + 1} at ${first.offset}: ${first.message}${found.problems.length > 1 ? ` (and ${found.problems.length - 1} more)` : ""}`,
            ...(found.problems.length === 0 ? {} : { problems: found.problems })
          })
        })

        const get = (keyId: string, id: string) =>
          Effect.flatMap(store.get(keyId, id), (b) =>
            b === undefined ? Effect.fail(new BotNotFound({ id })) : Effect.succeed(b)
          )

        return {
          create: Effect.fn("Bots.create")(function* (keyId: string, request: BotRequest) {
            const fields = yield* channelsOf(keyId, yield* checked(keyId, yield* merge(undefined, request), true))
            // Checked first so a full key is told at once; the store checks again as it stores (a race).
            if ((yield* store.list(keyId)).length >= limits.maxPerKey)
              return yield* new BotLimitReached({ max: limits.maxPerKey })
            const from = fields.active ? yield* watchingFrom(fields.chainId) : {}
            const now = yield* Clock.currentTimeMillis
            const bot: Bot = {
              id: `bot_${now}_${randomSuffix(9)}`,
              keyId,
              ...fields,
              ...from,
              revision: 1,
              created: Instant.iso(now),
              updated: Instant.iso(now)
            }
            if (!(yield* store.add(bot, limits.maxPerKey))) return yield* new BotLimitReached({ max: limits.maxPerKey })
            return bot
          }),
          update: Effect.fn("Bots.update")(function* (keyId: string, id: string, request: BotRequest) {
            const current = yield* get(keyId, id)
            const merged = yield* merge(current, request)
            // A bot a removed contract broke can still be switched off without mending its rules first.
            const touchesRules = request.fields.watchRule !== undefined || request.fields.options !== undefined
            const newRules = ruleOf(current) !== ruleOf(merged)
            const ruled = merged.active || touchesRules ? yield* checked(keyId, merged, newRules) : merged
            const fields = request.fields.notifications === undefined ? ruled : yield* channelsOf(keyId, ruled)
            // Paused by the follower and still off: the reason stays until it is switched on.
            const paused =
              !fields.active && current.paused !== undefined && request.fields.active === undefined
                ? { paused: current.paused }
                : {}
            // Switched on, or given new rules: it watches from now. Still on with its rules: from where it did.
            const from = !fields.active
              ? {}
              : !current.active || newRules
                ? yield* watchingFrom(fields.chainId)
                : current.watchingFrom === undefined
                  ? {}
                  : { watchingFrom: current.watchingFrom }
            const now = yield* Clock.currentTimeMillis
            const bot: Bot = {
              ...fields,
              ...from,
              ...paused,
              id,
              keyId,
              revision: current.revision + 1,
              created: current.created,
              updated: Instant.iso(now)
            }
            if (!(yield* store.update(bot))) return yield* new BotConflict({ id })
            yield* parkUnused(keyId, current.notifications)
            return bot
          }),
          list: (keyId, chainId) => store.list(keyId, chainId),
          get,
          remove: Effect.fn("Bots.remove")(function* (keyId: string, id: string) {
            const current = yield* get(keyId, id)
            if (!(yield* store.remove(keyId, id))) return yield* new BotNotFound({ id })
            yield* parkUnused(keyId, current.notifications)
          }),
          audit: Effect.fn("Bots.audit")(function* (
            keyId: string,
            options: { readonly chainId?: number; readonly without?: string } = {}
          ) {
            const broken: Array<Broken> = []
            for (const bot of yield* store.list(keyId, options.chainId)) {
              const found = yield* problemsOf(
                keyId,
                bot,
                options.without === undefined ? {} : { without: options.without }
              )
              if (found !== undefined) broken.push({ bot, problems: found.problems })
            }
            return broken
          })
        }
      })
    )
}
