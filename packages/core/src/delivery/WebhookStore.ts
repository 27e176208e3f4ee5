/**
 * Port: registered destinations and their durable outbox of deliveries, in one store so that accepting a request
 * and storing its deliveries is one atomic step. A destination is an intelligence webhook (`/api/v2/webhooks`) or
 * a channel another context registered (monitoring's notification channels), whose kind that context owns; both
 * share the outbox and its dispatcher, and each call says which it lists, removes or counts.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type { StoreError } from "../kernel/index.ts"

/**
 * What makes a destination a channel of the context that registered it (monitoring's notification channels): its
 * kind (`type`), owned by that context, which delivery only routes on (to the {@link WebhookDispatcher.Senders}
 * entry of the kind) and counts by; its name; and the kind's own settings, which delivery keeps without reading.
 */
export const Channel = Schema.StructWithRest(Schema.Struct({ type: Schema.String, name: Schema.String }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
/** What makes a destination another context's channel: its kind and name, and settings opaque to delivery. */
export type Channel = typeof Channel.Type

/** A channel's stored column: the JSON of its {@link Channel} (the settings kept as they came). */
export const ChannelJson = Schema.fromJsonString(Channel)

/** Which destinations a call is about: intelligence webhooks or notification channels. */
export type Scope = "webhooks" | "channels"

/** The scope a destination belongs to. */
export const scopeOf = (w: Pick<Webhook, "channel">): Scope => (w.channel === undefined ? "webhooks" : "channels")

/** A registered destination: an intelligence webhook, or a notification channel when `channel` is set. */
export interface Webhook {
  /** `wh_<epoch ms>_<9 lowercase alphanumerics>`. */
  readonly id: string
  /** The API key (its id) that owns it. */
  readonly keyId: string
  readonly url: string
  /** Standard Webhooks secret (`whsec_<base64>`), shown to the client once, at registration. */
  readonly secret: string
  /** ISO 8601 instant of registration. */
  readonly created: string
  readonly deliveryCount: number
  /** ISO 8601 instant of the last successful delivery. */
  readonly lastDelivery?: string
  /** ISO 8601 instant the receiver answered 410 Gone; nothing more is sent to it. */
  readonly disabledAt?: string
  /** Set for a notification channel. */
  readonly channel?: Channel
}

/** One delivery of one event to one webhook. */
export interface Delivery {
  /** Stable across attempts (the `webhook-id` header), so receivers can deduplicate. */
  readonly id: string
  readonly webhookId: string
  readonly keyId: string
  readonly correlationId: string
  /** The JSON body, exactly as it is signed and sent. */
  readonly body: string
  /** Attempts made so far. */
  readonly attempts: number
  /** Epoch ms of the next attempt (or the end of the current attempt's lease). */
  readonly nextAttemptAt: number
  readonly status: "pending" | "delivered" | "dead"
  readonly lastError?: string
}

/** How an attempt ended. */
export type Settlement =
  | { readonly _tag: "Delivered"; readonly at: string }
  | { readonly _tag: "Retry"; readonly at: number; readonly error: string }
  | { readonly _tag: "Dead"; readonly error: string }
  /** The receiver answered 410: the webhook is disabled and its pending deliveries are dead-lettered. */
  | { readonly _tag: "Gone"; readonly at: string; readonly error: string }

/** How attempt number `attempt` of delivery `id` ended. */
export interface Settle {
  readonly id: string
  readonly attempt: number
  readonly settlement: Settlement
}

/** What one claim asks for (see {@link WebhookStore}'s `claim`). */
export interface ClaimRequest {
  /** Due at or before this time. */
  readonly now: number
  /** Leased at most this many (0: none, the claim only settles). */
  readonly limit: number
  readonly perKey: number
  /** Default: no cap per destination. */
  readonly perDestination?: number
  readonly leaseUntil: number
  /** What this process already has in flight. */
  readonly inFlight?: InFlight
  /**
   * Attempts that ended since the last claim, settled first, in the claim's own transaction: each records how
   * attempt number `attempt` of the delivery ended (a delivered one also counts on its webhook; a 410 disables the
   * destination and dead-letters its backlog) if it is still that attempt. A sender whose lease ran out, and whose
   * delivery was claimed again (by this or another instance), changes nothing, so it never overwrites the result of
   * the attempt that came after it.
   */
  readonly settle?: ReadonlyArray<Settle>
}

/** Per-webhook delivery counts. */
export interface WebhookStats {
  readonly id: string
  readonly url: string
  readonly deliveryCount: number
  readonly lastDelivery?: string
  readonly pending: number
  readonly failed: number
  readonly disabled: boolean
  /**
   * The error of the newest delivery (in queueing order) that met one, retried or dead-lettered; absent once a
   * newer delivery has gone through (the destination recovered).
   */
  readonly lastError?: string
}

/** A delivery leased by a claim, with its destination. */
export interface Claimed {
  readonly delivery: Delivery
  readonly webhook: Webhook
}

/** Deliveries in flight, by key id and by destination id. */
export interface InFlight {
  readonly keys?: Readonly<Record<string, number>>
  readonly destinations?: Readonly<Record<string, number>>
}

/**
 * The deliveries a claim takes from `candidates` (each destination's oldest due ones, oldest first within it;
 * destinations in order of their oldest): in rounds, each key in turn (the key with the oldest due delivery
 * first) takes one delivery of its next destination in turn, while the key has fewer than `perKey` and the
 * destination fewer than `perDestination` in flight, until `limit`.
 */
export const fairPick = <C extends { readonly delivery: Pick<Delivery, "keyId" | "webhookId"> }>(
  candidates: ReadonlyArray<C>,
  limit: number,
  perKey: number,
  perDestination: number,
  inFlight: InFlight = {}
): ReadonlyArray<C> => {
  const keys = new Map<string, Map<string, Array<C>>>()
  for (const c of candidates) {
    const destinations = keys.get(c.delivery.keyId) ?? new Map<string, Array<C>>()
    keys.set(c.delivery.keyId, destinations)
    const queue = destinations.get(c.delivery.webhookId) ?? []
    destinations.set(c.delivery.webhookId, queue)
    queue.push(c)
  }
  const keyCount = new Map<string, number>()
  const destinationCount = new Map<string, number>()
  const turn = new Map<string, number>()
  const out: Array<C> = []
  for (let progress = true; progress && out.length < limit;) {
    progress = false
    for (const [keyId, destinations] of keys) {
      if (out.length >= limit) break
      const held = keyCount.get(keyId) ?? inFlight.keys?.[keyId] ?? 0
      if (held >= perKey) continue
      const queues = [...destinations.entries()]
      const start = turn.get(keyId) ?? 0
      for (let i = 0; i < queues.length; i++) {
        const [id, queue] = queues[(start + i) % queues.length]!
        const busy = destinationCount.get(id) ?? inFlight.destinations?.[id] ?? 0
        if (queue.length === 0 || busy >= perDestination) continue
        out.push(queue.shift()!)
        keyCount.set(keyId, held + 1)
        destinationCount.set(id, busy + 1)
        turn.set(keyId, (start + i + 1) % queues.length)
        progress = true
        break
      }
    }
  }
  return out
}

/**
 * Port: the durable outbox, as the delivery loop and those who enqueue use it: store deliveries, claim and settle
 * them, park, redeliver by event, read an event's deliveries, and the backlog. The destinations themselves are
 * {@link Destinations}'.
 */
export class WebhookStore extends Context.Service<
  WebhookStore,
  {
    /**
     * Stores deliveries in one step, skipping those whose webhook is gone or disabled by then; returns how many
     * were stored.
     */
    readonly enqueue: (deliveries: ReadonlyArray<Delivery>) => Effect.Effect<number, StoreError.StoreError>
    /**
     * Settles the attempts in `settle`, then leases up to `limit` pending deliveries due at `now` until
     * `leaseUntil`, counting the attempt, all in one transaction; a delivery whose lease runs out (a crash) is due
     * again. Which ones is {@link fairPick}'s rule over each destination's `perDestination` oldest due deliveries:
     * keys in turn, a key's destinations in turn, a key at most `perKey` and a destination at most
     * `perDestination` minus what `inFlight` says they already have in flight. So a key's backlog never keeps
     * another key's newer deliveries out, and a stalled destination never holds its key's other destinations back.
     */
    readonly claim: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<Claimed>, StoreError.StoreError>
    /**
     * Dead-letters the pending deliveries of the key's destinations `ids` with `reason` (what a channel no bot
     * sends to any more does to its backlog: visible, and sent again on redelivery, never retried ahead of live
     * messages); how many.
     */
    readonly park: (
      keyId: string,
      ids: ReadonlyArray<string>,
      reason: string
    ) => Effect.Effect<number, StoreError.StoreError>
    /**
     * Puts the key's dead-lettered deliveries of these events (by `correlationId`) back in the queue, due at `now`
     * with their attempts counted afresh; how many. Those to a disabled destination (410 Gone) are left as they are.
     */
    readonly redeliverEvents: (
      keyId: string,
      correlationIds: ReadonlyArray<string>,
      now: number
    ) => Effect.Effect<number, StoreError.StoreError>
    /** The deliveries of these events (by `correlationId`), in queueing order. */
    readonly deliveriesOf: (
      correlationIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<Delivery>, StoreError.StoreError>
    /**
     * Deliveries waiting (pending) and dead-lettered, by kind of destination: `intelligence` for webhooks, else the
     * channel's type. What an operator alerts on.
     */
    readonly backlog: () => Effect.Effect<
      ReadonlyArray<{ readonly type: string; readonly pending: number; readonly dead: number }>,
      StoreError.StoreError
    >
  }
>()("@vigil/core/WebhookStore") {}

/**
 * Port: the registered destinations of each key (an intelligence webhook, or another context's channel), as their
 * administration uses them: register, list, remove, count their deliveries, send their dead letters again.
 */
export class Destinations extends Context.Service<
  Destinations,
  {
    /**
     * Stores a destination unless its key already has `max` of its scope; `false` when at the limit (nothing
     * stored).
     */
    readonly register: (webhook: Webhook, max: number) => Effect.Effect<boolean, StoreError.StoreError>
    /** The key's destinations of one scope (default: webhooks), oldest first. */
    readonly list: (keyId: string, scope?: Scope) => Effect.Effect<ReadonlyArray<Webhook>, StoreError.StoreError>
    /**
     * Removes the key's destination of that scope (default: webhooks) and its undelivered deliveries; `false` when
     * the key has no such destination in that scope.
     */
    readonly remove: (keyId: string, id: string, scope?: Scope) => Effect.Effect<boolean, StoreError.StoreError>
    /** Delivery counts of the key's destinations of one scope (default: webhooks). */
    readonly stats: (keyId: string, scope?: Scope) => Effect.Effect<ReadonlyArray<WebhookStats>, StoreError.StoreError>
    /**
     * Puts the dead-lettered deliveries of the key's destination of that scope (default: webhooks) back in the
     * queue, due at `now` with their attempts counted afresh; how many, or `undefined` when the key has no such
     * destination. A disabled destination (410 Gone) is left as it is: nothing is sent to it.
     */
    readonly redeliver: (
      keyId: string,
      id: string,
      now: number,
      scope?: Scope
    ) => Effect.Effect<number | undefined, StoreError.StoreError>
  }
>()("@vigil/core/WebhookStore/Destinations") {}

/** Both ports, as an adapter implements them over one store (so registering and enqueuing share its transactions). */
export type Both = WebhookStore["Service"] & Destinations["Service"]

/** The layer of both ports from an adapter's one implementation. */
export const layerOf = <E, R>(
  make: Effect.Effect<Both, E, R>
): Layer.Layer<WebhookStore | Destinations, E, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(
    Effect.map(make, (store) => Context.make(WebhookStore, store).pipe(Context.add(Destinations, store)))
  )
