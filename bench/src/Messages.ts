/** What the bench's receivers read of a channel's webhook message: decoded, never cast. */
import { Option, Schema } from "effect"

const ChannelMessage = Schema.fromJsonString(
  Schema.Struct({ type: Schema.String, data: Schema.Struct({ txHash: Schema.String }) })
)
const decode = Schema.decodeUnknownOption(ChannelMessage)

/** The transaction hash of an alert message; undefined for a retraction, a notice or what is not a message. */
export const alertTxHash = (body: string): string | undefined =>
  Option.getOrUndefined(
    Option.flatMap(decode(body), (m) => (m.type === "alert" ? Option.some(m.data.txHash) : Option.none()))
  )
