/**
 * `ofac-sdn-csv`: OFAC's legacy `sdn.csv` (no header; ent_num, SDN_Name, SDN_Type, Program, ..., Remarks;
 * `-0-` for empty). Addresses live in Remarks as `Digital Currency Address - <TICKER> <address>`. The
 * legacy file cuts long remarks short, so it lists fewer addresses than the Advanced XML; prefer that one.
 * The file is read whole (about 4 MB) and states no issue date: give one with --as-of.
 */
import Papa from "papaparse"
import type { ParsedRecord } from "../Intel.ts"
import { ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

const ADDRESS = /Digital Currency Address - ([A-Z0-9]+)\s+([^\s;,]+)/g
const empty = (v: string | undefined) => (v === undefined || v.trim() === "-0-" ? undefined : v.trim())

/** A parser of the legacy SDN CSV. */
export const make = (): Parser => {
  const skipped = skipLog()
  let text = ""
  return {
    write: (chunk) => {
      text += chunk
      return []
    },
    end: () => {
      const trimmed = text.trimEnd()
      const body = trimmed.endsWith("\u001a") ? trimmed.slice(0, -1) : trimmed
      const rows = Papa.parse<Array<string>>(body, { skipEmptyLines: "greedy" }).data
      if (rows.length > 0 && (rows[0]!.length < 12 || !/^\d+$/.test(rows[0]![0] ?? ""))) {
        throw new ParseFailure("line 1", "expected OFAC's legacy sdn.csv: 12 columns starting with ent_num")
      }
      const out: Array<ParsedRecord> = []
      for (const row of rows) {
        const [entNum, name, type, program] = row
        const remarks = row[11] ?? ""
        for (const [, ticker = "", found = ""] of remarks.matchAll(ADDRESS)) {
          const address = found.replace(/\.$/, "")
          const kind = empty(type)
          const programs = empty(program)
          const r = toRecord(address, "sanctions", `SDN ${entNum} ${ticker}`, {
            jurisdiction: "US",
            ...(empty(name) === undefined ? {} : { entityName: empty(name)! }),
            entityType: kind === undefined ? "entity" : kind.toLowerCase(),
            label:
              programs === undefined
                ? "OFAC SDN"
                : `OFAC SDN (${programs.replace(/\]\s*\[/g, ", ").replace(/[[\]]/g, "")})`
          })
          if (typeof r === "string") skipped.add(`SDN ${entNum} ${ticker}: ${r}`)
          else out.push(r)
        }
      }
      return out
    },
    asOf: () => undefined,
    skipped: skipped.get
  }
}
