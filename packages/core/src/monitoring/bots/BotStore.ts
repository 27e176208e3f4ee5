/**
 * Port: the monitoring bots each API key created (spec §2.8): what they watch on which chain, how matches are
 * notified, and their revision ({@link Bot}).
 */
import { Context, type Effect } from "effect"
import type { StoreError } from "../../kernel/index.ts"

import type { Bot } from "./Bot.ts"

export { Bot, Severity } from "./Bot.ts"

/** Stored bots. */
export class BotStore extends Context.Service<
  BotStore,
  {
    /**
     * Stores a new bot unless its key already has `max` bots (counted in the same transaction, so keys racing on
     * several instances never pass the cap); `false` then, nothing stored.
     */
    readonly add: (bot: Bot, max?: number) => Effect.Effect<boolean, StoreError.StoreError>
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
