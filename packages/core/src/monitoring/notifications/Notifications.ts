/**
 * Notification channels of monitoring (`/v1/notifications`): where a bot's alerts go. A channel is a destination
 * of the delivery outbox, so its messages share the intelligence webhooks' durability, retries, dead letters and
 * SSRF guard. Types: `webhook` (Standard Webhooks signed JSON), `slack` and `discord` (incoming-webhook URLs),
 * `telegram` (a bot token and a chat), `email` (recipients; the mail relay is the operator's). Messages are made
 * from a template per channel (`Messages`), rendered when the alert is queued.
 */
import { Clock, Context, Effect, Layer, Result, Schema, SchemaIssue } from "effect"
import { Mailer, Outbox, WebhookStore } from "../../delivery/index.ts"
import type { HostResolver } from "../../delivery/index.ts"
import { Instant, RandomIds, type StoreError } from "../../kernel/index.ts"
import type * as Alert from "../alerts/Alert.ts"
import * as Messages from "../alerts/Messages.ts"
import * as Bot from "../bots/Bot.ts"
import { BotStore } from "../bots/BotStore.ts"
import * as Channel from "./Channel.ts"
import { InvalidChannel, kinds, render } from "./channels/index.ts"

export { InvalidChannel } from "./channels/index.ts"

/** The key has no channel of that id. */
export class ChannelNotFound extends Schema.TaggedError<ChannelNotFound>()("ChannelNotFound", { id: Schema.String }) {
  override get message(): string {
    return `no notification channel ${this.id}`
  }
}

/** The key already has the most channels allowed. */
export class ChannelLimitReached extends Schema.TaggedError<ChannelLimitReached>()("ChannelLimitReached", {
  max: Schema.Int
}) {
  override get message(): string {
    return `at most ${this.max} notification channels per key`
  }
}

/** Bots of the key send to the channel: it is not deleted from under them. */
export class ChannelInUse extends Schema.TaggedError<ChannelInUse>()("ChannelInUse", {
  id: Schema.String,
  bots: Schema.Array(Schema.Struct({ id: Schema.String, botName: Schema.String }))
}) {
  override get message(): string {
    const names = this.bots.map((b) => `${b.id} (${b.botName})`).join(", ")
    return `${this.bots.length === 1 ? "1 bot sends" : `${this.bots.length} bots send`} to channel ${this.id}: ${names}; remove it from their notifications first`
  }
}

/** A channel as the API shows it ({@link Channel.View}). */
export type ChannelView = Channel.View

/** Policy of channels. */
export interface Settings {
  readonly maxPerKey: number
  /** Hosts exempt from the public-address rule (HTTPS is still required): the webhook allow-list. */
  readonly allowHosts: ReadonlyArray<string>
  /** Plain HTTP to loopback accepted (development on one machine; the server listens on loopback). */
  readonly loopbackHttp?: boolean
}

export const defaultSettings: Settings = { maxPerKey: 20, allowHosts: [] }

const view = (w: WebhookStore.Webhook, stats: WebhookStore.WebhookStats | undefined): ChannelView => {
  const c = Channel.settingsOf(w)!
  return {
    id: w.id,
    type: c.type,
    name: c.name,
    ...kinds[c.type].show(w),
    ...(c.template === undefined ? {} : { template: c.template }),
    created: w.created,
    deliveries: {
      delivered: stats?.deliveryCount ?? w.deliveryCount,
      pending: stats?.pending ?? 0,
      failed: stats?.failed ?? 0,
      ...(stats?.lastDelivery === undefined ? {} : { lastDelivery: stats.lastDelivery }),
      ...(stats?.lastError === undefined ? {} : { lastError: stats.lastError })
    },
    disabled: w.disabledAt !== undefined
  }
}

/**
 * The deliveries of `alert` to those of `targets` not disabled, queued at `now`: its message in each channel's
 * form. A retraction's deliveries are the events `<alert id>:retraction`, an alert's the event `<alert id>`.
 */
export const compose = (
  keyId: string,
  targets: ReadonlyArray<WebhookStore.Webhook>,
  alert: Messages.Alert,
  now: number
): ReadonlyArray<WebhookStore.Delivery> => {
  const at = Instant.iso(now)
  return targets
    .filter((w) => w.disabledAt === undefined && Channel.settingsOf(w) !== undefined)
    .map((w) => ({
      id: Outbox.messageId(now),
      webhookId: w.id,
      keyId,
      correlationId:
        alert.kind === "retraction" || alert.kind === "unverified" ? `${alert.id}:${alert.kind}` : alert.id,
      body: render(w, alert, at),
      attempts: 0,
      nextAttemptAt: now,
      status: "pending" as const
    }))
}

