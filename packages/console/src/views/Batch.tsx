/** Screening many addresses at once, into a sortable table and a CSV. */
import { useState } from "preact/hooks"
import { type BatchItem, batchLimit, clientFor, errorMessage } from "../client"
import { addressesIn, toCsv } from "../csv"
import { Results, actionClass } from "../ui"

type SortKey = "input" | "address" | "action" | "score"

const actionRank: Readonly<Record<string, number>> = {
  BLOCK: 5,
  REVIEW: 4,
  MONITOR: 3,
  ALLOW_CAUTIOUS: 2,
  ALLOW: 1
}

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

export const Batch = ({ keyValue }: { readonly keyValue: string }) => {
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
