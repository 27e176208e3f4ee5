/** The Vigil console: sign in with an API key, screen addresses (at any date), and see the key's usage. */
import { Chain } from "@vigil/core"
import { type ComponentChildren, render } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import {
  type BatchItem,
  batchLimit,
  clientFor,
  errorMessage,
  type IntelResult,
  type AbiValue,
  type Alert,
  type Bot,
  type Channel,
  type ChannelRequest,
  type Contract,
  type ListStatus,
  type RuleCheck,
  type Signal,
  signIn,
  signOut,
  storedKey
} from "./client"
import { addressesIn, ended, toCsv } from "./csv"
import "./style.css"

const SignIn = ({ onKey }: { readonly onKey: (key: string) => void }) => {
  const [key, setKey] = useState("")
  const [problem, setProblem] = useState<string | undefined>()
  const submit = async (event: Event) => {
    event.preventDefault()
    const trimmed = key.trim()
    const answer = await clientFor(trimmed).status()
    if (answer.data?.status !== "authenticated") {
      setProblem(`This key is ${answer.data?.status ?? "not accepted"}.`)
      return
    }
    signIn(trimmed)
    onKey(trimmed)
  }
  return (
    <main class="narrow">
      <h1>Vigil console</h1>
      <form onSubmit={submit} aria-describedby="sign-in-note">
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          required
          autofocus
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
        <p id="sign-in-note" class="note">
          The key stays in this tab only (sessionStorage); every request goes through the public API with it.
        </p>
        {problem === undefined ? null : (
          <p role="alert" class="problem">
            {problem}
          </p>
        )}
      </form>
    </main>
  )
}

/**
 * A table of results, its column headings and its rows: on a phone it scrolls sideways, in a labelled region the
 * keyboard can reach and scroll.
 */
const Results = ({
  label,
  testId,
  head,
  children
}: {
  readonly label: string
  readonly testId: string
  readonly head: ComponentChildren
  readonly children: ComponentChildren
}) => (
  <div class="wide" role="region" aria-label={label} tabIndex={0}>
    <table class="results" data-testid={testId}>
      <thead>
        <tr>{head}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)

const actionClass = (action: string) => `action action-${action.toLowerCase()}`

const Evidence = ({ signal }: { readonly signal: Signal }) => {
  const e = signal.evidence
  return (
    <dl class="evidence">
      <dt>List</dt>
      <dd>
        {e.list} ({e.authority})
      </dd>
      <dt>Reference</dt>
      <dd>{e.reference}</dd>
      <dt>Listed</dt>
      <dd>
        {e.listedAt}
        {ended(e)}
      </dd>
      {e.entityName === undefined ? null : (
        <>
          <dt>Entity</dt>
          <dd>{e.entityName}</dd>
        </>
      )}
      {e.exposure === undefined ? null : (
        <>
          <dt>Exposure</dt>
          <dd>
            {e.exposure.direction} with {e.exposure.counterparty} on {e.exposure.network}:{" "}
            {e.exposure.transactions.join(", ")}
          </dd>
        </>
      )}
    </dl>
  )
}

const ResultCard = ({ result }: { readonly result: IntelResult }) => (
  <section class="card" aria-label={`Screening of ${result.address}`} data-testid="result">
    <header>
      <h2 class="address">{result.address}</h2>
      <p class="networks">
        {result.metadata.chain.family}: {result.metadata.chain.networks.join(", ")} · as of {result.metadata.as_of}
      </p>
    </header>
    <div class="verdict">
      <span class={actionClass(result.recommendation.action)} data-testid="action">
        {result.recommendation.action}
      </span>
      <span class="score" aria-label="score">
        {result.score}
      </span>
      <span class={`band band-${result.risk_level}`}>{result.risk_level}</span>
      <span class="meta">
        confidence {result.confidence}
        {result.metadata.is_complete ? "" : " · incomplete"}
        {result.recommendation.ai_enhanced ? " · calibrated" : ""}
      </span>
    </div>
    <p class="summary">{result.recommendation.summary}</p>
    <p class="details">{result.recommendation.details}</p>
    {(result.metadata.warnings ?? []).map((w) => (
      <p class="warning" role="note">
        {w}
      </p>
    ))}
    <ul class="flags" aria-label="flags">
      {Object.entries(result.flags).map(([flag, on]) => (
        <li class={on ? "on" : "off"}>
          {flag.replace("_", " ")}: {on ? "yes" : "no"}
        </li>
      ))}
    </ul>
    <p>
      Entity: <strong>{result.entity.name}</strong> ({result.entity.type}, {result.entity.category})
    </p>
    {result.details === undefined || result.details.records.length === 0 ? null : (
      <>
        <h3>Listing history</h3>
        <Results
          label="Listing history"
          testId="history"
          head={
            <>
              <th scope="col">List</th>
              <th scope="col">Reference</th>
              <th scope="col">Category</th>
              <th scope="col">Listed</th>
              <th scope="col">De-listed</th>
            </>
          }
        >
          {[...result.details.records]
            .sort((a, b) => a.listedAt.localeCompare(b.listedAt))
            .map((r) => (
              <tr>
                <td>{r.list}</td>
                <td>{r.reference}</td>
                <td>{r.category}</td>
                <td>{r.listedAt}</td>
                <td>{ended(r).replace(/^, /, "") || "in force"}</td>
              </tr>
            ))}
        </Results>
      </>
    )}
    <h3>Signals</h3>
    {result.signals.length === 0 ? (
      <p>No list names this address.</p>
    ) : (
      <ol class="signals">
        {result.signals.map((s) => (
          <li data-testid="signal">
            <p>
              <strong>{s.type}</strong> · weight {s.weight} · {s.source}
            </p>
            <p>{s.summary}</p>
            <Evidence signal={s} />
          </li>
        ))}
      </ol>
    )}
  </section>
)

