/**
 * What each kind of notification channel decides for itself: which fields of a request it needs and how they are
 * stored (`destination`), the body of a message to it (`render`), how the outbox sends that body (`send`), and
 * what the API shows of it (`show`). One module per kind implements it.
 */
import { Effect, Schema } from "effect"
import {
  type HostResolver,
  NetworkGuard,
  type WebhookDispatcher,
  Webhooks,
  type WebhookStore
} from "../../../delivery/index.ts"
import type * as Messages from "../../alerts/Messages.ts"
import type { Request, Settings } from "../Channel.ts"

/** A field of a channel request is wrong; `field` names it. */
export class InvalidChannel extends Schema.TaggedError<InvalidChannel>()("InvalidChannel", {
  field: Schema.String,
  message: Schema.String
}) {}

/** How a channel is stored as a destination of the outbox. */
export interface Destination {
  readonly url: string
  readonly secret: string
  /** The kind's own settings (Telegram's chat, email's recipients), beside the name and template. */
  readonly settings: Partial<Pick<Settings, "chatId" | "to">>
}

/** What creating a channel may use: the webhook allow-list, and whether a mail relay is configured. */
export interface Context {
  readonly allowHosts: ReadonlyArray<string>
  /** Plain HTTP to loopback accepted (development on one machine). */
  readonly loopbackHttp?: boolean
  readonly mailRelay: boolean
}

/** A kind of channel. */
export interface Kind {
  readonly destination: (
    request: Request,
    context: Context
  ) => Effect.Effect<Destination, InvalidChannel, HostResolver.HostResolver>
  /** The body of `message` (the channel's template applied to `alert`) to `destination`, queued at `timestamp`. */
  readonly render: (
    destination: WebhookStore.Webhook,
    alert: Messages.Alert,
    message: string,
    timestamp: string
  ) => string
  /** Sends what `render` made, for the delivery loop. */
  readonly send: WebhookDispatcher.Sender
  /** What the API shows of the destination besides its name, template and deliveries. */
  readonly show: (destination: WebhookStore.Webhook) => {
    readonly url?: string
    readonly chatId?: string
    readonly to?: ReadonlyArray<string>
  }
}

export const invalid = (field: string, message: string) => new InvalidChannel({ field, message })

/** A user-supplied HTTPS URL, checked by the SSRF guard now (and by the transport at every delivery). */
export const checkedUrl = Effect.fnUntraced(function* (value: string | undefined, context: Context) {
  if (value === undefined) return yield* invalid("url", "is required: the HTTPS URL to post to")
  const checked = NetworkGuard.checkUrl(value, context.loopbackHttp === true)
  if ("reason" in checked) return yield* invalid("url", checked.reason)
  if (!checked.plain)
    yield* Webhooks.guardHost(context.allowHosts, checked.host).pipe(Effect.mapError((e) => invalid("url", e.reason)))
  return checked.url
})

/** `https://host/…` with the path hidden: Slack's and Discord's URLs carry their credential in the path. */
export const hidePath = (url: string) => `${new URL(url).origin}/…`
