/** BotStore in process memory: bots in a map, each method one synchronous step. */
import { BotStore } from "@vigil/core"
import { Effect, Layer } from "effect"

const make = Effect.sync(() => {
  const bots = new Map<string, BotStore.Bot>()
  /** The key's bots, oldest first. */
  const ofKey = (keyId: string) =>
    [...bots.values()]
      .filter((b) => b.keyId === keyId)
      .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))
  return BotStore.BotStore.of({
    add: (bot, max = Infinity) =>
      Effect.sync(() => {
        if (ofKey(bot.keyId).length >= max) return false
        bots.set(bot.id, bot)
        return true
      }),
    list: (keyId, chainId) =>
      Effect.sync(() => ofKey(keyId).filter((b) => chainId === undefined || b.chainId === chainId)),
    active: () =>
      Effect.sync(() =>
        [...bots.values()]
          .filter((b) => b.active)
          .sort((a, b) => a.chainId - b.chainId || (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))
      ),
    get: (keyId, id) =>
      Effect.sync(() => {
        const b = bots.get(id)
        return b?.keyId === keyId ? b : undefined
      }),
    update: (bot) =>
      Effect.sync(() => {
        const current = bots.get(bot.id)
        if (current?.keyId !== bot.keyId || current.revision !== bot.revision - 1) return false
        bots.set(bot.id, bot)
        return true
      }),
    remove: (keyId, id) =>
      Effect.sync(() => {
        if (bots.get(id)?.keyId !== keyId) return false
        return bots.delete(id)
      })
  })
})

/** The memory BotStore; each build starts empty. */
export const layer: Layer.Layer<BotStore.BotStore> = Layer.effect(BotStore.BotStore)(make)
