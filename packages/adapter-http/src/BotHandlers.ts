/**
 * Handlers of the monitoring bot routes (spec §2.8, §4.7): answers `{success, bot|bots, timestamp}`. The
 * placeholder values of `options.literalDefs` are taken from the body's own text, so their numbers stay exact.
 */
import { Alerts, type ApiKeys, Bot, Bots, type BotStore, History, Instant, type Quota, Rules } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"

/** What the bot handlers need. */
export type Requirements = Bots.Bots | History.History | Alerts.Alerts | ApiKeys.ApiKeys | Quota.Quota

const answer = HttpErrors.answer("v2")

/** The request as the service takes it: the decoded fields, and the exact text of the literal definitions. */
const request = <Fields>(fields: Fields) =>
  Effect.gen(function* (): Effect.fn.Return<Bots.BotRequest<Fields>, never, HttpServerRequest.HttpServerRequest> {
    const http = yield* HttpServerRequest.HttpServerRequest
    // The body was read to decode the payload; its text is kept, so this reads no more of the socket.
    const text = yield* Effect.orElseSucceed(http.text, () => "")
    const literalDefs = Rules.Literals.textIn(text)
    return literalDefs === undefined ? { fields } : { fields, literalDefs }
  })

/** The bots group (either key header). */
export const layer: Layer.Layer<HttpApiGroup.Service<"vigil", "bots">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "bots",
  Effect.fnUntraced(function* (handlers) {
    const bots = yield* Bots.Bots
    const history = yield* History.History
    const alerts = yield* Alerts.Alerts
    const one = (b: BotStore.Bot) =>
      Effect.map(Instant.now, (timestamp) => ({ success: true, bot: Bot.view(b), timestamp }) as const)
    /** A bot just created or updated, with what it will not do as stored. */
    const changed = (b: BotStore.Bot) =>
      Effect.map(
        Instant.now,
        (timestamp) =>
          ({
            success: true,
            bot: Bot.view(b),
            // Active without watchingFrom just now: the chain has no node (any other node failure refused the request).
            ...(b.active && b.watchingFrom === undefined
              ? {
                  warnings: [
                    `no node is configured for chain ${b.chainId} (VIGIL_RPC_URL_${b.chainId} or --chains): the bot is stored but not followed live until one is, and then runs from the block the follower processes next`
                  ]
                }
              : {}),
            timestamp
          }) as const
      )
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          return yield* changed(yield* bots.create(client.id, yield* request(payload)))
        }).pipe(answer)
      )
      .handle("update", ({ params, payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          return yield* changed(yield* bots.update(client.id, params.botId, yield* request(payload)))
        }).pipe(answer)
      )
      .handle("historicalBlocks", ({ params, payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const done = yield* history.submit(client.id, params.botId, payload)
          return {
            success: true,
            botId: params.botId,
            ...done,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("alerts", ({ params, query }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const page = yield* alerts.list(client.id, params.botId, query)
          return {
            success: true,
            botId: params.botId,
            alerts: page.alerts,
            ...(page.next === undefined ? {} : { next: page.next }),
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("redeliverAlert", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const requeued = yield* alerts.redeliver(client.id, params.botId, params.alertId)
          return {
            success: true,
            botId: params.botId,
            alertId: params.alertId,
            requeued,
            message: requeued === 0 ? "nothing was dead-lettered" : `${requeued} message(s) queued again`,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("historicalProgress", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const progress = yield* history.progress(client.id, params.botId)
          return {
            success: true,
            botId: params.botId,
            ...progress,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("historicalQuery", ({ params, payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const found = yield* history.execute(client.id, params.botId, payload)
          return {
            success: true,
            botId: params.botId,
            ...found,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const list = yield* bots.list(client.id, query.chainId)
          return { success: true, bots: list.map(Bot.view), timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          return yield* one(yield* bots.get(client.id, params.botId))
        }).pipe(answer)
      )
      .handle("remove", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          yield* bots.remove(client.id, params.botId)
          return {
            success: true,
            message: `bot ${params.botId} deleted`,
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
