/** Handlers of the webhook routes and of asynchronous intelligence (spec §4.5, §4.6, §7). */
import { Answers, type ApiKeys, Chain, Instant, type Quota, WebhookResponses, Webhooks } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import type { HttpMetrics } from "./HttpMetrics.ts"
import { charging } from "./IntelHandlers.ts"
import * as HttpErrors from "./HttpErrors.ts"
import * as Responses from "./Responses.ts"

/** What the webhook handlers need. */
export type Requirements = Webhooks.Webhooks | Quota.Quota | Answers.Answers | HttpMetrics | ApiKeys.ApiKeys

/** Webhook routes answer their failures in the v2 shape, webhook refusals with spec §7's texts. */
const answer = HttpErrors.answer("v2")

/** The webhooks group (x-api-key). */
export const layer: Layer.Layer<HttpApiGroup.Service<"vigil", "webhooks">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "webhooks",
  Effect.fnUntraced(function* (handlers) {
    const webhooks = yield* Webhooks.Webhooks
    const answers = yield* Answers.Answers
    const charge = yield* charging

    return handlers
      .handle("register", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const registered = yield* webhooks.register(client.id, payload.url)
          return WebhookResponses.registered(registered, yield* Instant.now)
        }).pipe(answer)
      )
      .handle("list", () =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const list = yield* webhooks.list(client.id)
          return WebhookResponses.list(list, yield* Instant.now)
        }).pipe(answer)
      )
      .handle("stats", () =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const stats = yield* webhooks.stats(client.id)
          return WebhookResponses.stats(stats, yield* Instant.now)
        }).pipe(answer)
      )
      .handle("remove", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          yield* webhooks.remove(client.id, params.webhookId)
          return WebhookResponses.deleted(yield* Instant.now)
        }).pipe(answer)
      )
      .handle("intel", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const detected = Chain.detect(payload.address)
          if (!detected.valid) return yield* HttpErrors.fromInvalidAddress("v2")({ message: detected.reason })
          const active = yield* webhooks.active(client.id)
          if (active.length === 0) return yield* new Webhooks.NoWebhooks()
          const decision = yield* charge("v2", client, 1)
          const { data, correlationId, finishedAt } = yield* answers.delivery(payload.address, detected)
          const count = yield* webhooks.enqueue(active, { correlationId, data })
          return HttpApiSchema.withHeaders({
            body: {
              success: true,
              message: `Address intelligence request accepted; the result will be delivered to ${count} webhook${count === 1 ? "" : "s"}`,
              correlation_id: correlationId,
              timestamp: Instant.iso(finishedAt)
            } as const,
            headers: Responses.rateHeaders(decision)
          })
        }).pipe(answer)
      )
  })
).pipe(Layer.provide([Auth.apiKeyLayer, Auth.keyRateLayer]))
