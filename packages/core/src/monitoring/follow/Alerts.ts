/**
 * The alerts of a bot as its key sees them: newest first, each with its retraction and its notifications; and an
 * alert's dead-lettered notifications sent again.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Outbox, WebhookStore } from "../../delivery/index.ts"
import type { StoreError } from "../../kernel/index.ts"
import { type BotNotFound, Bots } from "../bots/Bots.ts"
import type { Listed } from "../alerts/Alert.ts"
import { AlertLog } from "./FollowStore.ts"

/** A query of alerts is wrong; `field` names what. */
export class InvalidAlertQuery extends Schema.TaggedError<InvalidAlertQuery>()("InvalidAlertQuery", {
  field: Schema.String,
  message: Schema.String
}) {}

/** The bot has no alert of that id. */
export class AlertNotFound extends Schema.TaggedError<AlertNotFound>()("AlertNotFound", {
  botId: Schema.String,
  id: Schema.String
}) {
  override get message(): string {
    return `bot ${this.botId} has no alert ${this.id}`
  }
}

export { Listed, Notice } from "../alerts/Alert.ts"

/** Alerts per page at most. */
export const maxLimit = 200

/** Reads alerts. */
export class Alerts extends Context.Service<
  Alerts,
  {
    readonly list: (
      keyId: string,
      botId: string,
      query: { readonly limit?: number; readonly before?: string; readonly state?: string }
    ) => Effect.Effect<
      { readonly alerts: ReadonlyArray<Listed>; readonly next?: string },
      InvalidAlertQuery | BotNotFound | StoreError.StoreError
    >
    /**
     * Queues again the alert's notifications (and its retraction's) that were dead-lettered, each with its first
     * delivery id, due now; how many. Channels disabled by a 410 Gone get nothing.
     */
    readonly redeliver: (
      keyId: string,
      botId: string,
      alertId: string
    ) => Effect.Effect<number, BotNotFound | AlertNotFound | StoreError.StoreError>
  }
>()("@vigil/core/Alerts") {
  static readonly layer: Layer.Layer<Alerts, never, Bots | AlertLog | WebhookStore.WebhookStore | Outbox.Outbox> =
    Layer.effect(Alerts)(
      Effect.gen(function* () {
        const bots = yield* Bots
        const store = yield* AlertLog
        const outbox = yield* WebhookStore.WebhookStore
        const wake = (yield* Outbox.Outbox).wake
        return {
          redeliver: Effect.fn("Alerts.redeliver")(function* (keyId, botId, alertId) {
            const bot = yield* bots.get(keyId, botId)
            const alert = yield* store.alert(keyId, bot.id, alertId)
            if (alert === undefined) return yield* new AlertNotFound({ botId: bot.id, id: alertId })
            const now = yield* Clock.currentTimeMillis
            const requeued = yield* outbox.redeliverEvents(
              keyId,
              [alert.id, `${alert.id}:retraction`, `${alert.id}:unverified`],
              now
            )
            if (requeued > 0) yield* wake
            return requeued
          }),
          list: Effect.fn("Alerts.list")(function* (keyId, botId, query) {
            const bot = yield* bots.get(keyId, botId)
            const limit = query.limit ?? 50
            if (!Number.isSafeInteger(limit) || limit < 1 || limit > maxLimit)
              return yield* new InvalidAlertQuery({ field: "limit", message: `must be 1 to ${maxLimit}` })
            const state = query.state
            if (state !== undefined && state !== "active" && state !== "retracted" && state !== "unverified")
              return yield* new InvalidAlertQuery({
                field: "state",
                message: "must be active, retracted or unverified"
              })
            const page = yield* store.alerts(keyId, bot.id, {
              limit: limit + 1,
              ...(query.before === undefined ? {} : { before: query.before }),
              ...(state === undefined ? {} : { state })
            })
            const shown = page.slice(0, limit)
            const notices = (id: string) => [id, `${id}:retraction`, `${id}:unverified`]
            const deliveries = yield* outbox.deliveriesOf(shown.flatMap((a) => notices(a.id)))
            return {
              alerts: shown.map(({ keyId: _, ...a }) => ({
                ...a,
                state:
                  a.retractedAt !== undefined
                    ? ("retracted" as const)
                    : a.unverifiedAt !== undefined
                      ? ("unverified" as const)
                      : ("active" as const),
                notifications: deliveries
                  .filter((d) => notices(a.id).includes(d.correlationId))
                  .map((d) => ({
                    channelId: d.webhookId,
                    kind:
                      d.correlationId === a.id
                        ? ("alert" as const)
                        : d.correlationId.endsWith(":retraction")
                          ? ("retraction" as const)
                          : ("unverified" as const),
                    deliveryId: d.id,
                    status: d.status,
                    attempts: d.attempts,
                    ...(d.lastError === undefined ? {} : { lastError: d.lastError })
                  }))
              })),
              ...(page.length > limit ? { next: shown.at(-1)!.id } : {})
            }
          })
        }
      })
    )
}
