/** WebhookStore in process memory: webhooks and deliveries in maps, each method one synchronous step. */
import { WebhookStore } from "@vigil/core"
import { Effect, type Layer } from "effect"

type Webhook = WebhookStore.Webhook
type Delivery = WebhookStore.Delivery

const make = Effect.sync(() => {
  const webhooks = new Map<string, Webhook>()
  const deliveries = new Map<string, Delivery>()
  const ofKey = (keyId: string, scope: WebhookStore.Scope = "webhooks") =>
    [...webhooks.values()].filter((w) => w.keyId === keyId && WebhookStore.scopeOf(w) === scope)

  /** How attempt number `attempt` of delivery `id` ended, if it is still that attempt. */
  const settleOne = ({ id, attempt, settlement: s }: WebhookStore.Settle): void => {
    const d = deliveries.get(id)
    if (d === undefined || d.attempts !== attempt || d.status !== "pending") return
    switch (s._tag) {
      case "Delivered": {
        deliveries.set(id, { ...d, status: "delivered" })
        const w = webhooks.get(d.webhookId)
        if (w) webhooks.set(w.id, { ...w, deliveryCount: w.deliveryCount + 1, lastDelivery: s.at })
        return
      }
      case "Retry":
        deliveries.set(id, { ...d, nextAttemptAt: s.at, lastError: s.error })
        return
      case "Dead":
        deliveries.set(id, { ...d, status: "dead", lastError: s.error })
        return
      case "Gone": {
        const w = webhooks.get(d.webhookId)
        if (w) webhooks.set(w.id, { ...w, disabledAt: s.at })
        for (const [k, other] of deliveries) {
          if (other.webhookId === d.webhookId && (other.status === "pending" || k === id)) {
            deliveries.set(k, { ...other, status: "dead", lastError: s.error })
          }
        }
      }
    }
  }

  const store: WebhookStore.Both = {
    register: (webhook, max) =>
      Effect.sync(() => {
        if (ofKey(webhook.keyId, WebhookStore.scopeOf(webhook)).length >= max) return false
        webhooks.set(webhook.id, webhook)
        return true
      }),
    list: (keyId, scope) => Effect.sync(() => ofKey(keyId, scope)),
    remove: (keyId, id, scope = "webhooks") =>
      Effect.sync(() => {
        const w = webhooks.get(id)
        if (w === undefined || w.keyId !== keyId || WebhookStore.scopeOf(w) !== scope) return false
        webhooks.delete(id)
        for (const [k, d] of deliveries) if (d.webhookId === id && d.status === "pending") deliveries.delete(k)
        return true
      }),
    enqueue: (batch) =>
      Effect.sync(() => {
        let stored = 0
        for (const d of batch) {
          const w = webhooks.get(d.webhookId)
          if (w === undefined || w.disabledAt !== undefined) continue
          deliveries.set(d.id, d)
          stored++
        }
        return stored
      }),
    claim: ({ now, limit, perKey, leaseUntil, inFlight = {}, perDestination = Infinity, settle = [] }) =>
      Effect.sync(() => {
        settle.forEach(settleOne)
        const due = [...deliveries.values()]
          .filter(
            (d) =>
              d.status === "pending" &&
              d.nextAttemptAt <= now &&
              webhooks.get(d.webhookId)?.disabledAt === undefined &&
              webhooks.has(d.webhookId)
          )
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
        // Each destination's oldest due deliveries, destinations in order of their oldest.
        const taken = new Map<string, number>()
        const candidates = due.filter((d) => {
          const n = taken.get(d.webhookId) ?? 0
          taken.set(d.webhookId, n + 1)
          return n < Math.min(perDestination, Math.max(perKey, 1))
        })
        return WebhookStore.fairPick(
          candidates.map((d) => ({ delivery: d, webhook: webhooks.get(d.webhookId)! })),
          limit,
          perKey,
          perDestination,
          inFlight
        ).map((c) => {
          const leased = { ...c.delivery, attempts: c.delivery.attempts + 1, nextAttemptAt: leaseUntil }
          deliveries.set(leased.id, leased)
          return { delivery: leased, webhook: c.webhook }
        })
      }),
    backlog: () =>
      Effect.sync(() => {
        const byType = new Map<string, { type: string; pending: number; dead: number }>()
        for (const d of deliveries.values()) {
          if (d.status === "delivered") continue
          const type = webhooks.get(d.webhookId)?.channel?.type ?? "intelligence"
          const row = byType.get(type) ?? { type, pending: 0, dead: 0 }
          byType.set(type, row)
          if (d.status === "pending") row.pending++
          else row.dead++
        }
        return [...byType.values()].sort((a, b) => (a.type < b.type ? -1 : 1))
      }),
    park: (keyId, ids, reason) =>
      Effect.sync(() => {
        const parked = new Set(ids)
        let n = 0
        for (const [k, d] of deliveries)
          if (d.keyId === keyId && parked.has(d.webhookId) && d.status === "pending") {
            deliveries.set(k, { ...d, status: "dead", lastError: reason })
            n++
          }
        return n
      }),
    redeliver: (keyId, id, now, scope = "webhooks") =>
      Effect.sync(() => {
        const w = webhooks.get(id)
        if (w === undefined || w.keyId !== keyId || WebhookStore.scopeOf(w) !== scope) return undefined
        if (w.disabledAt !== undefined) return 0
        let requeued = 0
        for (const [k, d] of deliveries)
          if (d.webhookId === id && d.status === "dead") {
            deliveries.set(k, { ...d, status: "pending", attempts: 0, nextAttemptAt: now })
            requeued++
          }
        return requeued
      }),
    redeliverEvents: (keyId, correlationIds, now) =>
      Effect.sync(() => {
        const events = new Set(correlationIds)
        let requeued = 0
        for (const [k, d] of deliveries) {
          const to = webhooks.get(d.webhookId)
          if (d.keyId === keyId && d.status === "dead" && events.has(d.correlationId) && to && !to.disabledAt) {
            deliveries.set(k, { ...d, status: "pending", attempts: 0, nextAttemptAt: now })
            requeued++
          }
        }
        return requeued
      }),
    deliveriesOf: (ids) =>
      Effect.sync(() => {
        const wanted = new Set(ids)
        return [...deliveries.values()].filter((d) => wanted.has(d.correlationId))
      }),
    stats: (keyId, scope) =>
      Effect.sync(() =>
        ofKey(keyId, scope).map((w) => {
          const mine = [...deliveries.values()].filter((d) => d.webhookId === w.id)
          // The newest that met an error or went through: a destination that recovered shows none.
          const newest = [...mine].reverse().find((d) => d.lastError !== undefined || d.status === "delivered")
          const lastError = newest?.status === "delivered" ? undefined : newest?.lastError
          return {
            id: w.id,
            url: w.url,
            deliveryCount: w.deliveryCount,
            ...(w.lastDelivery === undefined ? {} : { lastDelivery: w.lastDelivery }),
            pending: mine.filter((d) => d.status === "pending").length,
            failed: mine.filter((d) => d.status === "dead").length,
            disabled: w.disabledAt !== undefined,
            ...(lastError === undefined ? {} : { lastError })
          }
        })
      )
  }
  return store
})

/** A layer with a fresh, empty in-memory outbox and its destinations. */
export const layer: Layer.Layer<WebhookStore.WebhookStore | WebhookStore.Destinations> = WebhookStore.layerOf(make)
