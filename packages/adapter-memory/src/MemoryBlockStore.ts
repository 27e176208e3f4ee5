/** BlockStore in process memory: blocks by chain and number, bots' submissions as sets. */
import { BlockStore } from "@vigil/core"
import { Effect, Layer } from "effect"

const make = Effect.sync(() => {
  const blocks = new Map<string, BlockStore.StoredBlock>()
  const submitted = new Map<string, Set<number>>()
  const keyOf = (chainId: number, number: number) => `${chainId}:${number}`
  return BlockStore.BlockStore.of({
    put: (list) =>
      Effect.sync(() => {
        for (const b of list) {
          const current = blocks.get(keyOf(b.chainId, b.number))
          if (current === undefined || current.hash !== b.hash || (b.traces && !current.traces))
            blocks.set(keyOf(b.chainId, b.number), b)
        }
      }),
    get: (chainId, numbers) =>
      Effect.sync(() =>
        [...new Set(numbers)]
          .sort((a, b) => a - b)
          .flatMap((n) => {
            const b = blocks.get(keyOf(chainId, n))
            return b === undefined ? [] : [b]
          })
      ),
    submit: (botId, numbers) =>
      Effect.sync(() => {
        const set = submitted.get(botId) ?? new Set<number>()
        for (const n of numbers) set.add(n)
        submitted.set(botId, set)
      }),
    submitted: (botId) => Effect.sync(() => [...(submitted.get(botId) ?? [])].sort((a, b) => a - b)),
    forget: (botId) => Effect.sync(() => void submitted.delete(botId))
  })
})

/** The memory BlockStore; each build starts empty. */
export const layer: Layer.Layer<BlockStore.BlockStore> = Layer.effect(BlockStore.BlockStore)(make)