/** What the address typed so far is, detected as it is typed (the same detection the server makes). */
const Detected = ({ address }: { readonly address: string }) => {
  const typed = address.trim()
  if (typed === "") return <p id="detected" class="note" />
  const d = Chain.detect(typed)
  return (
    <p id="detected" class="note" data-testid="detected" aria-live="polite">
      {d.valid ? `${d.family}: ${d.networks.join(", ")}` : `Not an address Vigil screens: ${d.reason}`}
      {d.valid && d.warning !== undefined ? <strong class="problem"> {d.warning}</strong> : null}
    </p>
  )
}

const Screen = ({ keyValue }: { readonly keyValue: string }) => {
  const [address, setAddress] = useState("")
  const [asOf, setAsOf] = useState("")
  const [result, setResult] = useState<IntelResult | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const screen = async (at: string) => {
    if (address.trim() === "") return
    setBusy(true)
    const answer = await clientFor(keyValue).screen(address.trim(), { asOf: at })
    setBusy(false)
    if (answer.data === undefined) {
      setResult(undefined)
      setProblem(errorMessage(answer.error, answer.response.status))
    } else {
      setProblem(undefined)
      setResult(answer.data)
    }
  }
  return (
    <section aria-label="Screen an address">
      <form
        class="screen"
        onSubmit={(e) => {
          e.preventDefault()
          void screen(asOf)
        }}
      >
        <label for="address">Address (any of the 18 networks)</label>
        <input
          id="address"
          name="address"
          spellcheck={false}
          autocomplete="off"
          aria-describedby="detected"
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
        <Detected address={address} />
        <label for="as-of">As of (empty: today)</label>
        <input
          id="as-of"
          name="as-of"
          type="date"
          value={asOf}
          onChange={(e) => {
            setAsOf(e.currentTarget.value)
            if (result !== undefined) void screen(e.currentTarget.value)
          }}
        />
        <button type="submit" disabled={busy}>
          Screen
        </button>
      </form>
      {problem === undefined ? null : (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      {result === undefined ? null : <ResultCard result={result} />}
    </section>
  )
}

type SortKey = "input" | "address" | "action" | "score"

const actionRank: Readonly<Record<string, number>> = { BLOCK: 5, REVIEW: 4, MONITOR: 3, ALLOW_CAUTIOUS: 2, ALLOW: 1 }

const sorted = (items: ReadonlyArray<BatchItem>, key: SortKey): ReadonlyArray<BatchItem> => {
  if (key === "input") return items
  const score = (i: BatchItem) => ("error" in i ? -1 : i.score)
  const action = (i: BatchItem) => ("error" in i ? 0 : (actionRank[i.recommendation.action] ?? 0))
  return [...items].sort((a, b) =>
    key === "address"
      ? a.address.localeCompare(b.address)
      : key === "score"
        ? score(b) - score(a)
        : action(b) - action(a) || score(b) - score(a)
  )
}

/** A count with thousands separators, as the reader's locale writes them. */
const count = (n: number): string => n.toLocaleString()

/** Days from an ISO date to today (UTC). */
const daysSince = (day: string): number =>
  Math.round((Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse(day)) / 86_400_000)

const Batch = ({ keyValue }: { readonly keyValue: string }) => {
  const [text, setText] = useState("")
  const [fileText, setFileText] = useState("")
  const [asOf, setAsOf] = useState("")
  const [items, setItems] = useState<ReadonlyArray<BatchItem>>([])
  const [progress, setProgress] = useState<{ readonly done: number; readonly total: number } | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [sortKey, setSortKey] = useState<SortKey>("input")
  const run = async () => {
    const addresses = addressesIn(`${text}\n${fileText}`)
    if (addresses.length === 0) return setProblem("No address found in the text or the file.")
    setProblem(undefined)
    setItems([])
    const done: Array<BatchItem> = []
    setProgress({ done: 0, total: addresses.length })
    for (let i = 0; i < addresses.length; i += batchLimit) {
      const answer = await clientFor(keyValue).batch(addresses.slice(i, i + batchLimit), { asOf })
      if (answer.data === undefined) {
        setProblem(
          `Stopped after ${done.length} of ${addresses.length}: ${errorMessage(answer.error, answer.response.status)}`
        )
        break
      }
      done.push(...answer.data.results)
      setItems([...done])
      setProgress({ done: done.length, total: addresses.length })
    }
  }
  const download = () => {
    const url = URL.createObjectURL(new Blob([toCsv(items)], { type: "text/csv" }))
    const a = document.createElement("a")
    a.href = url
    a.download = "vigil-screening.csv"
    a.click()
    URL.revokeObjectURL(url)
  }
  const header = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={sortKey !== key ? "none" : key === "address" ? "ascending" : "descending"}>
      <button class="sort" onClick={() => setSortKey(key)}>
        {label}
      </button>
    </th>
  )
  return (
    <section aria-label="Screen many addresses">
      <form
        class="screen"
        onSubmit={(e) => {
          e.preventDefault()
          void run()
        }}
      >
        <label for="addresses">Addresses (one per line, or pasted CSV)</label>
        <textarea
          id="addresses"
          rows={6}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <label for="csv">Or a CSV file</label>
        <input
          id="csv"
          type="file"
          accept=".csv,text/csv,text/plain"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0]
            if (file === undefined) return setFileText("")
            void file.text().then(setFileText)
          }}
        />
        <label for="batch-as-of">As of (empty: today)</label>
        <input id="batch-as-of" type="date" value={asOf} onChange={(e) => setAsOf(e.currentTarget.value)} />
        <button type="submit">Screen all</button>
      </form>
      {progress === undefined ? null : (
        <p>
          <progress aria-label="Batch progress" value={progress.done} max={progress.total} /> {progress.done} of{" "}
          {progress.total} screened
        </p>
      )}
      {problem === undefined ? null : (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      {items.length === 0 ? null : (
        <>
          <button onClick={download}>Download CSV</button>
          <Results
            label="Batch results"
            testId="batch-results"
            head={
              <>
                {header("address", "Address")}
                {header("action", "Action")}
                {header("score", "Score")}
                <th scope="col">Sanctioned</th>
                <th scope="col">Entity</th>
                <th scope="col">Signals</th>
              </>
            }
          >
            {sorted(items, sortKey).map((item) => (
              <tr key={item.address}>
                <td class="mono nowrap">{item.address}</td>
                {"error" in item ? (
                  <td colSpan={5}>{item.error.message}</td>
                ) : (
                  <>
                    <td>
                      <span class={actionClass(item.recommendation.action)}>{item.recommendation.action}</span>
                    </td>
                    <td>{item.score}</td>
                    <td>{item.flags.sanctioned ? "yes" : "no"}</td>
                    <td>{item.entity.name ?? ""}</td>
                    <td>{item.signals.map((sig) => `${sig.type} (${sig.evidence.list})`).join(", ")}</td>
                  </>
                )}
              </tr>
            ))}
          </Results>
        </>
      )}
    </section>
  )
}

