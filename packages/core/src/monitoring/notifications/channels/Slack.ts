/** A `slack` channel: an incoming-webhook URL; plain text, Slack's three control characters escaped, 3,000 at most. */
import { Effect } from "effect"
import { checkedUrl, hidePath, type Kind } from "./Kind.ts"

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * `s` escaped, at most `max` characters long as sent: cut between characters of `s` (never inside an entity such as
 * `&amp;`, nor inside a surrogate pair), an ellipsis marking the cut.
 */
const escapedWithin = (s: string, max: number): string => {
  const whole = escape(s)
  if (whole.length <= max) return whole
  let out = ""
  for (const point of s) {
    const escaped = escape(point)
    if (out.length + escaped.length > max - 1) break
    out += escaped
  }
  return `${out}…`
}

export const kind: Kind = {
  destination: (request, context) =>
    Effect.map(checkedUrl(request.url, context), (url) => ({ url, secret: "", settings: {} })),
  // Escaped, then cut: what Slack receives is 3,000 characters at most, whatever the message holds.
  render: (_, __, message) => JSON.stringify({ text: escapedWithin(message, 3_000) }),
  send: (_, destination, via) => via.post(destination.url),
  show: (destination) => ({ url: hidePath(destination.url) })
}
