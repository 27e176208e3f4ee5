/** `address-list`: one address per line (blank lines and `#` comments ignored) or a JSON array of strings. */
import { Schema } from "effect"
import type { Category, ParsedRecord } from "../Intel.ts"
import { decoder, lineSplitter, ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

const decodeItems = decoder(Schema.Array(Schema.Unknown))
const decodeAddress = decoder(Schema.String)

/** Options of an address list: every address in it gets this category; `label` names the list to people. */
export interface Options {
  readonly list: string
  readonly category: Category
  readonly label?: string
}

/** A parser of a plain or JSON address list. A JSON array is read whole (such lists are small). */
export const make = (options: Options): Parser => {
  const skipped = skipLog()
  const lines = lineSplitter()
  let json: string | undefined
  let sawContent = false
  const extra = options.label === undefined ? {} : { label: options.label }
  const take = (address: string, where: string, out: Array<ParsedRecord>) => {
    const r = toRecord(address.trim(), options.category, options.list, extra)
    if (typeof r === "string") skipped.add(`${where}: ${r}`)
    else out.push(r)
  }
  const onLine = (out: Array<ParsedRecord>) => (line: string, lineNo: number) => {
    const text = line.trim()
    if (text === "" || text.startsWith("#")) return
    take(text, `line ${lineNo}`, out)
  }
  return {
    write: (chunk) => {
      const out: Array<ParsedRecord> = []
      if (json !== undefined) {
        json += chunk
        return out
      }
      if (!sawContent) {
        const start = chunk.trimStart()
        sawContent = start.length > 0
        if (start.startsWith("[")) {
          json = chunk
          return out
        }
      }
      lines.push(chunk, onLine(out))
      return out
    },
    end: () => {
      const out: Array<ParsedRecord> = []
      if (json === undefined) {
        lines.end(onLine(out))
        return out
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(json)
      } catch (cause) {
        throw new ParseFailure("JSON", `not valid JSON: ${(cause as Error).message}`)
      }
      const items = decodeItems(parsed)
      if (!items.ok) throw new ParseFailure("JSON", "expected an array of address strings")
      items.value.forEach((item, i) => {
        const address = decodeAddress(item)
        if (address.ok) take(address.value, `item ${i}`, out)
        else skipped.add(`item ${i}: ${address.issue}`)
      })
      return out
    },
    asOf: () => undefined,
    skipped: skipped.get
  }
}