const Lists = ({ keyValue }: { readonly keyValue: string }) => {
  const [lists, setLists] = useState<ReadonlyArray<ListStatus> | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [filter, setFilter] = useState("")
  useEffect(() => {
    void clientFor(keyValue)
      .lists()
      .then((answer) =>
        answer.data === undefined
          ? setProblem(errorMessage(answer.error, answer.response.status))
          : setLists(answer.data.lists)
      )
  }, [keyValue])
  if (problem !== undefined)
    return (
      <p role="alert" class="problem">
        {problem}
      </p>
    )
  if (lists === undefined) return <p>Loading the lists…</p>
  if (lists.length === 0)
    return (
      <p>
        No list has been ingested yet: every answer is incomplete until one is. A new store starts with the built-in
        official lists unless VIGIL_BUILTIN_LISTS=off; vigil refresh or vigil ingest adds them.
      </p>
    )
  // Official lists first (only they decide the sanctioned flag), then by name.
  const needle = filter.trim().toLowerCase()
  const shown = [...lists]
    .sort(
      (a, b) => Number(b.authority === "official") - Number(a.authority === "official") || a.list.localeCompare(b.list)
    )
    .filter(
      (l) => needle === "" || [l.list, l.source, l.kind, l.authority].some((t) => t.toLowerCase().includes(needle))
    )
  return (
    <section aria-label="Lists">
      <label for="list-filter">Filter (name, publisher, kind or authority)</label>
      <input id="list-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <p class="meta">
        {shown.length === lists.length
          ? `${count(lists.length)} lists`
          : `${count(shown.length)} of ${count(lists.length)} lists`}
      </p>
      <Results
        label="Stored lists"
        testId="lists"
        head={
          <>
            <th scope="col">List</th>
            <th scope="col">Kind and authority</th>
            <th scope="col">Current version</th>
            <th scope="col">Versions in effect</th>
            <th scope="col">Records</th>
            <th scope="col">Verification</th>
            <th scope="col">Last refresh</th>
          </>
        }
      >
        {shown.map((l) => (
          <tr key={l.list}>
            <td>
              <strong>{l.list}</strong>
              <br />
              {l.source}
            </td>
            <td>
              {l.kind}, {l.authority}
            </td>
            <td data-testid="list-version">
              {l.version} of {l.asOf} ({count(daysSince(l.asOf))} days old)
              <br />
              <span class="meta">
                ingested {l.ingestedAt.slice(0, 10)} from {l.origin.split("/").at(-1)}
              </span>
            </td>
            <td>{l.versions.join(", ")}</td>
            <td>
              {count(l.active)} in force, {count(l.delisted)} de-listed
            </td>
            <td>{l.problem === undefined ? "no damage found" : <span class="problem">{l.problem}</span>}</td>
            <td data-testid="refresh">
              {l.refused === undefined ? (
                "in force"
              ) : (
                <span class="problem">
                  refused {l.refused.at.slice(0, 16).replace("T", " ")} UTC: {l.refused.message}
                </span>
              )}
            </td>
          </tr>
        ))}
      </Results>
    </section>
  )
}

