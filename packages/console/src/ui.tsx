/** Pieces every view of the console uses: the results table, counts and dates as an analyst reads them. */
import { type ComponentChildren } from "preact"

/**
 * A table of results, its column headings and its rows: on a phone it scrolls sideways, in a labelled region the
 * keyboard can reach and scroll.
 */
export const Results = ({
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

export const actionClass = (action: string) => `action action-${action.toLowerCase()}`

/** A count with thousands separators, as the reader's locale writes them. */
export const count = (n: number): string => n.toLocaleString()

/** Days from an ISO date to today (UTC). */
export const daysSince = (day: string): number =>
  Math.round((Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse(day)) / 86_400_000)

/** An instant in the reader's local time, the UTC instant on hover. */
export const When = ({ at }: { readonly at: string }) => (
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
