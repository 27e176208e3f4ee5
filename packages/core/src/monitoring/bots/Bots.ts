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
import { Clock, Context, Effect, Layer } from "effect"
import { WebhookStore } from "../../delivery/index.ts"
import { Instant, RandomIds, type StoreError } from "../../kernel/index.ts"
import * as BotModel from "./Bot.ts"
import { type Bot, BotStore } from "./BotStore.ts"
import { ChainData, type ChainDataError } from "../chain/ChainData.ts"
import { ContractStore } from "../contracts/ContractStore.ts"
import * as Checker from "../rules/Checker.ts"
import * as Literals from "../rules/Literals.ts"

import {
  BotConflict,
  BotLimitReached,
  BotNotFound,
  type BotRequest,
  type Broken,
  type Fields,
  InvalidBot,
  limits,
  merge,
  ruleOf
} from "./Checks.ts"

export {
  BotConflict,
  BotLimitReached,
  BotNotFound,
  type BotRequest,
  type Broken,
  decodeCreate,
  decodeUpdate,
  ExpressionProblem,
  InvalidBot,
  limits
} from "./Checks.ts"

/** The ports the operations of {@link Bots} use. */
interface Deps {
  readonly store: BotStore["Service"]
  readonly chain: ChainData["Service"]
  readonly contracts: ContractStore["Service"]
  readonly destinations: WebhookStore.Destinations["Service"]
  readonly outbox: WebhookStore.WebhookStore["Service"]
}

/**
 * The block a bot switched on now watches from: the one after the node's head, so every transaction mined
 * after the answer is watched (and none mined before); none when no node is configured.
 */
const watchingFrom = (chain: ChainData["Service"], chainId: number) =>
  chain.head(chainId).pipe(
    Effect.map((head) => ({ watchingFrom: { chainId, blockNumber: head + 1 } })),
    Effect.catchIf(
      (e) => e.reason === "NotConfigured",
      () => Effect.succeed({})
    )
  )
/** Every channel id of `fields` is a notification channel of the key. */
const channelsOf = Effect.fnUntraced(function* (deps: Deps, keyId: string, fields: Fields) {
  if (fields.notifications.length === 0) return fields
  const known = new Set((yield* deps.destinations.list(keyId, "channels")).map((c) => c.id))
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
  deps: Deps,
  keyId: string,
  fields: Fields,
  options: { readonly without?: string; readonly requireJoin?: boolean } = {}
) {
  const onChain = (yield* deps.contracts.list(keyId, fields.chainId)).filter((c) => c.id !== options.without)
  const literalDefs = yield* Effect.result(Literals.fromJson(fields.options.literalDefs))
  if (literalDefs._tag === "Failure")
    return { field: "options.literalDefs", message: literalDefs.failure.message, problems: [] }
  const result = Checker.checkRule(fields.watchRule.expressions, {
    contracts: onChain,
    literalDefs: literalDefs.success,
    watchRuleType: fields.watchRule.watchRuleType,
    ...(fields.options.ruleScope === undefined ? {} : { ruleScope: fields.options.ruleScope }),
    ...(options.requireJoin === true ? { requireJoin: true, refuseUnfed: true } : {})
  })
  return result.ok ? undefined : { field: "watchRule.expressions", message: "", problems: result.problems }
})

/**
 * Parks the backlog of those of `channels` no bot of the key sends to any more: dead-lettered with the
 * reason (visible, sent again on redelivery), so it is never retried ahead of live messages.
 */
const parkUnused = Effect.fnUntraced(function* (deps: Deps, keyId: string, channels: ReadonlyArray<string>) {
  if (channels.length === 0) return
  const used = new Set((yield* deps.store.list(keyId)).flatMap((b) => b.notifications))
  const unused = channels.filter((c) => !used.has(c))
  if (unused.length === 0) return
  yield* deps.outbox.park(
    keyId,
    unused,
    "parked: no bot sends to this channel any more (POST /v1/notifications/:channelId/redeliver sends it)"
  )
})