/** One problem drawn under its expression: the source, a caret at the offset, the message and what was meant. */
const Caret = ({ source, problem }: { readonly source: string; readonly problem: RuleCheck["problems"][number] }) => (
  <pre class="caret" data-testid="problem">
    {`${source}\n${" ".repeat(problem.offset)}^ ${problem.message}${
      problem.candidates.length === 0 ? "" : ` (did you mean ${problem.candidates.join(", ")}?)`
    }`}
  </pre>
)

type Severity = "Critical" | "High" | "Medium" | "Low"

/**
 * Creates a bot with a rule that checks (its name, severity and channels; watching from now), or saves the rule and
 * fields of the bot being edited (a new rule watches from now too).
 */
const SaveBot = ({
  keyValue,
  chainId,
  expressions,
  bot
}: {
  readonly keyValue: string
  readonly chainId: number
  readonly expressions: ReadonlyArray<string>
  readonly bot: Bot | undefined
}) => {
  const [name, setName] = useState(bot?.botName ?? "")
  const [severity, setSeverity] = useState<Severity>(bot?.severity ?? "High")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const [channels, setChannels] = useState<ReadonlyArray<Channel>>([])
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(bot?.notifications ?? []))
  useEffect(() => {
    void clientFor(keyValue)
      .channels()
      .then((answer) => setChannels(answer.data?.channels ?? []))
  }, [keyValue])
  const save = async (event: Event) => {
    event.preventDefault()
    const fields = { botName: name.trim(), severity, expressions, notifications: [...chosen] }
    const answer =
      bot === undefined
        ? await clientFor(keyValue).createBot({ ...fields, chainId, active: true })
        : await clientFor(keyValue).updateBot(bot.id, fields)
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    const saved = answer.data.bot
    const from = saved.watchingFrom === undefined ? "" : `, watching from block ${saved.watchingFrom.blockNumber}`
    setOutcome({
      ok: true,
      text:
        bot === undefined
          ? `Created ${saved.botName} (${saved.id})${from}.`
          : `Saved ${saved.botName} (${saved.id}), revision ${saved.revision}${from}.`
    })
  }
  return (
    <form class="save-bot" onSubmit={save}>
      <label for="bot-name">Bot name</label>
      <input id="bot-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="severity">Severity</label>
      <select id="severity" value={severity} onChange={(e) => setSeverity(e.currentTarget.value as Severity)}>
        {["Critical", "High", "Medium", "Low"].map((s) => (
          <option value={s}>{s}</option>
        ))}
      </select>
      {channels.length === 0 ? null : (
        <fieldset>
          <legend>Notify</legend>
          {channels.map((c) => (
            <label class="inline">
              <input
                type="checkbox"
                checked={chosen.has(c.id)}
                onChange={(e) => {
                  const next = new Set(chosen)
                  if (e.currentTarget.checked) next.add(c.id)
                  else next.delete(c.id)
                  setChosen(next)
                }}
              />{" "}
              {c.name} ({c.type})
            </label>
          ))}
        </fieldset>
      )}
      <button type="submit">{bot === undefined ? "Create bot" : "Save changes"}</button>
      {outcome === undefined ? null : (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "ok" : "problem"} data-testid="bot-created">
          {outcome.text}
        </p>
      )}
    </form>
  )
}

