/**
 * The outbox as the services that queue messages see it: storing deliveries and waking this process's delivery
 * loop is one operation, so no caller forgets the second half (the loop would find them only at its next poll).
 * A step that stores deliveries inside another store's transaction (a follower's step, with its alerts and
 * cursor) wakes the loop once that transaction is committed.
 */
import { Context, Effect, Layer, Queue } from "effect"
import { RandomIds, type StoreError } from "../kernel/index.ts"
import { Wake } from "./WebhookDispatcher.ts"
import { type Delivery, WebhookStore } from "./WebhookStore.ts"

/**
 * A new delivery's id (`msg_…`, the `webhook-id` receivers deduplicate by): the time queued in base 36, then 16
 * random alphanumerics.
 */
export const messageId = (now: number): string => `msg_${now.toString(36)}${RandomIds.alphanumeric(16)}`

/** Queues deliveries. */
export class Outbox extends Context.Service<
  Outbox,
  {
    /** Stores `deliveries` (all or none; those whose destination is gone or disabled are left out) and wakes the loop: how many were stored. */
    readonly enqueue: (deliveries: ReadonlyArray<Delivery>) => Effect.Effect<number, StoreError.StoreError>
    /** Wakes the loop: deliveries were stored (or queued again) by another operation. */
    readonly wake: Effect.Effect<void>
  }
>()("@vigil/core/Outbox") {
  static readonly layer: Layer.Layer<Outbox, never, WebhookStore | Wake> = Layer.effect(Outbox)(
    Effect.gen(function* () {
      const store = yield* WebhookStore
      const wake = yield* Wake
      const nudge = Effect.asVoid(Queue.offer(wake, undefined))
      return Outbox.of({
        enqueue: (deliveries) =>
          deliveries.length === 0
            ? Effect.succeed(0)
            : Effect.tap(store.enqueue(deliveries), (stored) => (stored > 0 ? nudge : Effect.void)),
        wake: nudge
      })
    })
  )
}
