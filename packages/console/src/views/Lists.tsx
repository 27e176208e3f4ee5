/** The stored lists: official ones first, with their versions, dates, age and state. */
import { useState } from "preact/hooks"
import { clientFor } from "../client"
import { useRead } from "../fetching"
import { Results, count, daysSince } from "../ui"

export const Lists = ({ keyValue }: { readonly keyValue: string }) => {
  const { value, problem } = useRead(() => clientFor(keyValue).lists(), [keyValue])
  const lists = value?.lists
  const [filter, setFilter] = useState("")
  if (problem !== undefined && lists === undefined)
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
