/**
 * An `email` channel: 1 to 10 recipients, sent through the operator's mail relay (users name recipients, never a
 * mail server); the subject is the alert's title, the text is not cut.
 */
import { Effect, Option, Schema } from "effect"
import * as Messages from "../../alerts/Messages.ts"
import { settingsOf } from "../Channel.ts"
import { invalid, type Kind } from "./Kind.ts"

const address = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

/** A stored email delivery: its subject and text as JSON (as `render` makes it). */
const Mail = Schema.fromJsonString(Schema.Struct({ subject: Schema.String, text: Schema.String }))
const encodeMail = Schema.encodeSync(Mail)
const mailOf = Schema.decodeUnknownOption(Mail)

export const kind: Kind = {
  destination: (request, context) =>
    Effect.gen(function* () {
      const to = request.to
      if (to === undefined || to.length === 0 || to.length > 10 || !to.every((a) => a.length <= 254 && address.test(a)))
        return yield* invalid("to", "must be 1 to 10 email addresses")
      if (!context.mailRelay)
        return yield* invalid("type", "email channels need a mail relay, and none is configured on this server")
      return { url: `mailto:${to.join(",")}`, secret: "", settings: { to } }
    }),
  render: (_, alert, message) => encodeMail({ subject: Messages.cut(Messages.title(alert), 200), text: message }),
  send: (delivery, destination, via) =>
    Option.match(mailOf(delivery.body), {
      onNone: () => Effect.succeed({ _tag: "Permanent", detail: "the stored email is not readable" } as const),
      onSome: (message) => via.mail({ to: settingsOf(destination)?.to ?? [], ...message })
    }),
  show: (destination) => {
    const to = settingsOf(destination)?.to
    return to === undefined ? {} : { to }
  }
}
