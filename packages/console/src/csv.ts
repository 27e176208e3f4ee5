/**
 * Addresses read from pasted text or a CSV file, and batch results written back as CSV with their evidence (by
 * papaparse, which quotes what needs it and neutralises cells a spreadsheet would run as formulas).
 */
import Papa from "papaparse"
import type { BatchItem } from "./client"

/**
 * The addresses in `text`: every cell of every line (comma, semicolon, tab or whitespace separated) that looks
 * like an address (no spaces, 20 to 128 characters, letters and digits with `:`, `_` or `-`), each once, in order.
 * A header row or notes beside the addresses are passed over.
 */
export const addressesIn = (text: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (const cell of text.split(/[\r\n,;\t ]+/)) {
    const value = cell.trim().replace(/^"(.*)"$/, "$1")
    if (/^[0-9A-Za-z:_-]{20,128}$/.test(value)) seen.add(value)
  }
  return [...seen]
}

/**
 * Cells a spreadsheet would take for a formula (OWASP's list: `=`, `+`, `-`, `@`, tab, carriage return first): an
 * entity name from a scraped list such as `=HYPERLINK(…)` would otherwise run when the file is opened. Each is
 * written after a `'`, which shows it as text. papaparse's own default misses such a cell holding a line break.
 */
const formula = /^[=+\-@\t\r]/

/**
 * How a listing ended, as evidence states it: a date only where the source gives one, else between which versions
 * of the list (`, de-listed 2025-03-21` or `, ended between 2025-03-04 and 2025-11-19`); empty while in force.
 */
export const ended = (e: {
  readonly delistedAt?: string
  readonly delistedBetween?: { readonly lastListed: string; readonly firstUnlisted: string }
}): string =>
  e.delistedAt !== undefined
    ? `, de-listed ${e.delistedAt}`
    : e.delistedBetween !== undefined
      ? `, ended between ${e.delistedBetween.lastListed} and ${e.delistedBetween.firstUnlisted}`
      : ""

/** The columns of the CSV, one row per address. */
const csvHeader = [
  "address",
  "action",
  "score",
  "risk_level",
  "confidence",
  "sanctioned",
  "blacklisted",
  "entity",
  "complete",
  "signals",
  "evidence",
  "error"
] as const

/** One address as a CSV row: its answer and each risk signal's list, reference and listing date, or its error. */
const csvRow = (item: BatchItem): ReadonlyArray<string | number | boolean> =>
  "error" in item
    ? [item.address, "", "", "", "", "", "", "", "", "", "", item.error.message]
    : [
        item.address,
        item.recommendation.action,
        item.score,
        item.risk_level,
        item.confidence,
        item.flags.sanctioned,
        item.flags.blacklisted,
        item.entity.name,
        item.metadata.is_complete,
        item.signals.map((s) => s.type).join("; "),
        item.signals
          .map((s) => `${s.evidence.list} [${s.evidence.reference}] listed ${s.evidence.listedAt}${ended(s.evidence)}`)
          .join("; "),
        ""
      ]

/** The whole CSV of `items`. */
export const toCsv = (items: ReadonlyArray<BatchItem>): string =>
  Papa.unparse({ fields: csvHeader, data: items.map(csvRow) }, { newline: "\r\n", escapeFormulae: formula }) + "\r\n"
