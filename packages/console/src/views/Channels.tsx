/** Notification channels: created, tested, deleted. */
import { useState } from "preact/hooks"
import { clientFor, errorMessage, type Channel, type ChannelRequest } from "../client"
import { useRead } from "../fetching"
import { Results, count } from "../ui"

type ChannelType = ChannelRequest["type"]

/** What a channel of `type` needs besides its name, from the form's fields. */
const channelRequest = (
  type: ChannelType,
  name: string,
  fields: { readonly url: string; readonly botToken: string; readonly chatId: string; readonly to: string }
): ChannelRequest =>
  type === "telegram"
    ? { type, name, botToken: fields.botToken.trim(), chatId: fields.chatId.trim() }
    : type === "email"
      ? { type, name, to: fields.to.split(/[\s,;]+/).filter((a) => a !== "") }
      : { type, name, url: fields.url.trim() }

export const Channels = ({ keyValue }: { readonly keyValue: string }) => {
  const [type, setType] = useState<ChannelType>("slack")
  const [name, setName] = useState("")
  const [url, setUrl] = useState("")
  const [botToken, setBotToken] = useState("")
  const [chatId, setChatId] = useState("")
  const [to, setTo] = useState("")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const listed = useRead(() => clientFor(keyValue).channels(), [keyValue])
  const channels: ReadonlyArray<Channel> = listed.value?.channels ?? []
  const create = async (event: Event) => {
    event.preventDefault()
    const answer = await clientFor(keyValue).createChannel(
      channelRequest(type, name.trim(), { url, botToken, chatId, to })
    )
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    setOutcome({ ok: true, text: `Created ${answer.data.channel.name}.` })
    listed.reload()
  }
  /** Deletes a channel; the API refuses one that bots still send to (409), and says which. */
  const remove = async (channel: Channel) => {
    const answer = await clientFor(keyValue).deleteChannel(channel.id)
    if (answer.data === undefined) {
      const bots = (answer.error as { details?: { bots?: ReadonlyArray<{ botName: string }> } } | undefined)?.details
        ?.bots
      return setOutcome({
        ok: false,
        text:
          answer.response.status === 409 && bots !== undefined
            ? `${channel.name} is used by ${bots.map((b) => b.botName).join(", ")}: take it off those bots first.`
            : errorMessage(answer.error, answer.response.status)
      })
    }
    setOutcome({ ok: true, text: `Deleted ${channel.name}.` })
    listed.reload()
  }
  const test = async (channel: Channel) => {
    const answer = await clientFor(keyValue).testChannel(channel.id)
    setOutcome(
      answer.data === undefined
        ? { ok: false, text: errorMessage(answer.error, answer.response.status) }
        : { ok: true, text: `A test message to ${channel.name} is on its way.` }
    )
    listed.reload()
  }
  return (
    <section aria-label="Channels">
      <form class="screen" onSubmit={create}>
        <label for="channel-type">Type</label>
        <select id="channel-type" value={type} onChange={(e) => setType(e.currentTarget.value as ChannelType)}>
          <option value="slack">Slack</option>
          <option value="discord">Discord</option>
          <option value="webhook">Signed webhook</option>
          <option value="telegram">Telegram</option>
          <option value="email">Email</option>
        </select>
        <label for="channel-name">Name</label>
        <input id="channel-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        {type === "telegram" ? (
          <>
            <label for="channel-token">Bot token (from @BotFather)</label>
            <input
              id="channel-token"
              required
              autoComplete="off"
              value={botToken}
              onInput={(e) => setBotToken(e.currentTarget.value)}
            />
            <label for="channel-chat">Chat id or @channel</label>
            <input id="channel-chat" required value={chatId} onInput={(e) => setChatId(e.currentTarget.value)} />
          </>
        ) : type === "email" ? (
          <>
            <label for="channel-to">Recipients (up to 10, separated by commas)</label>
            <input id="channel-to" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          </>
        ) : (
          <>
            <label for="channel-url">URL (HTTPS)</label>
            <input id="channel-url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </>
        )}
        <button type="submit">Create channel</button>
      </form>
      {outcome === undefined ? null : (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "ok" : "problem"} data-testid="channel-outcome">
          {outcome.text}
        </p>
      )}
      <button onClick={() => listed.reload()}>Refresh</button>
      {channels.length === 0 ? (
        <p class="note" data-testid="channels-empty">
          No channel yet: alerts are kept and shown under Alerts, but sent nowhere. Create one above and choose it for a
          bot in Rules.
        </p>
      ) : null}
      <Results
        label="Notification channels"
        testId="channels"
        head={
          <>
            <th scope="col">Channel</th>
            <th scope="col">Delivered</th>
            <th scope="col">Pending</th>
            <th scope="col">Failed</th>
            <th scope="col">Last error</th>
            <th scope="col" />
          </>
        }
      >
        {channels.map((c) => (
          <tr key={c.id}>
            <td>
              {c.name} ({c.type}){c.disabled ? " · disabled" : ""}
            </td>
            <td>{count(c.deliveries.delivered)}</td>
            <td>{count(c.deliveries.pending)}</td>
            <td>{count(c.deliveries.failed)}</td>
            <td>{c.deliveries.lastError ?? ""}</td>
            <td>
              <button onClick={() => void test(c)}>Send test</button>{" "}
              <button onClick={() => void remove(c)} aria-label={`Delete ${c.name}`}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Results>
    </section>
  )
}
