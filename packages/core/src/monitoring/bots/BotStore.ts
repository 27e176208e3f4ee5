/**
 * Port: the monitoring bots each API key created (spec §2.8): what they watch on which chain, how matches are
 * notified, and their revision. Placeholder values (`options.literalDefs`) are kept as the JSON text they came in,
 * so a number such as `1e+27` is never read through a double.
 */
import { Context, type Effect, Schema } from "effect"
import type { StoreError } from "../../kernel/index.ts"

/** How severe a bot's matches are. */
export const Severity = Schema.Literals(["Critical", "High", "Medium", "Low"])
export type Severity = typeof Severity.Type

/** A bot, as stored (adapters keep it as this Schema's JSON and check it when they read it back). */
export const Bot = Schema.Struct({
  /** `bot_<epoch ms>_<9 lowercase alphanumerics>`. */
  id: Schema.String,
  /** The API key (its id) that owns it. */
  keyId: Schema.String,
  chainId: Schema.Int,
  botName: Schema.String,
  botDescription: Schema.optionalKey(Schema.String),
  active: Schema.Boolean,
  severity: Severity,
  watchRule: Schema.Struct({
    watchRuleType: Schema.Literals(["simple", "advanced"]),
    expressions: Schema.Array(Schema.String)
  }),
  /** Notification channel ids of the same key. */
  notifications: Schema.Array(Schema.String),
  /** The client's own version label of the bot, when it gives one. */
  botVersion: Schema.optionalKey(Schema.String),
  options: Schema.Struct({
    topLevelTxBlockRange: Schema.Int,
    /** The JSON text of `options.literalDefs`, exactly as received (numbers kept exact). */
    literalDefs: Schema.optionalKey(Schema.String),
    ruleScope: Schema.optionalKey(
      Schema.Struct({ contractName: Schema.String, groupId: Schema.String, member: Schema.Boolean })
    ),
    /** Live alerts within this many seconds (block time) of the last one notified are recorded, not notified. */
    notifyMinIntervalSeconds: Schema.optionalKey(Schema.Int),
    /** Live alerts are notified only once `count` of them fall within `windowSeconds` (block time). */
    alertThreshold: Schema.optionalKey(Schema.Struct({ count: Schema.Int, windowSeconds: Schema.Int }))
  }),
  /**
   * The first block the bot is run on: the one after the node's head when it was created, switched on or given new
   * rules (every transaction mined after the answer is watched). Absent
   * when no node was configured for its chain then (it runs from the block the follower processes next).
   */
  watchingFrom: Schema.optionalKey(Schema.Struct({ chainId: Schema.Int, blockNumber: Schema.Int })),
  /**
   * Why the follower switched the bot off (`active` false): its rules went over the evaluation's bounds at a block.
   * Switching it on again clears it.
   */
  paused: Schema.optionalKey(Schema.Struct({ reason: Schema.String, blockNumber: Schema.Int, at: Schema.String })),
  /** Increases by one with every update, from 1. */
  revision: Schema.Int,
  /** ISO 8601 instants. */
  created: Schema.String,
  updated: Schema.String
})
export type Bot = typeof Bot.Type

/** Stored bots. */
export class BotStore extends Context.Service<
  BotStore,
  {
    readonly add: (bot: Bot) => Effect.Effect<void, StoreError.StoreError>
    /** The key's bots (on one chain, when given), oldest first. */
    readonly list: (keyId: string, chainId?: number) => Effect.Effect<ReadonlyArray<Bot>, StoreError.StoreError>
    /** Every active bot of every key: what the chains' followers run, by chain, oldest first. */
    readonly active: () => Effect.Effect<ReadonlyArray<Bot>, StoreError.StoreError>
    /** The key's bot of that id; undefined when the key has none (another key's id included). */
    readonly get: (keyId: string, id: string) => Effect.Effect<Bot | undefined, StoreError.StoreError>
    /**
     * Replaces the key's bot with `bot` (same id) if it is still at `bot.revision - 1`; `false` when it is gone or
     * was changed meanwhile (two updates never silently overwrite each other).
     */
    readonly update: (bot: Bot) => Effect.Effect<boolean, StoreError.StoreError>
    /** Removes the key's bot; `false` when the key has no such bot. */
    readonly remove: (keyId: string, id: string) => Effect.Effect<boolean, StoreError.StoreError>
  }
>()("@vigil/core/BotStore") {}
