/** QuotaStore in process memory: each charge runs in one synchronous step, so concurrent fibers cannot interleave. */
import { QuotaStore } from "@vigil/core"
import { Effect, Layer } from "effect"

const slot = (w: QuotaStore.QuotaWindow): string => `${w.key}\u0000${w.start}`

/** Builds a fresh in-memory QuotaStore; counts live as long as the layer. */
const make = Effect.sync(() => {
  const counts = new Map<string, { readonly end: number; used: number }>()
  const current = (windows: ReadonlyArray<QuotaStore.QuotaWindow>) => windows.map((w) => counts.get(slot(w))?.used ?? 0)
  return QuotaStore.QuotaStore.of({
    charge: (cost, windows) =>
      Effect.sync(() => {
        const outcome = QuotaStore.decide(cost, windows, current(windows))
        if (outcome.granted) {
          for (const w of windows) {
            const add = w.cost ?? cost
            if (add === 0) continue
            const entry = counts.get(slot(w))
            if (entry) entry.used += add
            else counts.set(slot(w), { end: w.start + w.millis, used: add })
          }
        }
        return outcome
      }),
    usage: (windows) => Effect.sync(() => QuotaStore.decide(0, windows, current(windows)).windows),
    prune: (before) =>
      Effect.sync(() => {
        let removed = 0
        for (const [k, entry] of counts) {
          if (entry.end <= before) {
            counts.delete(k)
            removed++
          }
        }
        return removed
      })
  })
})

/** A layer with a fresh in-memory QuotaStore. */
export const layer: Layer.Layer<QuotaStore.QuotaStore> = Layer.effect(QuotaStore.QuotaStore)(make)
