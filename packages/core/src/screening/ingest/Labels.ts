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
import Papa from "papaparse"
import type { Category, ParsedRecord } from "../Intel.ts"
import { ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

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
      if (Array.isArray(value))
        value.forEach((a, i) =>
          add(typeof a === "string" ? a : undefined, "phishing", `item ${i}`, { label: "ScamSniffer phishing" })
        )
      else if (typeof value === "object" && value !== null) {
        for (const [domain, addresses] of Object.entries(value)) {
          if (Array.isArray(addresses))
            addresses.forEach((a) =>
              add(typeof a === "string" ? a : undefined, "phishing", domain, { label: `Phishing: ${domain}` })
            )
        }
      } else throw new ParseFailure("JSON", "expected an array of addresses or an object of domain → addresses")
    },
    "mew-darklist": () => {
      const value = json()
      if (!Array.isArray(value)) throw new ParseFailure("JSON", "expected an array of {address, comment, date}")
      value.forEach((item: Row, i) => {
        const date = /^\d{4}-\d{2}-\d{2}$/.test(item?.date ?? "") ? { listedAt: item.date! } : {}
        add(item?.address, "scam", `item ${i}`, { label: item?.comment || "MEW darklist", ...date })
      })
    },
    explorer: () => {
      const value = json()
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw new ParseFailure("JSON", "expected an object of address → {name, labels}")
      for (const [address, info] of Object.entries(
        value as Record<string, { name?: string; labels?: Array<string> }>
      )) {
        const labels = Array.isArray(info?.labels) ? info.labels : []
        const categories = labels.map(categoryOfLabel).filter((c): c is Category => c !== undefined)
        const name = typeof info?.name === "string" && info.name !== "" ? { entityName: info.name } : {}
        if (categories.length === 0)
          skipped.add(`${address}: ${labels.join(", ") || "no label"} is not a screened category`)
        for (const category of new Set(categories))
          add(address, category, address, { label: labels.join(", "), ...name })
      }
    },
    "explorer-accounts": () => {
      if (options.category === undefined)
        throw new ParseFailure("JSON", "explorer-accounts needs --category (the label folder's meaning)")
      const value = json()
      if (!Array.isArray(value)) throw new ParseFailure("JSON", "expected an array of {address, nameTag}")
      value.forEach((item: Row, i) =>
        add(
          item?.address,
          options.category,
          `item ${i}`,
          item?.nameTag ? { label: item.nameTag, entityName: item.nameTag } : {}
        )
      )
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
