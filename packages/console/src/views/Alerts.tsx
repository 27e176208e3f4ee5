/** A bot's alerts, followed live. */
import { useEffect, useState } from "preact/hooks"
import { clientFor, errorMessage, type AbiValue, type Alert, type Bot } from "../client"
import * as Value from "ox/Value"
import { deliveryText } from "../deliveries"
import { useRead } from "../fetching"
import { count, When } from "../ui"

/** How often the alerts feed asks for new alerts. */
const alertsPollMillis = 1_500

/** A decoded ABI value as text: integers in decimal, addresses and bytes in hex, tuples by component name. */
const valueText = (v: AbiValue | ReadonlyArray<unknown>): string =>
  typeof v === "string" || typeof v === "boolean"
    ? String(v)
    : Array.isArray(v)
      ? `[${v.map((x) => valueText(x as AbiValue)).join(", ")}]`
      : Object.entries(v as Record<string, AbiValue>)
          .map(([k, x]) => `${k}: ${valueText(x)}`)
          .join(", ")

/** The names an amount of tokens goes by in events and calls (ERC-20's `value`, `amount`, DAI's `wad`). */
const amountName = /^_?(value|amount|wad)$/i

/**
 * An occurrence's arguments, each an amount of its token shown in whole units where the token's decimals are known
 * (the raw value on hover), the rest as {@link valueText} writes them.
 */
const Args = ({
  args,
  decimals
}: {
  readonly args: Record<string, AbiValue>
  readonly decimals: number | undefined
}) => (
  <>
    {Object.entries(args).map(([k, x], i) => (
      <>
        {i === 0 ? "" : ", "}
        {`${k}: `}
        {decimals !== undefined && amountName.test(k) && typeof x === "string" && /^[0-9]+$/.test(x) ? (
          <span class="amount" title={`${x} (raw, ${decimals} decimals)`} data-testid="amount">
            {Value.format(BigInt(x), decimals)}
          </span>
        ) : (
          valueText(x)
        )}
      </>
    ))}
  </>
)

const AlertItem = ({
  alert,
  bot,
  decimalsOf,
  channelNames,
  onRedeliver
}: {
  readonly alert: Alert
  readonly bot: Bot | undefined
  /** The decimals of a token contract by its label, where known. */
  readonly decimalsOf: (label: string) => number | undefined
  readonly channelNames: ReadonlyMap<string, string>
  readonly onRedeliver: () => void
}) => (
  <li class={`alert alert-${alert.state}`} data-testid="alert">
    <p>
      {bot === undefined ? null : (
        <>
          <strong>{bot.botName}</strong> <span class={`severity severity-${bot.severity}`}>{bot.severity}</span> ·{" "}
        </>
      )}
      <span class={`state state-${alert.state}`}>{alert.state}</span>
      {alert.suppressed === undefined ? "" : <span class="meta"> · suppressed ({alert.suppressed})</span>} · block{" "}
      {count(alert.blockNumber)} · <When at={alert.created} />
    </p>
    <p class="mono">{alert.expression}</p>
    <ul class="occurrences" aria-label="evidence">
      {Object.entries(alert.evidence.occurrences).map(([ref, o]) => (
        <li key={ref} class="mono">
          {`${ref}: ${o.contract}.${o.name}(`}
          <Args args={o.args as Record<string, AbiValue>} decimals={decimalsOf(o.contract)} />
          {`)${o.reverted === true ? " (reverted)" : ""}`}
        </li>
      ))}
    </ul>
    <dl class="evidence">
      {Object.entries(alert.transactions).map(([name, hash]) => (
        <>
          <dt>{name}</dt>
          <dd class="mono">{hash}</dd>
        </>
      ))}
    </dl>
    {alert.notifications.length === 0 ? null : (
      <ul class="deliveries" aria-label="deliveries">
        {alert.notifications.map((n) => (
          <li class={`delivery delivery-${n.status}`} data-testid="delivery">
            {deliveryText(n, channelNames.get(n.channelId) ?? n.channelId)}
          </li>
        ))}
      </ul>
    )}
    {alert.notifications.some((n) => n.status === "dead") ? <button onClick={onRedeliver}>Send again</button> : null}
  </li>
)

