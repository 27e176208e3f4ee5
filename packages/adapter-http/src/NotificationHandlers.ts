/** Handlers of the notification channel routes: answers `{success, channel|channels, timestamp}`. */
import { type ApiKeys, Instant, Notifications, type Quota } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"
import * as Responses from "./Responses.ts"

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
          return Responses.json(201, { success: true, ...created, timestamp: yield* Instant.now })
        }).pipe(answer)
      )
      .handle("list", () =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const channels = yield* notifications.list(client.id)
          return Responses.json(200, { success: true, channels, timestamp: yield* Instant.now })
        }).pipe(answer)
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const channel = yield* notifications.get(client.id, params.channelId)
          return Responses.json(200, { success: true, channel, timestamp: yield* Instant.now })
        }).pipe(answer)
      )
      .handle("remove", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          yield* notifications.remove(client.id, params.channelId)
          return Responses.json(200, {
            success: true,
            message: `notification channel ${params.channelId} deleted`,
            timestamp: yield* Instant.now
          })
        }).pipe(answer)
      )
      .handle("redeliver", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const requeued = yield* notifications.redeliver(client.id, params.channelId)
          return Responses.json(202, {
            success: true,
            channelId: params.channelId,
            requeued,
            message: requeued === 0 ? "nothing was dead-lettered" : `${requeued} message(s) queued again`,
            timestamp: yield* Instant.now
          })
        }).pipe(answer)
      )
      .handle("test", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const deliveryId = yield* notifications.test(client.id, params.channelId)
          return Responses.json(202, {
            success: true,
            deliveryId,
            message: "test message queued",
            timestamp: yield* Instant.now
          })
        }).pipe(answer)
      )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
