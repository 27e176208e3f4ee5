/**
 * `usdt-events`: Tether's AddedBlackList / RemovedBlackList event export (CSV with a header naming
 * `event_name`, `block_number`, `log_index`, `timestamp`, `txhash` and `_user`) → freeze history.
 * Events are replayed in block and log order; each freeze becomes an interval, closed by a later removal.
 */
import Papa from "papaparse"
import type { ParsedRecord } from "../Intel.ts"
import { lineSplitter, ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

interface Event {
  readonly kind: "add" | "remove"
  readonly block: number
  readonly logIndex: number
  readonly date: string
  readonly tx: string
  readonly user: string
  readonly line: number
}

const required = ["event_name", "block_number", "log_index", "timestamp", "txhash", "_user"] as const

/**
 * A parser of the event export; `label` names the token (e.g. `USDT`). `lastBlock` is the block of the newest freeze
 * or end read (the export's reach, as far as its rows show).
 */
export const make = (options: {
  readonly label: string
}): Parser & { readonly lastBlock: () => number | undefined } => {
  const skipped = skipLog()
  const lines = lineSplitter()
  const events: Array<Event> = []
  type Columns = Record<(typeof required)[number], number>
  let columns: Columns | undefined
  let latest: string | undefined

  const onLine = (line: string, lineNo: number) => {
    if (line.trim() === "" || line === "\u001a") return
    // One record per line in this export; papaparse reads its quoting (a quoted cell may hold a comma).
    const cells = Papa.parse<Array<string>>(line, {}).data[0] ?? []
    if (columns === undefined) {
      const missing = required.filter((name) => !cells.includes(name))
      if (missing.length > 0) throw new ParseFailure("line 1", `header lacks column(s) ${missing.join(", ")}`)
      columns = Object.fromEntries(required.map((name) => [name, cells.indexOf(name)])) as Columns
      return
    }
    const cell = (name: (typeof required)[number]) => cells[columns![name]] ?? ""
    const name = cell("event_name")
    if (name !== "AddedBlackList" && name !== "RemovedBlackList") return
    const block = Number(cell("block_number"))
    const logIndex = Number(cell("log_index"))
    const date = cell("timestamp").slice(0, 10)
    if (!Number.isInteger(block) || !Number.isInteger(logIndex) || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      skipped.add(`line ${lineNo}: unreadable block, log index or timestamp`)
      return
    }
    if (latest === undefined || date > latest) latest = date
    events.push({
      kind: name === "AddedBlackList" ? "add" : "remove",
      block,
      logIndex,
      date,
      tx: cell("txhash"),
      user: cell("_user"),
      line: lineNo
    })
  }

  return {
    write: (chunk) => {
      lines.push(chunk, onLine)
      return []
    },
    end: () => {
      lines.end(onLine)
      if (columns === undefined) throw new ParseFailure("line 1", "no header: expected a CSV event export")
      events.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)
      const open = new Map<string, { readonly record: ParsedRecord }>()
      const out: Array<ParsedRecord> = []
      for (const e of events) {
        const r = toRecord(e.user, "stablecoin_blacklist", e.tx, { label: options.label, listedAt: e.date }, ["evm"])
        if (typeof r === "string") {
          skipped.add(`line ${e.line}: ${r}`)
          continue
        }
        const current = open.get(r.address)
        if (e.kind === "add") {
          if (current === undefined) open.set(r.address, { record: r })
        } else if (current !== undefined) {
          out.push({ ...current.record, delistedAt: e.date })
          open.delete(r.address)
        } else {
          skipped.add(`line ${e.line}: RemovedBlackList for ${r.address}, which was not blacklisted`)
        }
      }
      for (const { record } of open.values()) out.push(record)
      return out
    },
    asOf: () => latest,
    lastBlock: () => (events.length === 0 ? undefined : Math.max(...events.map((e) => e.block))),
    skipped: skipped.get
  }
}