export const Monitoring = ({
  keyValue,
  onEdit
}: {
  readonly keyValue: string
  readonly onEdit: (bot: Bot) => void
}) => {
  const [bots, setBots] = useState<ReadonlyArray<Bot> | undefined>()
  const [selected, setSelected] = useState<string | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [channelNames, setChannelNames] = useState<ReadonlyMap<string, string>>(new Map())
  useEffect(() => {
    void clientFor(keyValue)
      .channels()
      .then((answer) => setChannelNames(new Map((answer.data?.channels ?? []).map((c) => [c.id, c.name]))))
    void clientFor(keyValue)
      .bots()
      .then((answer) => {
        if (answer.data === undefined) return setProblem(errorMessage(answer.error, answer.response.status))
        setBots(answer.data.bots)
        setSelected((s) => s ?? answer.data.bots[0]?.id)
      })
  }, [keyValue])
  // The feed: newest first, asked again every moment, so alerts and retractions appear without a reload.
  const feed = useRead(
    () => (selected === undefined ? undefined : clientFor(keyValue).alerts(selected)),
    [keyValue, selected],
    alertsPollMillis
  )
  const alerts: ReadonlyArray<Alert> = feed.value?.alerts ?? []
  // Token amounts read in whole units: the decimals of the key's contracts, by chain and label.
  const contracts = useRead(() => clientFor(keyValue).contracts(), [keyValue])
  const decimals = new Map(
    (contracts.value?.contracts ?? []).flatMap((c) =>
      c.decimals === undefined ? [] : [[`${c.chainId}:${c.label}`, c.decimals] as const]
    )
  )
  if (problem !== undefined || feed.problem !== undefined)
    return (
      <p role="alert" class="problem">
        {problem ?? feed.problem}
      </p>
    )
  if (bots === undefined) return <p>Loading the bots…</p>
  if (bots.length === 0)
    return (
      <p data-testid="bots-empty">
        This key has no bot yet, so there is no alert to show. Register a contract (Contracts), write its rule in Rules
        and create the bot there; its alerts then appear here as the chain is followed.
      </p>
    )
  return (
    <section aria-label="Monitoring">
      <label for="bot">Bot</label>
      <select id="bot" value={selected} onChange={(e) => setSelected(e.currentTarget.value)}>
        {bots.map((b) => (
          <option key={b.id} value={b.id}>
            {b.botName} (chain {b.chainId}, {b.paused !== undefined ? "paused" : b.active ? "active" : "inactive"})
          </option>
        ))}
      </select>
      {bots
        .filter((b) => b.id === selected)
        .map((b) => (
          <>
            <p class="note" data-testid="bot-state">
              {b.active ? "Active" : "Paused"} · {b.watchRule.expressions.join(" AND ")}
              {b.watchingFrom === undefined ? "" : ` · watching from block ${b.watchingFrom.blockNumber}`}
              {b.paused === undefined ? "" : ` · stopped at block ${b.paused.blockNumber}: ${b.paused.reason}`}
            </p>
            <button
              onClick={() =>
                void clientFor(keyValue)
                  .setActive(b.id, !b.active)
                  .then((answer) => {
                    if (answer.data === undefined) setProblem(errorMessage(answer.error, answer.response.status))
                    else setBots(bots.map((x) => (x.id === b.id ? answer.data.bot : x)))
                  })
              }
            >
              {b.active ? "Pause" : "Resume"}
            </button>{" "}
            <button onClick={() => onEdit(b)}>Edit rule</button>{" "}
            <button
              onClick={() => {
                if (!window.confirm(`Delete the bot ${b.botName}? It stops watching at once.`)) return
                void clientFor(keyValue)
                  .deleteBot(b.id)
                  .then((answer) => {
                    if (answer.data === undefined) return setProblem(errorMessage(answer.error, answer.response.status))
                    const rest = bots.filter((x) => x.id !== b.id)
                    setBots(rest)
                    setSelected(rest[0]?.id)
                  })
              }}
            >
              Delete bot
            </button>
          </>
        ))}
      <h2>Alerts</h2>
      {alerts.length === 0 ? (
        <p>No alert yet; new ones appear here as the chain is followed.</p>
      ) : (
        <ol class="alerts" data-testid="alerts">
          {alerts.map((a) => (
            <AlertItem
              key={a.id}
              alert={a}
              bot={bots.find((b) => b.id === a.botId)}
              decimalsOf={(label) => decimals.get(`${a.chainId}:${label}`)}
              channelNames={channelNames}
              onRedeliver={() => void clientFor(keyValue).redeliver(a.botId, a.id)}
            />
          ))}
        </ol>
      )}
    </section>
  )
}
