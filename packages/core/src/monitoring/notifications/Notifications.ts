/**
 * Notification channels of monitoring (`/v1/notifications`): where a bot's alerts go. A channel is a destination
 * of the delivery outbox, so its messages share the intelligence webhooks' durability, retries, dead letters and
 * SSRF guard. Types: `webhook` (Standard Webhooks signed JSON), `slack` and `discord` (incoming-webhook URLs),
 * `telegram` (a bot token and a chat), `email` (recipients; the mail relay is the operator's). Messages are made
 * from a template per channel (`Messages`), rendered when the alert is queued.
 */
import { randomBytes } from "@noble/hashes/utils.js"
import { Clock, Context, Effect, Layer, Queue, Schema } from "effect"
import {
  Mailer,
  NetworkGuard,
  WebhookDispatcher,
  Webhooks,
  WebhookSigning,
  WebhookStore
} from "../../delivery/index.ts"
import type { HostResolver } from "../../delivery/index.ts"
import { Instant, type StoreError } from "../../kernel/index.ts"
import { BotStore } from "../bots/BotStore.ts"
import * as Messages from "../alerts/Messages.ts"

/** A field of a channel request is wrong; `field` names it. */
export class InvalidChannel extends Schema.TaggedError<InvalidChannel>()("InvalidChannel", {
  field: Schema.String,
  message: Schema.String
}) {}

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

/** A channel as the API shows it: its settings without secrets, and the state of its deliveries. */
export interface ChannelView {
  readonly id: string
  readonly type: WebhookStore.ChannelType
  readonly name: string
  /** Webhook, Slack, Discord: the URL, its path hidden for Slack and Discord (the path is the credential). */
  readonly url?: string
  readonly chatId?: string
  readonly to?: ReadonlyArray<string>
  readonly template?: string
  readonly created: string
  readonly deliveries: {
    readonly delivered: number
    readonly pending: number
    readonly failed: number
    readonly lastDelivery?: string
    readonly lastError?: string
  }
  readonly disabled: boolean
}

/** Policy of channels. */
export interface Settings {
  readonly maxPerKey: number
  /** Hosts exempt from the public-address rule (HTTPS is still required): the webhook allow-list. */
  readonly allowHosts: ReadonlyArray<string>
}

export const defaultSettings: Settings = { maxPerKey: 20, allowHosts: [] }

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
const randomSuffix = (n: number) => Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join("")

/** `https://host/…` with the path hidden: Slack's and Discord's URLs carry their credential in the path. */
const hidePath = (url: string) => {
  const u = new URL(url)
  return `${u.origin}/…`
}