/** The rule editor: a new bot's rule, or the rule of `editing` (its chain fixed), checked as it is typed. */
const RulesView = ({
  keyValue,
  editing,
  onNew
}: {
  readonly keyValue: string
  readonly editing: Bot | undefined
  readonly onNew: () => void
}) => {
  const keyChain = useKeyChain(keyValue)
  const [chosen, setChainId] = useState<string | undefined>(editing === undefined ? undefined : String(editing.chainId))
  // A new rule opens on the chain the key uses (its contracts', else its bots'), once that is known.
  const chainId = chosen ?? keyChain ?? ""
  const [text, setText] = useState(editing?.watchRule.expressions.join("\n") ?? "")
  const [labels, setLabels] = useState<ReadonlyArray<string>>([])
  const [found, setFound] = useState<RuleCheck | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const chain = Number(chainId)
  useEffect(() => {
    if (!Number.isInteger(chain) || chain < 1) return
    // Only the answer for the chain shown now counts: an earlier one arriving late is dropped.
    let current = true
    void clientFor(keyValue)
      .contracts(chain)
      .then((answer) => {
        if (current) setLabels(answer.data?.contracts.map((c) => c.label) ?? [])
      })
    return () => {
      current = false
    }
  }, [keyValue, chain])
  // Checked as you type: each change waits a moment, and only the latest answer is shown.
  useEffect(() => {
    const expressions = text.split("\n").filter((l) => l.trim() !== "")
    if (expressions.length === 0 || !Number.isInteger(chain) || chain < 1) return setFound(undefined)
    let current = true
    const timer = setTimeout(() => {
      void clientFor(keyValue)
        .checkRule(chain, expressions, editing)
        .then((answer) => {
          if (!current) return
          if (answer.data === undefined) {
            setFound(undefined)
            setProblem(errorMessage(answer.error, answer.response.status))
          } else {
            setProblem(undefined)
            setFound(answer.data)
          }
        })
    }, 300)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [keyValue, chain, text, editing])
  const expressions = text.split("\n").filter((l) => l.trim() !== "")
  return (
    <section aria-label="Watch rules">
      {editing === undefined ? null : (
        <p class="note" data-testid="editing">
          Editing {editing.botName} ({editing.id}), revision {editing.revision}.{" "}
          <button onClick={onNew}>New bot instead</button>
        </p>
      )}
      <label for="rule-chain">Chain id</label>
      <input
        id="rule-chain"
        inputMode="numeric"
        value={chainId}
        readOnly={editing !== undefined}
        onInput={(e) => setChainId(e.currentTarget.value)}
      />
      <p class="note">
        Contracts of this key on the chain: {labels.length === 0 ? "none (POST /v1/contracts)" : labels.join(", ")}
      </p>
      <label for="rule">Rule: one expression per line, AND-ed as a bot takes them</label>
      <textarea id="rule" rows={4} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      {problem === undefined ? null : (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      {found === undefined ? null : found.ok ? (
        <>
          <p class="ok" data-testid="rule-ok">
            Checks. Normal form: <code>{found.normal}</code>
          </p>
          <SaveBot keyValue={keyValue} chainId={chain} expressions={expressions} bot={editing} />
        </>
      ) : (
        <div role="status" data-testid="rule-problems">
          <p class="problem">{found.message}</p>
          {found.problems.map((p) => (
            <Caret source={expressions[p.expression] ?? ""} problem={p} />
          ))}
        </div>
      )}
    </section>
  )
}

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

/** An instant in the reader's local time, the UTC instant on hover. */
const When = ({ at }: { readonly at: string }) => (
  <time
    dateTime={at}
    title={`${at
      .replace("T", " ")
      .replace(/\.\d+Z$/, "Z")
      .replace("Z", " UTC")}`}
  >
    {new Date(at).toLocaleString()}
  </time>
)

/** A delivery's state in words: a retried delivery's old error is said as past, a dead one stands out. */
const deliveryText = (n: Alert["notifications"][number], channel: string): string => {
  const attempts = `${n.attempts} attempt${n.attempts === 1 ? "" : "s"}`
  if (n.status === "delivered")
    return `${n.kind} to ${channel}: delivered after ${attempts}${n.lastError === undefined || n.attempts <= 1 ? "" : ` (an earlier attempt failed: ${n.lastError})`}`
  if (n.status === "dead")
    return `${n.kind} to ${channel}: not delivered, gave up after ${attempts}${n.lastError === undefined ? "" : ` (${n.lastError})`}`
  return `${n.kind} to ${channel}: ${n.status} after ${attempts}${n.lastError === undefined ? "" : ` (last attempt: ${n.lastError})`}`
}

const AlertItem = ({
  alert,
  bot,
  channelNames,
  onRedeliver
}: {
  readonly alert: Alert
  readonly bot: Bot | undefined
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
          {`${ref}: ${o.contract}.${o.name}(${valueText(o.args)})${o.reverted === true ? " (reverted)" : ""}`}
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

const Monitoring = ({ keyValue, onEdit }: { readonly keyValue: string; readonly onEdit: (bot: Bot) => void }) => {
  const [bots, setBots] = useState<ReadonlyArray<Bot> | undefined>()
  const [selected, setSelected] = useState<string | undefined>()
  const [alerts, setAlerts] = useState<ReadonlyArray<Alert>>([])
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
  useEffect(() => {
    if (selected === undefined) return
    let live = true
    const read = () =>
      void clientFor(keyValue)
        .alerts(selected)
        .then((answer) => {
          if (!live) return
          if (answer.data === undefined) setProblem(errorMessage(answer.error, answer.response.status))
          else setAlerts(answer.data.alerts)
        })
    read()
    const timer = setInterval(read, alertsPollMillis)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [keyValue, selected])
  if (problem !== undefined)
    return (
      <p role="alert" class="problem">
        {problem}
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
                    setAlerts([])
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
              channelNames={channelNames}
              onRedeliver={() => void clientFor(keyValue).redeliver(a.botId, a.id)}
            />
          ))}
        </ol>
      )}
    </section>
  )
}

/**
 * The chain a monitoring view opens on: the chain of the key's first contract, else of its first bot, else
 * Ethereum (1); undefined while it is being read.
 */
const useKeyChain = (keyValue: string): string | undefined => {
  const [chain, setChain] = useState<string | undefined>()
  useEffect(() => {
    let current = true
    void Promise.all([clientFor(keyValue).contracts(), clientFor(keyValue).bots()]).then(([contracts, bots]) => {
      if (!current) return
      const id = contracts.data?.contracts[0]?.chainId ?? bots.data?.bots[0]?.chainId ?? 1
      setChain(String(id))
    })
    return () => {
      current = false
    }
  }, [keyValue])
  return chain
}

const Contracts = ({ keyValue }: { readonly keyValue: string }) => {
  const keyChain = useKeyChain(keyValue)
  return keyChain === undefined ? (
    <p>Loading the contracts…</p>
  ) : (
    <ContractsOn keyValue={keyValue} initialChain={keyChain} />
  )
}

const ContractsOn = ({ keyValue, initialChain }: { readonly keyValue: string; readonly initialChain: string }) => {
  const [contracts, setContracts] = useState<ReadonlyArray<Contract>>([])
  const [chainId, setChainId] = useState(initialChain)
  const [inUse, setInUse] = useState<{ readonly contract: Contract; readonly bots: string } | undefined>()
  const [address, setAddress] = useState("")
  const [label, setLabel] = useState("")
  const [abi, setAbi] = useState("")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const [version, setVersion] = useState(0)
  useEffect(() => {
    let current = true
    void clientFor(keyValue)
      .contracts(Number(chainId))
      .then((answer) => {
        if (current) setContracts(answer.data?.contracts ?? [])
      })
    return () => {
      current = false
    }
  }, [keyValue, chainId, version])
  const register = async (event: Event) => {
    event.preventDefault()
    setOutcome(undefined)
    const answer = await clientFor(keyValue).registerContract({
      chainId: Number(chainId),
      contractAddress: address.trim(),
      label: label.trim(),
      abi
    })
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    const c = answer.data.contract
    setOutcome({
      ok: true,
      text: `Registered ${c.label} (ABI ${c.abiSource}${c.proxy === undefined ? "" : `, a proxy of ${c.proxy.implementation}`}).`
    })
    setVersion((v) => v + 1)
  }
  /** Deletes a contract; one that bots use is deleted only when confirmed, as the API asks (409, then ?force). */
  const remove = async (c: Contract, force: boolean) => {
    const answer = await clientFor(keyValue).deleteContract(c.id, force)
    if (answer.response.status === 409 && !force) {
      const details = (answer.error as { details?: { bots?: ReadonlyArray<{ botName: string }> } } | undefined)?.details
      setInUse({ contract: c, bots: (details?.bots ?? []).map((b) => b.botName).join(", ") })
      return
    }
    setInUse(undefined)
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    setOutcome({ ok: true, text: `Deleted ${c.label}.` })
    setVersion((v) => v + 1)
  }
  return (
    <section aria-label="Contracts">
      <form class="screen" onSubmit={register}>
        <label for="contract-chain">Chain id</label>
        <input
          id="contract-chain"
          inputMode="numeric"
          value={chainId}
          onInput={(e) => setChainId(e.currentTarget.value)}
        />
        <label for="contract-address">Contract address</label>
        <input
          id="contract-address"
          spellcheck={false}
          required
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
        <label for="contract-label">Label (the name rules use)</label>
        <input id="contract-label" required value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        <label for="contract-abi">ABI (JSON; empty: fetched from Sourcify or an explorer)</label>
        <textarea
          id="contract-abi"
          rows={4}
          spellcheck={false}
          value={abi}
          onInput={(e) => setAbi(e.currentTarget.value)}
        />
        <button type="submit">Register</button>
      </form>
      {outcome === undefined ? null : (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "ok" : "problem"} data-testid="contract-outcome">
          {outcome.text}
        </p>
      )}
      <Results
        label="Registered contracts"
        testId="contracts"
        head={
          <>
            <th scope="col">Label</th>
            <th scope="col">Address</th>
            <th scope="col">ABI</th>
            <th scope="col">Proxy of</th>
            <th scope="col">Delete</th>
          </>
        }
      >
        {contracts.map((c) => (
          <tr key={c.id}>
            <td>{c.label}</td>
            <td class="mono">{c.contractAddress}</td>
            <td>
              {c.abiSource}, {c.ABI.length} entries
            </td>
            <td class="mono">{c.proxy?.implementation ?? ""}</td>
            <td>
              <button onClick={() => void remove(c, false)} aria-label={`Delete ${c.label}`}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Results>
      {inUse === undefined ? null : (
        <div role="alertdialog" aria-label="Delete a contract in use" class="confirm" data-testid="confirm-delete">
          <p>
            {inUse.contract.label} is used by {inUse.bots || "bots of this key"}: their rules would no longer check
            without it, and they would stop alerting. Delete it anyway?
          </p>
          <button onClick={() => void remove(inUse.contract, true)}>Delete anyway</button>{" "}
          <button onClick={() => setInUse(undefined)}>Keep it</button>
        </div>
      )}
      {contracts.length === 0 ? (
        <p class="note" data-testid="contracts-empty">
          No contract of this key on chain {chainId}. Register one above (its ABI pasted, or fetched when the contract
          is verified), or change the chain id.
        </p>
      ) : null}
    </section>
  )
}

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

const Channels = ({ keyValue }: { readonly keyValue: string }) => {
  const [channels, setChannels] = useState<ReadonlyArray<Channel>>([])
  const [type, setType] = useState<ChannelType>("slack")
  const [name, setName] = useState("")
  const [url, setUrl] = useState("")
  const [botToken, setBotToken] = useState("")
  const [chatId, setChatId] = useState("")
  const [to, setTo] = useState("")
  const [outcome, setOutcome] = useState<{ readonly ok: boolean; readonly text: string } | undefined>()
  const [version, setVersion] = useState(0)
  useEffect(() => {
    void clientFor(keyValue)
      .channels()
      .then((answer) => setChannels(answer.data?.channels ?? []))
  }, [keyValue, version])
  const create = async (event: Event) => {
    event.preventDefault()
    const answer = await clientFor(keyValue).createChannel(
      channelRequest(type, name.trim(), { url, botToken, chatId, to })
    )
    if (answer.data === undefined)
      return setOutcome({ ok: false, text: errorMessage(answer.error, answer.response.status) })
    setOutcome({ ok: true, text: `Created ${answer.data.channel.name}.` })
    setVersion((v) => v + 1)
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
    setVersion((v) => v + 1)
  }
  const test = async (channel: Channel) => {
    const answer = await clientFor(keyValue).testChannel(channel.id)
    setOutcome(
      answer.data === undefined
        ? { ok: false, text: errorMessage(answer.error, answer.response.status) }
        : { ok: true, text: `A test message to ${channel.name} is on its way.` }
    )
    setVersion((v) => v + 1)
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
      <button onClick={() => setVersion((v) => v + 1)}>Refresh</button>
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

const Usage = ({ keyValue }: { readonly keyValue: string }) => {
  const [status, setStatus] = useState<string | undefined>()
  const [rows, setRows] = useState<ReadonlyArray<[string, string]>>([])
  useEffect(() => {
    void clientFor(keyValue)
      .status()
      .then((answer) => {
        const s = answer.data
        if (s === undefined) return setStatus("unavailable")
        setStatus(s.status)
        setRows([
          ["Client", s.client.name],
          ["Requests per second", count(s.client.qps)],
          [
            "Today",
            `${count(s.usage.dailyUsed)} used, ${count(s.usage.dailyRemaining)} left of ${count(s.client.dailyLimit)}`
          ],
          [
            "This month",
            `${count(s.usage.monthlyUsed)} used, ${count(s.usage.monthlyRemaining)} left of ${count(s.client.monthlyLimit)}`
          ]
        ])
      })
  }, [keyValue])
  return (
    <section aria-label="Usage">
      <p>Key status: {status ?? "…"}</p>
      <table>
        <tbody>
          {rows.map(([k, v]) => (
            <tr>
              <th scope="row">{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

const App = () => {
  const [key, setKey] = useState(storedKey())
  const [editing, setEditing] = useState<Bot | undefined>()
  const [view, setView] = useState<
    "screen" | "batch" | "lists" | "contracts" | "channels" | "rules" | "monitoring" | "usage"
  >("screen")
  const heading = useRef<HTMLHeadingElement>(null)
  // After sign-in, focus goes to the page's heading, so a screen reader starts from the top of what is new.
  useEffect(() => {
    if (key !== undefined) heading.current?.focus()
  }, [key])
  if (key === undefined) return <SignIn onKey={setKey} />
  return (
    <>
      <h1 class="visually-hidden" tabIndex={-1} ref={heading}>
        Vigil console
      </h1>
      <nav aria-label="Console">
        <strong>Vigil</strong>
        <button aria-pressed={view === "screen"} onClick={() => setView("screen")}>
          Screening
        </button>
        <button aria-pressed={view === "batch"} onClick={() => setView("batch")}>
          Batch
        </button>
        <button aria-pressed={view === "lists"} onClick={() => setView("lists")}>
          Lists
        </button>
        <button aria-pressed={view === "contracts"} onClick={() => setView("contracts")}>
          Contracts
        </button>
        <button aria-pressed={view === "channels"} onClick={() => setView("channels")}>
          Channels
        </button>
        <button
          aria-pressed={view === "rules"}
          onClick={() => {
            setEditing(undefined)
            setView("rules")
          }}
        >
          Rules
        </button>
        <button aria-pressed={view === "monitoring"} onClick={() => setView("monitoring")}>
          Alerts
        </button>
        <button aria-pressed={view === "usage"} onClick={() => setView("usage")}>
          Usage
        </button>
        <button
          class="sign-out"
          onClick={() => {
            signOut()
            setKey(undefined)
          }}
        >
          Sign out
        </button>
      </nav>
      <main>
        {view === "screen" ? (
          <Screen keyValue={key} />
        ) : view === "batch" ? (
          <Batch keyValue={key} />
        ) : view === "lists" ? (
          <Lists keyValue={key} />
        ) : view === "contracts" ? (
          <Contracts keyValue={key} />
        ) : view === "channels" ? (
          <Channels keyValue={key} />
        ) : view === "rules" ? (
          <RulesView key={editing?.id ?? "new"} keyValue={key} editing={editing} onNew={() => setEditing(undefined)} />
        ) : view === "monitoring" ? (
          <Monitoring
            keyValue={key}
            onEdit={(bot) => {
              setEditing(bot)
              setView("rules")
            }}
          />
        ) : (
          <Usage keyValue={key} />
        )}
      </main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
