/** Handlers of the notification channel routes: answers `{success, channel|channels, timestamp}`. */
import { type ApiKeys, Instant, Notifications, type Quota } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"

/** What the channel handlers need. */
export type Requirements = Notifications.Notifications | ApiKeys.ApiKeys | Quota.Quota

const answer = HttpErrors.answer("v2")

/** The notifications group (either key header). */
export const layer: Layer.Layer<
  HttpApiGroup.Service<"vigil", "notifications">,
  never,
  Requirements
> = HttpApiBuilder.group(
  VigilApi,
  "notifications",
  Effect.fnUntraced(function* (handlers) {
    const notifications = yield* Notifications.Notifications
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const created = yield* notifications.create(client.id, payload)
          return { success: true, ...created, timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("list", () =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const channels = yield* notifications.list(client.id)
          return { success: true, channels, timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const channel = yield* notifications.get(client.id, params.channelId)
          return { success: true, channel, timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("remove", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          yield* notifications.remove(client.id, params.channelId)
          return {
            success: true,
            message: `notification channel ${params.channelId} deleted`,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("redeliver", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const requeued = yield* notifications.redeliver(client.id, params.channelId)
          return {
            success: true,
            channelId: params.channelId,
            requeued,
            message: requeued === 0 ? "nothing was dead-lettered" : `${requeued} message(s) queued again`,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("test", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const deliveryId = yield* notifications.test(client.id, params.channelId)
          return {
            success: true,
            deliveryId,
            message: "test message queued",
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
