/**
 * `labels`: common public label sets, each read whole (the largest public one is about 10 MB):
 * - `forta-malicious` CSV `banned_address,wallet_tag,...` (Etherscan exploit, heist and phish-hack labels),
 * - `forta-phishing` CSV `address,etherscan_tag,etherscan_labels,...`,
 * - `forta-contracts` CSV `contract_address,contract_tag,...` (malicious smart contracts),
 * - `scamsniffer` JSON: an array of addresses, or `{ domain: [addresses] }`,
 * - `mew-darklist` JSON: `[{ address, comment, date }]`,
 * - `explorer` JSON: `{ address: { name, labels: [...] } }` (explorer label dumps, categories from labels),
 * - `explorer-accounts` JSON: `[{ address, nameTag }]` (one label folder; needs a category).
 * The format is detected from the content unless given.
 */
import { Schema } from "effect"
import Papa from "papaparse"
import type { Category, ParsedRecord } from "../Intel.ts"
import { decoder, ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

/** The formats this parser reads. */
export const formats = [
  "forta-malicious",
  "forta-phishing",
  "forta-contracts",
  "scamsniffer",
  "mew-darklist",
  "explorer",
  "explorer-accounts"
] as const
export type Format = (typeof formats)[number]

/** Options: a forced format, a category for `explorer-accounts`, and the list's name (the records' reference). */
export interface Options {
  readonly list: string
  readonly format?: Format
  readonly category?: Category
}

/** The category an explorer or Forta label speaks of, or undefined when it names nothing screened. */
export const categoryOfLabel = (label: string): Category | undefined => {
  const l = label.toLowerCase()
  if (/ofac|sanction/.test(l)) return "sanctions"
  if (/exploit/.test(l)) return "exploit"
  if (/heist/.test(l)) return "heist"
  if (/phish/.test(l)) return "phishing"
  if (/\bhack/.test(l)) return "hack"
  if (/ransom/.test(l)) return "ransomware"
  if (/^blocked$/.test(l)) return "stablecoin_blacklist"
  if (/tornado|mixer|mixing|coinjoin/.test(l)) return "mixer"
  if (/scam|fake|spam|ponzi|fraud/.test(l)) return "scam"
  if (/gambl|casino/.test(l)) return "gambling"
  if (/exchange|cex/.test(l)) return "exchange"
  if (/fund|market-maker|market maker/.test(l)) return "smart_money"
  if (/dex|defi|bridge|wallet|lending|oracle|protocol/.test(l)) return "service"
  return undefined
}

const detect = (text: string): Format => {
  const start = text.trimStart()
  const firstLine = start.slice(0, start.indexOf("\n") === -1 ? start.length : start.indexOf("\n"))
  if (firstLine.startsWith("banned_address,")) return "forta-malicious"
  if (firstLine.startsWith("contract_address,")) return "forta-contracts"
  if (firstLine.startsWith("address,etherscan_tag")) return "forta-phishing"
  if (start.startsWith("{")) {
    const value = /^\{\s*"[^"]*"\s*:\s*(.)/.exec(start)?.[1]
    return value === "[" ? "scamsniffer" : "explorer"
  }
  if (start.startsWith("[")) {
    const first = /^\[\s*(.)/.exec(start)?.[1]
    if (first === '"') return "scamsniffer"
    return /"nameTag"/.test(start.slice(0, 2_000)) ? "explorer-accounts" : "mew-darklist"
  }
  throw new ParseFailure("line 1", `unknown label format; give --format (${formats.join(", ")})`)
}

type Row = Record<string, string | undefined>

// The JSON formats, as Schemas: a file whose top level does not fit is refused; an entry that does not fit is
// skipped with the decoder's reason.
const Items = Schema.Array(Schema.Unknown)
const ByDomain = Schema.Record(Schema.String, Items)
const anArray = decoder(Items)
const ExplorerFile = Schema.Record(Schema.String, Schema.Unknown)
const anAddress = decoder(Schema.String)
const darklistEntry = decoder(
  Schema.Struct({
    address: Schema.String,
    comment: Schema.optionalKey(Schema.String),
    date: Schema.optionalKey(Schema.String)
  })
)
const explorerEntry = decoder(
  Schema.Struct({ name: Schema.optionalKey(Schema.String), labels: Schema.optionalKey(Schema.Array(Schema.String)) })
)
const accountEntry = decoder(Schema.Struct({ address: Schema.String, nameTag: Schema.optionalKey(Schema.String) }))

/** The file's top level decoded with `schema`, or a ParseFailure saying what was expected. */
const whole = <S extends Schema.Decoder<unknown>>(schema: S, value: unknown, expected: string): S["Type"] => {
  const decoded = decoder(schema)(value)
  if (!decoded.ok) throw new ParseFailure("JSON", `expected ${expected}`)
  return decoded.value
}

/** A parser of one label file. */
export const make = (options: Options): Parser => {
  const skipped = skipLog()
  let text = ""
  const out: Array<ParsedRecord> = []
  const add = (
    address: string | undefined,
    category: Category | undefined,
    where: string,
    extra: Omit<ParsedRecord, "address" | "family" | "category" | "reference"> = {}
  ) => {
    if (address === undefined || address.trim() === "") return skipped.add(`${where}: no address`)
    if (category === undefined) return skipped.add(`${where}: ${extra.label ?? "label"} is not a screened category`)
    const r = toRecord(address.trim(), category, options.list, extra)
    if (typeof r === "string") skipped.add(`${where}: ${r}`)
    else out.push(r)
  }
  const json = (): unknown => {
    try {
      return JSON.parse(text)
    } catch (cause) {
      throw new ParseFailure("JSON", `not valid JSON: ${(cause as Error).message}`)
    }
  }
  const csv = (): Array<Row> => {
    const result = Papa.parse<Row>(text, { header: true, skipEmptyLines: "greedy" })
    const fatal = result.errors.find((e) => e.message.includes("Quote"))
    if (fatal) throw new ParseFailure(`row ${(fatal.row ?? 0) + 2}`, fatal.message)
    return result.data
  }
  const read: { readonly [F in Format]: () => void } = {
    "forta-malicious": () =>
      csv().forEach((r, i) =>
        add(r.banned_address, categoryOfLabel(r.wallet_tag ?? "") ?? "scam", `row ${i + 2}`, {
          label: r.wallet_tag ?? "Etherscan malicious"
        })
      ),
    "forta-phishing": () =>
      csv().forEach((r, i) => add(r.address, "phishing", `row ${i + 2}`, { label: r.etherscan_tag ?? "Phishing" })),
    "forta-contracts": () =>
      csv().forEach((r, i) =>
        add(r.contract_address, "exploit", `row ${i + 2}`, { label: r.contract_tag || "Malicious contract" })
      ),
    scamsniffer: () => {
      const value = json()
      const each = (items: ReadonlyArray<unknown>, where: (i: number) => string, label: string) =>
        items.forEach((item, i) => {
          const a = anAddress(item)
          if (a.ok) add(a.value, "phishing", where(i), { label })
          else skipped.add(`${where(i)}: ${a.issue}`)
        })
      const list = anArray(value)
      if (list.ok) return each(list.value, (i) => `item ${i}`, "ScamSniffer phishing")
      const expected = "an array of addresses or an object of domain → addresses"
      for (const [domain, addresses] of Object.entries(whole(ByDomain, value, expected))) {
        each(addresses, (i) => `${domain} item ${i}`, `Phishing: ${domain}`)
      }
    },
    "mew-darklist": () =>
      whole(Items, json(), "an array of {address, comment, date}").forEach((raw, i) => {
        const item = darklistEntry(raw)
        if (!item.ok) return skipped.add(`item ${i}: ${item.issue}`)
        const date = /^\d{4}-\d{2}-\d{2}$/.test(item.value.date ?? "") ? { listedAt: item.value.date! } : {}
        add(item.value.address, "scam", `item ${i}`, { label: item.value.comment || "MEW darklist", ...date })
      }),
    explorer: () => {
      const value = whole(ExplorerFile, json(), "an object of address → {name, labels}")
      for (const [address, raw] of Object.entries(value)) {
        const info = explorerEntry(raw)
        if (!info.ok) {
          skipped.add(`${address}: ${info.issue}`)
          continue
        }
        const labels = info.value.labels ?? []
        const categories = labels.map(categoryOfLabel).filter((c): c is Category => c !== undefined)
        const name = info.value.name !== undefined && info.value.name !== "" ? { entityName: info.value.name } : {}
        if (categories.length === 0)
          skipped.add(`${address}: ${labels.join(", ") || "no label"} is not a screened category`)
        for (const category of new Set(categories))
          add(address, category, address, { label: labels.join(", "), ...name })
      }
    },
    "explorer-accounts": () => {
      if (options.category === undefined)
        throw new ParseFailure("JSON", "explorer-accounts needs --category (the label folder's meaning)")
      whole(Items, json(), "an array of {address, nameTag}").forEach((raw, i) => {
        const item = accountEntry(raw)
        if (!item.ok) return skipped.add(`item ${i}: ${item.issue}`)
        const tag = item.value.nameTag
        add(item.value.address, options.category, `item ${i}`, tag ? { label: tag, entityName: tag } : {})
      })
    }
  }
  return {
    write: (chunk) => {
      text += chunk
      return []
    },
    end: () => {
      read[options.format ?? detect(text)]()
      return out
    },
    asOf: () => undefined,
    skipped: skipped.get
  }
}
