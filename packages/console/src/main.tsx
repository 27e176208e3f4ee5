/** The Vigil console: sign in with an API key, screen addresses (at any date), and see the key's usage. */
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { clientFor, errorMessage, type IntelResult, type Signal, signIn, signOut, storedKey } from "./client"
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
        {e.delistedAt === undefined ? "" : ` to ${e.delistedAt}`}
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
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
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
          ["Requests per second", String(s.client.qps)],
          ["Today", `${s.usage.dailyUsed} used, ${s.usage.dailyRemaining} left of ${s.client.dailyLimit}`],
          ["This month", `${s.usage.monthlyUsed} used, ${s.usage.monthlyRemaining} left of ${s.client.monthlyLimit}`]
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
  const [view, setView] = useState<"screen" | "usage">("screen")
  if (key === undefined) return <SignIn onKey={setKey} />
  return (
    <>
      <nav aria-label="Console">
        <strong>Vigil</strong>
        <button aria-pressed={view === "screen"} onClick={() => setView("screen")}>
          Screening
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
      <main>{view === "screen" ? <Screen keyValue={key} /> : <Usage keyValue={key} />}</main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
