/** Screening one address at any date: the answer as a card, and the address's listing history. */
import { useState } from "preact/hooks"
import { Chain } from "@vigil/core"
import { clientFor, errorMessage, type IntelResult, type Signal } from "../client"
import { ended } from "../csv"
import { Results, actionClass } from "../ui"

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

export const Screen = ({ keyValue }: { readonly keyValue: string }) => {
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
