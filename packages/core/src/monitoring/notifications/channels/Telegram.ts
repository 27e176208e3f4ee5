/**
 * A `telegram` channel: a bot's token and a chat; plain text through the Bot API's `sendMessage`, 4,096 at most,
 * without link previews. The token is kept as the destination's secret, never shown.
 */
import { Effect } from "effect"
import * as Messages from "../../alerts/Messages.ts"
import { settingsOf } from "../Channel.ts"
import { invalid, type Kind } from "./Kind.ts"

const token = /^\d{3,20}:[A-Za-z0-9_-]{20,100}$/
const chat = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/

export const kind: Kind = {
  destination: (request) =>
    Effect.gen(function* () {
      if (request.botToken === undefined || !token.test(request.botToken))
        return yield* invalid("botToken", "must be a Telegram bot token (<digits>:<secret>)")
      const chatId = typeof request.chatId === "number" ? String(request.chatId) : request.chatId
      if (chatId === undefined || !chat.test(chatId))
        return yield* invalid("chatId", "must be a Telegram chat id (a number) or @channelusername")
      return { url: `telegram:${chatId}`, secret: request.botToken, settings: { chatId } }
    }),
  // Bot API 7.0 superseded disable_web_page_preview with link_preview_options.
  render: (destination, _, message) =>
    JSON.stringify({
      chat_id: settingsOf(destination)?.chatId,
      text: Messages.cut(message, 4_096),
      link_preview_options: { is_disabled: true }
    }),
  // The token is the destination's secret; the Bot API's base is the server's (a local one in tests).
  send: (_, destination, via) =>
    via.post(`${via.settings.telegramApiUrl.replace(/\/+$/, "")}/bot${destination.secret}/sendMessage`),
  show: (destination) => {
    const chatId = settingsOf(destination)?.chatId
    return chatId === undefined ? {} : { chatId }
  }
}
