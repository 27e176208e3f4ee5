/** The kinds of notification channel, one module each, and a message rendered for any channel. */
import { Layer } from "effect"
import { WebhookDispatcher, type WebhookStore } from "../../../delivery/index.ts"
import * as Messages from "../../alerts/Messages.ts"
import { settingsOf, type Type } from "../Channel.ts"
import * as Discord from "./Discord.ts"
import * as Email from "./Email.ts"
import type { Kind } from "./Kind.ts"
import * as Slack from "./Slack.ts"
import * as Telegram from "./Telegram.ts"
import * as Webhook from "./Webhook.ts"

export { type Context, type Destination, InvalidChannel, type Kind } from "./Kind.ts"

/** Each kind's module, by type. */
export const kinds: Readonly<Record<Type, Kind>> = {
  webhook: Webhook.kind,
  slack: Slack.kind,
  discord: Discord.kind,
  telegram: Telegram.kind,
  email: Email.kind
}

/** The body of the delivery of `alert` to `destination` (a notification channel), queued at `timestamp`. */
export const render = (destination: WebhookStore.Webhook, alert: Messages.Alert, timestamp: string): string => {
  const channel = settingsOf(destination)!
  const message = Messages.text(channel.template ?? Messages.defaultTemplate, alert)
  return kinds[channel.type].render(destination, alert, message, timestamp)
}

/** Each kind's sender, for the delivery loop. */
export const senders: Layer.Layer<WebhookDispatcher.Senders> = Layer.succeed(WebhookDispatcher.Senders)(
  Object.fromEntries(Object.entries(kinds).map(([type, kind]) => [type, kind.send]))
)
