/**
 * A notification channel, declared once: what a client sends to create one (`Request`) and what the API shows of
 * it (`View`: its settings without secrets, and the state of its deliveries). The HTTP contract and
 * `/openapi.json` are made from these.
 */
import { Schema } from "effect"
import type { WebhookStore } from "../../delivery/index.ts"
import { Instant } from "../../kernel/index.ts"
import * as Messages from "../alerts/Messages.ts"

/**
 * The body a `webhook` channel receives, signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`): the message (`data`, with the channel's template applied as `text`) in the envelope of every
 * delivery. `correlation_id` is the alert's id, shared by its retraction and unverified notices.
 */
export const WebhookMessage = Schema.Struct({
  timestamp: Instant.Timestamp,
  correlation_id: Schema.String.annotate({ description: "The alert's id (a retraction's is the alert it takes back)" }),
  webhook_id: Schema.String.annotate({ description: "The channel's id" }),
  type: Messages.Kind,
  data: Schema.Struct({
    ...Messages.Alert.fields,
    text: Schema.String.annotate({ description: "The channel's template (or the default) applied to the alert" })
  })
}).annotate({ identifier: "ChannelWebhookMessage" })
export interface WebhookMessage extends Schema.Schema.Type<typeof WebhookMessage> {}

/** The kinds of channel, owned here: delivery routes on them (and counts by them) without knowing them. */
export const kinds = ["webhook", "slack", "discord", "telegram", "email"] as const

/** A kind of channel. */
export const Type = Schema.Literals(kinds)
export type Type = typeof Type.Type

/**
 * What a notification channel keeps on its destination (delivery's opaque `channel`): its kind and name, the kind's
 * own settings (Telegram's chat, email's recipients) and the message template when not the default.
 */
export const Settings = Schema.Struct({
  type: Type,
  name: Schema.String,
  /** Telegram: the chat the messages go to (the bot token is the destination's `secret`). */
  chatId: Schema.optionalKey(Schema.String),
  /** Email: the recipients (the destination's `url` is `mailto:` them). */
  to: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The message template, when not the type's default. */
  template: Schema.optionalKey(Schema.String)
})
export type Settings = typeof Settings.Type

const isSettings = Schema.is(Settings)

/** The settings each channel object was found to hold (channels are read-only values, checked once each). */
const checked = new WeakMap<object, Settings | undefined>()

/** A destination's notification-channel settings; undefined for one that is not a channel of a known kind. */
export const settingsOf = (destination: WebhookStore.Webhook): Settings | undefined => {
  const channel: unknown = destination.channel
  if (typeof channel !== "object" || channel === null) return undefined
  if (checked.has(channel)) return checked.get(channel)
  const settings = isSettings(channel) ? channel : undefined
  checked.set(channel, settings)
  return settings
}

/** What a client sends to create a channel; which fields a type needs is its module's decision. */
export const Request = Schema.Struct({
  type: Type,
  name: Schema.String.annotate({ description: "1 to 200 characters" }),
  url: Schema.optionalKey(
    Schema.String.annotate({ description: "webhook, slack, discord: the HTTPS URL to post to (a public host)" })
  ),
  botToken: Schema.optionalKey(Schema.String.annotate({ description: "telegram: the bot's token" })),
  chatId: Schema.optionalKey(
    Schema.Union([Schema.String, Schema.Int]).annotate({ description: "telegram: a chat id or @channelusername" })
  ),
  to: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "email: 1 to 10 recipients" })),
  template: Schema.optionalKey(
    Schema.String.annotate({
      description: `The message, with ${Messages.placeholders.map((p) => `{{${p}}}`).join(", ")}`
    })
  )
}).annotate({ identifier: "ChannelRequest" })
export interface Request extends Schema.Schema.Type<typeof Request> {}

/** A channel as the API shows it: its settings without secrets, and the state of its deliveries. */
export const View = Schema.Struct({
  id: Schema.String.annotate({ description: "nc_<epoch ms>_<9 lowercase alphanumerics>" }),
  type: Type,
  name: Schema.String,
  url: Schema.optionalKey(
    Schema.String.annotate({
      description: "webhook: the URL; slack and discord: the origin only (the path is the credential)"
    })
  ),
  chatId: Schema.optionalKey(Schema.String),
  to: Schema.optionalKey(Schema.Array(Schema.String)),
  template: Schema.optionalKey(Schema.String),
  created: Instant.Timestamp,
  deliveries: Schema.Struct({
    delivered: Schema.Int,
    pending: Schema.Int,
    failed: Schema.Int.annotate({ description: "Dead-lettered after the retries, or refused for good" }),
    lastDelivery: Schema.optionalKey(Instant.Timestamp),
    lastError: Schema.optionalKey(Schema.String)
  }),
  disabled: Schema.Boolean.annotate({ description: "The receiver answered 410 Gone: nothing more is sent" })
}).annotate({ identifier: "Channel" })
export interface View extends Schema.Schema.Type<typeof View> {}
