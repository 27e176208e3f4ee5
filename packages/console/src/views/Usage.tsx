/** The key's quotas and what is left. */
import { clientFor } from "../client"
import { useRead } from "../fetching"
import { count } from "../ui"

export const Usage = ({ keyValue }: { readonly keyValue: string }) => {
  const { value: s, problem } = useRead(() => clientFor(keyValue).status(), [keyValue])
  const status = s?.status ?? (problem === undefined ? undefined : "unavailable")
  const rows: ReadonlyArray<[string, string]> =
    s === undefined
      ? []
      : [
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
        ]
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
