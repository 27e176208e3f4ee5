/**
 * FollowStore in process memory: cursors, marks and alerts in maps. A step's deliveries go to the memory
 * WebhookStore of the same layer within the step, with no point between where another fiber could run.
 */
import { FollowStore, WebhookStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

type Mark = FollowStore.Mark
type Alert = FollowStore.Alert

const make = Effect.gen(function* () {
  const outbox = yield* WebhookStore.WebhookStore
  const cursors = new Map<number, Mark>()
  const marks = new Map<number, Map<number, Mark>>()
  /** Alerts in the order stored. */
  const alerts = new Map<string, Alert>()
  const coverage = new Map<number, Map<string, FollowStore.Coverage>>()
  const marksOf = (chainId: number) => {
    const m = marks.get(chainId) ?? new Map<number, Mark>()
    marks.set(chainId, m)
    return m
  }
  const same = (a: Mark | undefined, b: Mark | undefined) =>
    a === undefined ? b === undefined : b !== undefined && a.number === b.number && a.hash === b.hash

  const store: FollowStore.Both = {
    cursor: (chainId) => Effect.sync(() => cursors.get(chainId)),
    coverage: (chainId) => Effect.sync(() => new Map(coverage.get(chainId) ?? [])),
    marks: (chainId, from) =>
      Effect.sync(() =>
        [...marksOf(chainId).values()].filter((m) => m.number >= from).sort((a, b) => a.number - b.number)
      ),
    advance: (chainId, expected, step) =>
      Effect.gen(function* () {
        if (!same(cursors.get(chainId), expected)) return { outcome: "moved" as const, stored: [] }
        const own = marksOf(chainId)
        for (const m of step.blocks) own.set(m.number, m)
        const stored: Array<string> = []
        for (const a of step.alerts) {
          if (alerts.has(a.id)) continue
          alerts.set(a.id, a)
          stored.push(a.id)
        }
        yield* outbox.enqueue(step.deliveries.filter((d) => stored.includes(d.correlationId)))
        const covered = coverage.get(chainId) ?? new Map<string, FollowStore.Coverage>()
        coverage.set(chainId, covered)
        for (const c of step.coverage ?? []) covered.set(c.botId, c)
        const last = step.blocks.at(-1)
        if (last !== undefined) {
          cursors.set(chainId, last)
          for (const n of own.keys()) if (n < last.number - step.keep) own.delete(n)
        }
        return { outcome: "advanced" as const, stored }
      }),
    recent: (botId, since) =>
      Effect.sync(() =>
        [...alerts.values()]
          .filter((a) => a.botId === botId && a.blockTime >= since && a.retractedAt === undefined)
          .sort((a, b) => a.blockTime - b.blockTime)
      ),
    retracted: (chainId) =>
      Effect.sync(
        () => [...alerts.values()].filter((a) => a.chainId === chainId && a.retractedAt !== undefined).length
      ),
    orphaned: (chainId, number) =>
      Effect.sync(() =>
        [...alerts.values()].filter(
          (a) => a.chainId === chainId && a.blockNumber > number && a.retractedAt === undefined
        )
      ),
    rewind: (chainId, expected, step) =>
      Effect.gen(function* () {
        if (!same(cursors.get(chainId), expected)) return "moved" as const
        const own = marksOf(chainId)
        for (const n of own.keys()) if (n > step.ancestor.number) own.delete(n)
        const retracted = new Set<string>()
        for (const id of step.retract) {
          const a = alerts.get(id)
          if (a === undefined || a.retractedAt !== undefined) continue
          alerts.set(id, { ...a, retractedAt: step.at })
          retracted.add(id)
        }
        yield* outbox.enqueue(step.deliveries.filter((d) => retracted.has(d.correlationId.replace(/:retraction$/, ""))))
        cursors.set(chainId, step.ancestor)
        return "advanced" as const
      }),
    reset: (chainId, to, step) =>
      Effect.gen(function* () {
        const own = marksOf(chainId)
        own.clear()
        own.set(to.number, to)
        cursors.set(chainId, to)
        const changed = new Set<string>()
        for (const [ids, field] of [
          [step.retract, "retractedAt"],
          [step.unverify, "unverifiedAt"]
        ] as const)
          for (const id of ids) {
            const a = alerts.get(id)
            if (a === undefined || a.chainId !== chainId || a.retractedAt !== undefined) continue
            if (field === "unverifiedAt" && a.unverifiedAt !== undefined) continue
            alerts.set(id, { ...a, [field]: step.at })
            changed.add(id)
          }
        yield* outbox.enqueue(
          step.deliveries.filter((d) => changed.has(d.correlationId.replace(/:(retraction|unverified)$/, "")))
        )
      }),
    alert: (keyId, botId, id) =>
      Effect.sync(() => {
        const a = alerts.get(id)
        return a !== undefined && a.keyId === keyId && a.botId === botId ? a : undefined
      }),
    alerts: (keyId, botId, query) =>
      Effect.sync(() => {
        const all = [...alerts.values()].filter((a) => a.keyId === keyId && a.botId === botId).reverse()
        const at = query.before === undefined ? -1 : all.findIndex((a) => a.id === query.before)
        return (query.before === undefined ? all : at === -1 ? [] : all.slice(at + 1))
          .filter((a) =>
            query.state === undefined
              ? true
              : query.state === "active"
                ? a.retractedAt === undefined && a.unverifiedAt === undefined
                : query.state === "retracted"
                  ? a.retractedAt !== undefined
                  : a.retractedAt === undefined && a.unverifiedAt !== undefined
          )
          .slice(0, query.limit)
      })
  }
  return store
})

/** A layer with a fresh, empty in-memory FollowStore (and its alerts) over the memory WebhookStore in context. */
export const layer: Layer.Layer<FollowStore.FollowStore | FollowStore.AlertLog, never, WebhookStore.WebhookStore> =
  FollowStore.layerOf(make)
