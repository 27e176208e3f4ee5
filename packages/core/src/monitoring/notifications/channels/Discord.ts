/** A `discord` channel: an incoming-webhook URL; plain text with mentions switched off, 2,000 at most. */
import { Effect } from "effect"
import * as Messages from "../../alerts/Messages.ts"
import { checkedUrl, hidePath, type Kind } from "./Kind.ts"

export const kind: Kind = {
  destination: (request, context) =>
    Effect.map(checkedUrl(request.url, context), (url) => ({ url, secret: "", settings: {} })),
  render: (_, __, message) =>
    JSON.stringify({ content: Messages.cut(message, 2_000), allowed_mentions: { parse: [] } }),
  send: (_, destination, via) => via.post(destination.url),
  show: (destination) => ({ url: hidePath(destination.url) })
}