/** `fields` with their rules checked; new rules must join their transactions (stored ones run as they are). */
const checked = Effect.fnUntraced(function* (deps: Deps, keyId: string, fields: Fields, newRules: boolean) {
  const found = yield* problemsOf(deps, keyId, fields, { requireJoin: newRules })
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

/** A rule to check as a bot would take it (`POST /v1/rules/check`, `vigil rules check`). */
export interface RuleCheckRequest {
  readonly chainId: number
  readonly expressions: ReadonlyArray<string>
  readonly watchRuleType?: "simple" | "advanced"
  /** The JSON text of `options.literalDefs`. */
  readonly literalDefs?: string
  readonly ruleScope?: Checker.Options["ruleScope"]
}

/** What checking a rule found: its normal form, or its problems (each at its expression and offset). */
export type RuleCheck =
  | { readonly ok: true; readonly normal: string }
  | { readonly ok: false; readonly message: string; readonly problems: ReadonlyArray<Checker.RuleProblem> }

/** Bots, per API key. */
export class Bots extends Context.Service<
  Bots,
  {
    readonly create: (
      keyId: string,
      request: BotRequest<BotModel.Create>
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
     * The key's bots (on one chain, when given) whose rules do not check against its contracts as they are now;
     * or, `without` one of them, those that check now and would not without it: what removing that contract would
     * break, reported rather than found out when nothing matches (a bot broken already is not its doing).
     */
    readonly audit: (
      keyId: string,
      options?: { readonly chainId?: number; readonly without?: string }
    ) => Effect.Effect<ReadonlyArray<Broken>, StoreError.StoreError>
    /**
     * Checks a rule against the key's contracts on its chain exactly as creating a bot would (one rule, the
     * expressions AND-ed, its transactions joined), storing nothing.
     */
    readonly check: (keyId: string, request: RuleCheckRequest) => Effect.Effect<RuleCheck, StoreError.StoreError>
  }
>()("@vigil/core/Bots") {
  /** The service over a BotStore and a ContractStore. */
  static readonly layer: Layer.Layer<
    Bots,
    never,
    BotStore | ContractStore | WebhookStore.WebhookStore | WebhookStore.Destinations | ChainData
  > = Layer.effect(Bots)(
    Effect.gen(function* () {
      const store = yield* BotStore
      const chain = yield* ChainData
      const contracts = yield* ContractStore
      const destinations = yield* WebhookStore.Destinations
      const outbox = yield* WebhookStore.WebhookStore
      const deps: Deps = { store, chain, contracts, destinations, outbox }

      const get = (keyId: string, id: string) =>
        Effect.flatMap(store.get(keyId, id), (b) =>
          b === undefined ? Effect.fail(new BotNotFound({ id })) : Effect.succeed(b)
        )

      const check = (keyId: string, request: RuleCheckRequest) =>
        Effect.gen(function* (): Effect.fn.Return<RuleCheck, StoreError.StoreError> {
          const onChain = yield* contracts.list(keyId, request.chainId)
          if (request.literalDefs !== undefined && request.literalDefs.length > BotModel.limits.maxLiteralDefsLength)
            return {
              ok: false,
              message: `options.literalDefs: must be at most ${BotModel.limits.maxLiteralDefsLength} characters of JSON`,
              problems: []
            }
          const defs = yield* Effect.result(Literals.fromJson(request.literalDefs))
          if (defs._tag === "Failure")
            return { ok: false, message: `options.literalDefs: ${defs.failure.message}`, problems: [] }
          const literalDefs = defs.success
          const result = Checker.checkRule(request.expressions, {
            contracts: onChain,
            literalDefs,
            watchRuleType: request.watchRuleType ?? "advanced",
            requireJoin: true,
            refuseUnfed: true,
            ...(request.ruleScope === undefined ? {} : { ruleScope: request.ruleScope })
          })
          if (result.ok) return { ok: true, normal: result.rule.normal }
          const failed = new Set(result.problems.map((p) => p.expression)).size
          return {
            ok: false,
            message: `${failed} of ${request.expressions.length} expression${request.expressions.length === 1 ? "" : "s"} did not check`,
            problems: result.problems
          }
        })

      return {
        check,
        create: Effect.fn("Bots.create")(function* (keyId: string, request: BotRequest<BotModel.Create>) {
          const fields = yield* channelsOf(
            deps,
            keyId,
            yield* checked(deps, keyId, yield* merge(undefined, request), true)
          )
          // Checked first so a full key is told at once; the store checks again as it stores (a race).
          if ((yield* store.list(keyId)).length >= limits.maxPerKey)
            return yield* new BotLimitReached({ max: limits.maxPerKey })
          const from = fields.active ? yield* watchingFrom(chain, fields.chainId) : {}
          const now = yield* Clock.currentTimeMillis
          const bot: Bot = {
            id: `bot_${now}_${RandomIds.alphanumeric(9)}`,
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
          const ruled = merged.active || touchesRules ? yield* checked(deps, keyId, merged, newRules) : merged
          const fields = request.fields.notifications === undefined ? ruled : yield* channelsOf(deps, keyId, ruled)
          // Paused by the follower and still off: the reason stays until it is switched on.
          const paused =
            !fields.active && current.paused !== undefined && request.fields.active === undefined
              ? { paused: current.paused }
              : {}
          // Switched on, or given new rules: it watches from now. Still on with its rules: from where it did.
          const from = !fields.active
            ? {}
            : !current.active || newRules
              ? yield* watchingFrom(chain, fields.chainId)
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
          yield* parkUnused(deps, keyId, current.notifications)
          return bot
        }),
        list: (keyId, chainId) => store.list(keyId, chainId),
        get,
        remove: Effect.fn("Bots.remove")(function* (keyId: string, id: string) {
          const current = yield* get(keyId, id)
          if (!(yield* store.remove(keyId, id))) return yield* new BotNotFound({ id })
          yield* parkUnused(deps, keyId, current.notifications)
        }),
        audit: Effect.fn("Bots.audit")(function* (
          keyId: string,
          options: { readonly chainId?: number; readonly without?: string } = {}
        ) {
          const broken: Array<Broken> = []
          for (const bot of yield* store.list(keyId, options.chainId)) {
            const now = yield* problemsOf(deps, keyId, bot)
            if (options.without === undefined) {
              if (now !== undefined) broken.push({ bot, problems: now.problems })
              continue
            }
            if (now !== undefined) continue
            const without = yield* problemsOf(deps, keyId, bot, { without: options.without })
            if (without !== undefined) broken.push({ bot, problems: without.problems })
          }
          return broken
        })
      }
    })
  )
}
