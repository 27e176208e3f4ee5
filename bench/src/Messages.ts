/** What the bench's receivers read of a channel's webhook message: decoded, never cast. */
import { Option, Schema } from "effect"

const ChannelMessage = Schema.fromJsonString(
  Schema.Struct({
    type: Schema.String,
    data: Schema.Struct({ id: Schema.String, bot: Schema.Struct({ name: Schema.String }), txHash: Schema.String })
  })
)
const decode = Schema.decodeUnknownOption(ChannelMessage)

/** An alert message's identity, bot name and transaction hash; undefined for a retraction, a notice or what is not a message. */
export const alertOf = (
  body: string
): { readonly id: string; readonly bot: string; readonly txHash: string } | undefined =>
  Option.getOrUndefined(
    Option.flatMap(decode(body), (m) =>
      m.type === "alert" ? Option.some({ id: m.data.id, bot: m.data.bot.name, txHash: m.data.txHash }) : Option.none()
    )
  )

/** The transaction hash of an alert message; undefined for a retraction, a notice or what is not a message. */
export const alertTxHash = (body: string): string | undefined => alertOf(body)?.txHash