/**
 * The deliveries of a notice about a stored `alert` (its retraction, or its being left unverified) to the channels
 * its bot notifies now, queued at `now`: none for an alert that was not notified, or whose bot is gone.
 */
export const notices = Effect.fnUntraced(function* (
  bots: BotStore["Service"],
  outbox: WebhookStore.Destinations["Service"],
  alert: Alert.Alert,
  kind: "retraction" | "unverified",
  now: number
) {
  if (alert.suppressed !== undefined) return []
  const bot = yield* bots.get(alert.keyId, alert.botId)
  if (bot === undefined) return []
  const channels = (yield* outbox.list(alert.keyId, "channels")).filter((c) => bot.notifications.includes(c.id))
  return compose(alert.keyId, channels, Messages.messageOf(alert, bot, kind), now)
})

/** A channel's name is checked as a bot's is. */
const decodeName = Schema.decodeUnknownResult(Bot.Name)
const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** A refusal of a channel request, naming the field. */
const invalid = (field: string, message: string) => new InvalidChannel({ field, message })

/** The request's common fields checked, then its kind's: the destination to store. */
const destination = Effect.fnUntraced(function* (settings: Settings, mailRelay: boolean, request: Channel.Request) {
  const named = decodeName(request.name)
  if (Result.isFailure(named))
    return yield* invalid("name", formatter(named.failure.issue).issues[0]?.message ?? "is not a name")
  const name = named.success
  const template = request.template
  if (template !== undefined) {
    if (template.trim() === "" || template.length > 4_000)
      return yield* invalid("template", "must be a non-empty string of at most 4,000 characters")
    const unknown = Messages.unknownPlaceholders(template)
    if (unknown.length > 0)
      return yield* invalid(
        "template",
        `unknown placeholder ${unknown.map((u) => `{{${u}}}`).join(", ")}; known: ${Messages.placeholders.map((p) => `{{${p}}}`).join(", ")}`
      )
  }
  const d = yield* kinds[request.type].destination(request, {
    allowHosts: settings.allowHosts,
    ...(settings.loopbackHttp === true ? { loopbackHttp: true } : {}),
    mailRelay
  })
  return {
    url: d.url,
    secret: d.secret,
    channel: {
      type: request.type,
      name: name.trim(),
      ...d.settings,
      ...(template === undefined ? {} : { template })
    }
  }
})

const channelOf = (store: WebhookStore.Destinations["Service"], keyId: string, id: string) =>
  Effect.flatMap(store.stats(keyId, "channels"), (stats) =>
    Effect.map(store.list(keyId, "channels"), (all) => {
      const w = all.find((c) => c.id === id)
      return w === undefined ? undefined : { webhook: w, stats: stats.find((s) => s.id === id) }
    })
  )

/** The key's channel, refused when unknown or when its receiver disabled it (410 Gone). */
const enabledChannel = Effect.fnUntraced(function* (
  store: WebhookStore.Destinations["Service"],
  keyId: string,
  id: string
) {
  const found = yield* channelOf(store, keyId, id)
  if (found === undefined) return yield* new ChannelNotFound({ id })
  if (found.webhook.disabledAt !== undefined)
    return yield* invalid(
      "channelId",
      `is disabled since ${found.webhook.disabledAt} (its receiver answered 410 Gone); nothing is sent to it: create the channel again`
    )
  return found.webhook
})

/** Notification channels, per API key, and the queuing of alerts to them. */
export class Notifications extends Context.Service<
  Notifications,
  {
    /** Creates a channel; a `webhook` channel's signing secret is in the answer, and only there. */
    readonly create: (
      keyId: string,
      request: Channel.Request
    ) => Effect.Effect<
      { readonly channel: ChannelView; readonly secret?: string },
      InvalidChannel | ChannelLimitReached | StoreError.StoreError
    >
    readonly list: (keyId: string) => Effect.Effect<ReadonlyArray<ChannelView>, StoreError.StoreError>
    readonly get: (keyId: string, id: string) => Effect.Effect<ChannelView, ChannelNotFound | StoreError.StoreError>
    /** Deletes a channel no bot of the key sends to (its undelivered messages are dropped). */
    readonly remove: (
      keyId: string,
      id: string
    ) => Effect.Effect<void, ChannelNotFound | ChannelInUse | StoreError.StoreError>
    /** Queues a test message to the channel; answers the delivery's id. */
    readonly test: (
      keyId: string,
      id: string
    ) => Effect.Effect<string, ChannelNotFound | InvalidChannel | StoreError.StoreError>
    /**
     * Sends again what the channel dead-lettered (alerts, retractions and tests its receiver refused through every
     * retry), each with its first id and the full retry schedule; answers how many.
     */
    readonly redeliver: (
      keyId: string,
      id: string
    ) => Effect.Effect<number, ChannelNotFound | InvalidChannel | StoreError.StoreError>
    /**
     * Queues one message of `alert` per channel of `channelIds` that the key has and that is not disabled, all in
     * one step; answers how many were queued.
     */
    readonly notify: (
      keyId: string,
      channelIds: ReadonlyArray<string>,
      alert: Messages.Alert
    ) => Effect.Effect<number, StoreError.StoreError>
  }
