/**
 * `graphsense`: a GraphSense TagPack (YAML). Pack-level fields (currency, category, abuse, label, lastmod,
 * title) are defaults each tag may override. A pack is one YAML document and is read whole (the largest
 * public pack is about 4 MB). `abuse` decides the risk category; without it, `category` names a service.
 */
import { Schema } from "effect"
import { parse } from "yaml"
import type { Chain } from "../../kernel/index.ts"
import type { Category, ParsedRecord } from "../Intel.ts"
import { decoder, ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

/** The families an address tagged with each GraphSense currency may have; others are not screened. */
export const currencyFamilies: Readonly<Record<string, ReadonlyArray<Chain.Family>>> = {
  BTC: ["bitcoin"],
  BCH: ["bitcoin"],
  ETH: ["evm"],
  BEP20: ["evm"],
  USDT: ["evm", "tron"],
  USDC: ["evm", "tron", "solana"],
  TRX: ["tron"],
  SOL: ["solana"],
  DOGE: ["dogecoin"],
  TON: ["ton"]
}

const abuseCategory: Readonly<Record<string, Category>> = {
  sanction: "sanctions",
  ransomware: "ransomware",
  phishing: "phishing",
  scam: "scam",
  sextortion: "scam",
  ponzi_scheme: "fraud",
  pyramid_scheme: "fraud",
  investment_fraud: "fraud",
  service_hack: "hack",
  terrorism: "threat_actor"
}

const serviceCategory = (category: string, label: string): Category | undefined => {
  if (category === "exchange") return "exchange"
  if (category === "mixing_service" || category === "coinjoin") return "mixer"
  if (category === "gambling") return "gambling"
  if (category === "market") return "darknet"
  if (category === "black_list") return /usdt|usdc|tether/i.test(label) ? "stablecoin_blacklist" : "scam"
  if (["service", "wallet_service", "miner", "organization"].includes(category) || category.startsWith("defi")) {
    return "service"
  }
  return undefined
}

type Fields = Readonly<Record<string, unknown>>

// A pack is an object with a list of tags; each tag is an object whose fields override the pack's. Values are read
// leniently below (YAML gives numbers and dates where TagPacks mean text).
const decodePack = decoder(
  Schema.StructWithRest(Schema.Struct({ tags: Schema.Array(Schema.Unknown) }), [
    Schema.Record(Schema.String, Schema.Unknown)
  ])
)
const decodeTag = decoder(Schema.Record(Schema.String, Schema.Unknown))
const text = (v: unknown): string | undefined =>
  typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : undefined
const isoDate = (v: unknown): string | undefined => {
  if (v instanceof Date) return v.toISOString().slice(0, 10)
  const s = text(v)
  return s !== undefined && /^\d{4}-\d{2}-\d{2}/.test(s) ? s.slice(0, 10) : undefined
}

/** A parser of one TagPack. */
export const make = (): Parser => {
  const skipped = skipLog()
  let source = ""
  let asOf: string | undefined
  return {
    write: (chunk) => {
      source += chunk
      return []
    },
    end: () => {
      let doc: unknown
      try {
        doc = parse(source)
      } catch (cause) {
        throw new ParseFailure("YAML", (cause as Error).message.split("\n")[0] ?? "unreadable")
      }
      const decoded = decodePack(doc)
      if (!decoded.ok) throw new ParseFailure("YAML", `not a TagPack: ${decoded.issue}`)
      const pack: Fields = decoded.value
      asOf = isoDate(pack.lastmod)
      const title = text(pack.title) ?? "GraphSense TagPack"
      const out: Array<ParsedRecord> = []
      decoded.value.tags.forEach((raw, i) => {
        const fields = decodeTag(raw)
        if (!fields.ok) return skipped.add(`tag ${i}: ${fields.issue}`)
        const tag: Fields = { ...pack, ...fields.value }
        const address = text(tag.address)
        const label = text(tag.label) ?? title
        const currency = (text(tag.currency) ?? "").toUpperCase()
        if (address === undefined) return skipped.add(`tag ${i}: no address`)
        const families = currencyFamilies[currency]
        if (families === undefined)
          return skipped.add(`tag ${i}: ${currency || "no"} currency is not a screened network`)
        const abuse = text(tag.abuse)
        const category = abuse !== undefined ? abuseCategory[abuse] : serviceCategory(text(tag.category) ?? "", label)
        if (category === undefined)
          return skipped.add(`tag ${i}: ${abuse ?? text(tag.category) ?? "no"} category is not screened`)
        const named = ["exchange", "service", "sanctions", "mixer", "darknet", "gambling"].includes(category)
        const cites = text(tag.source)
        const r = toRecord(
          address,
          category,
          title,
          { label, ...(named ? { entityName: label } : {}), ...(cites === undefined || cites === "" ? {} : { cites }) },
          families
        )
        if (typeof r === "string") skipped.add(`tag ${i}: ${r}`)
        else out.push(r)
      })
      return out
    },
    asOf: () => asOf,
    skipped: skipped.get
  }
}