const view = (w: WebhookStore.Webhook, stats: WebhookStore.WebhookStats | undefined): ChannelView => {
  const c = w.channel!
  return {
    id: w.id,
    type: c.type,
    name: c.name,
    ...(c.type === "webhook"
      ? { url: w.url }
      : c.type === "slack" || c.type === "discord"
        ? { url: hidePath(w.url) }
        : {}),
    ...(c.chatId === undefined ? {} : { chatId: c.chatId }),
    ...(c.to === undefined ? {} : { to: c.to }),
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

const emailAddress = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/
const telegramToken = /^\d{3,20}:[A-Za-z0-9_-]{20,100}$/
const telegramChat = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/

/**
 * The deliveries of `alert` to those of `targets` not disabled, queued at `now`: its message in each channel's
 * form. A retraction's deliveries are the events `<alert id>:retraction`, an alert's the event `<alert id>`.
 */
export const compose = (
  keyId: string,
  targets: ReadonlyArray<WebhookStore.Webhook>,
  alert: Messages.Alert,
  now: number
): ReadonlyArray<WebhookStore.Delivery> =>
  targets
    .filter((w) => w.disabledAt === undefined && w.channel !== undefined)
    .map((w) => ({
      id: `msg_${now.toString(36)}${randomSuffix(16)}`,
      webhookId: w.id,
      keyId,
      correlationId:
        alert.kind === "retraction" || alert.kind === "unverified" ? `${alert.id}:${alert.kind}` : alert.id,
      body: Messages.render(w, alert, Instant.iso(now)),
      attempts: 0,
      nextAttemptAt: now,
      status: "pending" as const
    }))

/** Notification channels, per API key, and the queuing of alerts to them. */
export class Notifications extends Context.Service<
  Notifications,
  {
    /** Creates a channel; a `webhook` channel's signing secret is in the answer, and only there. */
    readonly create: (
      keyId: string,
      fields: Readonly<Record<string, unknown>>
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
    WebhookStore.WebhookStore | BotStore | HostResolver.HostResolver | Mailer.Mailer
  > =>
    Layer.effect(Notifications)(
      Effect.gen(function* () {
        const store = yield* WebhookStore.WebhookStore
        const bots = yield* BotStore
        const mailer = yield* Mailer.Mailer
        const resolver = yield* Effect.context<HostResolver.HostResolver>()
        const wake = yield* Effect.serviceOption(WebhookDispatcher.Wake)

        const invalid = (field: string, message: string) => new InvalidChannel({ field, message })

        /** A user-supplied HTTPS URL, checked by the SSRF guard now (and by the transport at every delivery). */
        const checkedUrl = Effect.fnUntraced(function* (value: unknown) {
          if (typeof value !== "string") return yield* invalid("url", "is required: the HTTPS URL to post to")
          const checked = NetworkGuard.checkUrl(value)
          if ("reason" in checked) return yield* invalid("url", checked.reason)
          yield* Webhooks.guardHost(settings.allowHosts, checked.host).pipe(
            Effect.provide(resolver),
            Effect.mapError((e) => invalid("url", e.reason))
          )
          return checked.url
        })

        const destination = Effect.fnUntraced(function* (f: Readonly<Record<string, unknown>>) {
          const type = f.type
          if (typeof type !== "string" || !(WebhookStore.channelTypes as ReadonlyArray<string>).includes(type))
            return yield* invalid("type", `must be one of ${WebhookStore.channelTypes.join(", ")}`)
          const name = f.name
          if (typeof name !== "string" || name.trim() === "" || name.length > 200)
            return yield* invalid("name", "must be a non-empty string of at most 200 characters")
          if (Messages.controlCharacter.test(name))
            return yield* invalid("name", "must not contain control characters (line breaks, tabs, escapes)")
          const template = f.template
          if (template !== undefined) {
            if (typeof template !== "string" || template.trim() === "" || template.length > 4_000)
              return yield* invalid("template", "must be a non-empty string of at most 4,000 characters")
            const unknown = Messages.unknownPlaceholders(template)
            if (unknown.length > 0)
              return yield* invalid(
                "template",
                `unknown placeholder ${unknown.map((u) => `{{${u}}}`).join(", ")}; known: ${Messages.placeholders.map((p) => `{{${p}}}`).join(", ")}`
              )
          }
          const base = { name: name.trim(), ...(template === undefined ? {} : { template: template as string }) }
          switch (type as WebhookStore.ChannelType) {
            case "webhook":
              return {
                url: yield* checkedUrl(f.url),
                secret: WebhookSigning.newSecret(),
                channel: { type: "webhook" as const, ...base }
              }
            case "slack":
            case "discord":
              return { url: yield* checkedUrl(f.url), secret: "", channel: { type: type as "slack", ...base } }
            case "telegram": {
              const token = f.botToken
              if (typeof token !== "string" || !telegramToken.test(token))
                return yield* invalid("botToken", "must be a Telegram bot token (<digits>:<secret>)")
              const chat = typeof f.chatId === "number" && Number.isSafeInteger(f.chatId) ? String(f.chatId) : f.chatId
              if (typeof chat !== "string" || !telegramChat.test(chat))
                return yield* invalid("chatId", "must be a Telegram chat id (a number) or @channelusername")
              return {
                url: `telegram:${chat}`,
                secret: token,
                channel: { type: "telegram" as const, chatId: chat, ...base }
              }
            }
            case "email": {
              const to = f.to
              if (
                !Array.isArray(to) ||
                to.length === 0 ||
                to.length > 10 ||
                !to.every((a) => typeof a === "string" && a.length <= 254 && emailAddress.test(a))
              )
                return yield* invalid("to", "must be 1 to 10 email addresses")
              if (!mailer.configured)
                return yield* invalid("type", "email channels need a mail relay, and none is configured on this server")
              return {
                url: `mailto:${(to as ReadonlyArray<string>).join(",")}`,
                secret: "",
                channel: { type: "email" as const, to: to as ReadonlyArray<string>, ...base }
              }
            }
          }
        })

        const channelOf = (keyId: string, id: string) =>
          Effect.flatMap(store.stats(keyId, "channels"), (stats) =>
            Effect.map(store.list(keyId, "channels"), (all) => {
              const w = all.find((c) => c.id === id)
              return w === undefined ? undefined : { webhook: w, stats: stats.find((s) => s.id === id) }
            })
          )

        /** The key's channel, refused when unknown or when its receiver disabled it (410 Gone). */
        const enabledChannel = Effect.fnUntraced(function* (keyId: string, id: string) {
          const found = yield* channelOf(keyId, id)
          if (found === undefined) return yield* new ChannelNotFound({ id })
          if (found.webhook.disabledAt !== undefined)
            return yield* invalid(
              "channelId",
              `is disabled since ${found.webhook.disabledAt} (its receiver answered 410 Gone); nothing is sent to it: create the channel again`
            )
          return found.webhook
        })

        const queue = Effect.fnUntraced(function* (
          keyId: string,
          targets: ReadonlyArray<WebhookStore.Webhook>,
          alert: Messages.Alert
        ) {
          const deliveries = compose(keyId, targets, alert, yield* Clock.currentTimeMillis)
          if (deliveries.length === 0) return { stored: 0, ids: [] as ReadonlyArray<string> }
          const stored = yield* store.enqueue(deliveries)
          if (wake._tag === "Some") yield* Queue.offer(wake.value, undefined)
          return { stored, ids: deliveries.map((d) => d.id) }
        })

        return Notifications.of({
          create: Effect.fn("Notifications.create")(function* (keyId, fields) {
            const d = yield* destination(fields)
            const now = yield* Clock.currentTimeMillis
            const webhook: WebhookStore.Webhook = {
              id: `nc_${now}_${randomSuffix(9)}`,
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
            Effect.flatMap(channelOf(keyId, id), (found) =>
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
            const channel = yield* enabledChannel(keyId, id)
            const now = yield* Clock.currentTimeMillis
            const { ids } = yield* queue(keyId, [channel], Messages.sample(`test_${now}_${randomSuffix(9)}`))
            if (ids.length === 0) return yield* new ChannelNotFound({ id })
            return ids[0]!
          }),
          redeliver: Effect.fn("Notifications.redeliver")(function* (keyId, id) {
            yield* enabledChannel(keyId, id)
            const requeued = yield* store.redeliver(keyId, id, yield* Clock.currentTimeMillis, "channels")
            if (requeued === undefined) return yield* new ChannelNotFound({ id })
            if (requeued > 0 && wake._tag === "Some") yield* Queue.offer(wake.value, undefined)
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