>()("@vigil/core/Notifications") {
  static readonly layer = (
    settings: Settings = defaultSettings
  ): Layer.Layer<
    Notifications,
    never,
    WebhookStore.Destinations | Outbox.Outbox | BotStore | HostResolver.HostResolver | Mailer.Mailer
  > =>
    Layer.effect(Notifications)(
      Effect.gen(function* () {
        const store = yield* WebhookStore.Destinations
        const bots = yield* BotStore
        const mailer = yield* Mailer.Mailer
        const resolver = yield* Effect.context<HostResolver.HostResolver>()
        const outbox = yield* Outbox.Outbox

        const queue = Effect.fnUntraced(function* (
          keyId: string,
          targets: ReadonlyArray<WebhookStore.Webhook>,
          alert: Messages.Alert
        ) {
          const deliveries = compose(keyId, targets, alert, yield* Clock.currentTimeMillis)
          if (deliveries.length === 0) return { stored: 0, ids: [] as ReadonlyArray<string> }
          const stored = yield* outbox.enqueue(deliveries)
          return { stored, ids: deliveries.map((d) => d.id) }
        })

        return Notifications.of({
          create: Effect.fn("Notifications.create")(function* (keyId, request) {
            const d = yield* destination(settings, mailer.configured, request).pipe(Effect.provide(resolver))
            const now = yield* Clock.currentTimeMillis
            const webhook: WebhookStore.Webhook = {
              id: `nc_${now}_${RandomIds.alphanumeric(9)}`,
              keyId,
              url: d.url,
              secret: d.secret,
              created: Instant.iso(now),
              deliveryCount: 0,
              channel: d.channel
            }
            if (!(yield* store.register(webhook, settings.maxPerKey)))
              return yield* new ChannelLimitReached({ max: settings.maxPerKey })
            return {
              channel: view(webhook, undefined),
              ...(d.channel.type === "webhook" ? { secret: d.secret } : {})
            }
          }),
          list: (keyId) =>
            Effect.flatMap(store.stats(keyId, "channels"), (stats) =>
              Effect.map(store.list(keyId, "channels"), (all) =>
                all.map((w) =>
                  view(
                    w,
                    stats.find((s) => s.id === w.id)
                  )
                )
              )
            ),
          get: (keyId, id) =>
            Effect.flatMap(channelOf(store, keyId, id), (found) =>
              found === undefined
                ? Effect.fail(new ChannelNotFound({ id }))
                : Effect.succeed(view(found.webhook, found.stats))
            ),
          remove: Effect.fn("Notifications.remove")(function* (keyId, id) {
            const users = (yield* bots.list(keyId)).filter((b) => b.notifications.includes(id))
            if (users.length > 0)
              return yield* new ChannelInUse({ id, bots: users.map((b) => ({ id: b.id, botName: b.botName })) })
            if (!(yield* store.remove(keyId, id, "channels"))) return yield* new ChannelNotFound({ id })
          }),
          test: Effect.fn("Notifications.test")(function* (keyId, id) {
            const channel = yield* enabledChannel(store, keyId, id)
            const now = yield* Clock.currentTimeMillis
            const { ids } = yield* queue(keyId, [channel], Messages.sample(`test_${now}_${RandomIds.alphanumeric(9)}`))
            if (ids.length === 0) return yield* new ChannelNotFound({ id })
            return ids[0]!
          }),
          redeliver: Effect.fn("Notifications.redeliver")(function* (keyId, id) {
            yield* enabledChannel(store, keyId, id)
            const requeued = yield* store.redeliver(keyId, id, yield* Clock.currentTimeMillis, "channels")
            if (requeued === undefined) return yield* new ChannelNotFound({ id })
            if (requeued > 0) yield* outbox.wake
            return requeued
          }),
          notify: Effect.fn("Notifications.notify")(function* (keyId, channelIds, alert) {
            const wanted = new Set(channelIds)
            const targets = (yield* store.list(keyId, "channels")).filter((w) => wanted.has(w.id))
            return (yield* queue(keyId, targets, alert)).stored
          })
        })
      })
    )
}
