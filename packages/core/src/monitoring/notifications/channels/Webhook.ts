/** A `webhook` channel: Standard Webhooks signed JSON (the alert, its evidence and the text) to an HTTPS URL. */
import { Effect } from "effect"
import { WebhookDispatcher, WebhookSigning } from "../../../delivery/index.ts"
import type { WebhookMessage } from "../Channel.ts"
import { checkedUrl, type Kind } from "./Kind.ts"

export const kind: Kind = {
  destination: (request, context) =>
    Effect.map(checkedUrl(request.url, context), (url) => ({ url, secret: WebhookSigning.newSecret(), settings: {} })),
  render: (destination, alert, message, timestamp) =>
    JSON.stringify({
      timestamp,
      correlation_id: alert.id,
      webhook_id: destination.id,
      type: alert.kind,
      data: { ...alert, text: message }
    } satisfies WebhookMessage),
  send: WebhookDispatcher.signed,
  show: (destination) => ({ url: destination.url })
}
