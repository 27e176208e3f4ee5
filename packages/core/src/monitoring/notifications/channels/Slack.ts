/** A `slack` channel: an incoming-webhook URL; plain text, Slack's three control characters escaped, 3,000 at most. */
import { Effect } from "effect"
import * as Messages from "../../alerts/Messages.ts"
import { checkedUrl, hidePath, type Kind } from "./Kind.ts"

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

export const kind: Kind = {
  destination: (request, context) =>
    Effect.map(checkedUrl(request.url, context), (url) => ({ url, secret: "", settings: {} })),
  // Cut, then escaped: an entity (`&amp;`) is never cut in two.
  render: (_, __, message) => JSON.stringify({ text: escape(Messages.cut(message, 3_000)) }),
  send: (_, destination, via) => via.post(destination.url),
  show: (destination) => ({ url: hidePath(destination.url) })
}
