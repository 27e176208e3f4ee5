/**
 * `ofac-sdn-xml`: OFAC's SDN Advanced XML, streamed. Only what the digital-currency records need is kept:
 * the reference values (feature and party types), each party's primary name, type and digital-currency
 * addresses, and each sanctions entry's first date and programs. Records are emitted at the end, when
 * the sanctions entries (which follow the parties) have been read.
 */
import { SaxesParser } from "saxes"
import type { ParsedRecord } from "../Intel.ts"
import { ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

interface Party {
  readonly ref: string
  subType?: string
  name?: string
  readonly addresses: Array<{ readonly ticker: string; readonly address: string }>
}

/** A streaming parser of the SDN Advanced XML. */
export const make = (): Parser => {
  const skipped = skipLog()
  const sax = new SaxesParser({ position: true })
  const path: Array<string> = []
  const featureTypes = new Map<string, string>()
  const partySubTypes = new Map<string, string>()
  const partyTypes = new Map<string, string>()
  const parties = new Map<string, Party>()
  const entries = new Map<string, { date?: string; readonly programs: Array<string> }>()
  const issue: { year?: string; month?: string; day?: string } = {}
  let asOf: string | undefined
  let text = ""
  let refId: string | undefined
  let party: Party | undefined
  let feature: string | undefined
  let detailAddress = false
  let primaryAlias = false
  let nameParts: Array<string> | undefined
  let entry: { date?: string; readonly programs: Array<string> } | undefined
  let date: { year?: string; month?: string; day?: string } | undefined
  let measureComment = false

  const pad = (n: string | undefined) => (n ?? "").padStart(2, "0")

  sax.on("opentag", (node) => {
    const a = node.attributes as Record<string, string>
    path.push(node.name)
    text = ""
    switch (node.name) {
      case "FeatureType":
      case "PartySubType":
      case "PartyType":
        refId = a.ID
        if (node.name === "PartySubType" && a.ID !== undefined && a.PartyTypeID !== undefined)
          partySubTypes.set(a.ID, a.PartyTypeID)
        break
      case "DistinctParty":
        party = { ref: a.FixedRef ?? "?", addresses: [] }
        break
      case "Profile":
        if (party && a.PartySubTypeID !== undefined) party.subType = a.PartySubTypeID
        break
      case "Alias":
        primaryAlias = party !== undefined && party.name === undefined && a.Primary === "true"
        if (primaryAlias) nameParts = []
        break
      case "Feature": {
        const name = a.FeatureTypeID === undefined ? undefined : featureTypes.get(a.FeatureTypeID)
        feature = name?.startsWith("Digital Currency Address - ")
          ? name.slice("Digital Currency Address - ".length)
          : undefined
        break
      }
      case "VersionDetail":
        detailAddress = feature !== undefined && a.DetailTypeID === "1432"
        break
      case "SanctionsEntry":
        entry = { programs: [] }
        if (a.ProfileID !== undefined) entries.set(a.ProfileID, entry)
        break
      case "Date":
        if (entry !== undefined && path.at(-2) === "EntryEvent") date = {}
        break
      case "Comment":
        measureComment = entry !== undefined && path.at(-2) === "SanctionsMeasure"
        break
    }
  })
  sax.on("text", (t) => {
    text += t
  })
  sax.on("closetag", (node) => {
    const value = text.trim()
    const parent = path.at(-2)
    switch (node.name) {
      case "Year":
      case "Month":
      case "Day": {
        const key = node.name === "Year" ? "year" : node.name === "Month" ? "month" : "day"
        if (parent === "DateOfIssue") issue[key] = value
        else if (date !== undefined && parent === "Date") date[key] = value
        break
      }
      case "DateOfIssue":
        if (issue.year !== undefined) asOf = `${issue.year}-${pad(issue.month)}-${pad(issue.day)}`
        break
      case "FeatureType":
        if (refId !== undefined) featureTypes.set(refId, value)
        break
      case "PartyType":
        if (refId !== undefined) partyTypes.set(refId, value)
        break
      case "NamePartValue":
        if (primaryAlias && nameParts !== undefined && value !== "") nameParts.push(value)
        break
      case "Alias":
        if (primaryAlias && party !== undefined && nameParts !== undefined && nameParts.length > 0)
          party.name = nameParts.join(" ")
        primaryAlias = false
        nameParts = undefined
        break
      case "VersionDetail":
        if (detailAddress && party !== undefined && feature !== undefined)
          party.addresses.push({ ticker: feature, address: value })
        detailAddress = false
        break
      case "Feature":
        feature = undefined
        break
      case "DistinctParty":
        if (party !== undefined && party.addresses.length > 0) parties.set(party.ref, party)
        party = undefined
        break
      case "Date":
        if (entry !== undefined && date?.year !== undefined) {
          const d = `${date.year}-${pad(date.month)}-${pad(date.day)}`
          if (entry.date === undefined || d < entry.date) entry.date = d
        }
        date = undefined
        break
      case "Comment":
        if (measureComment && entry !== undefined && value !== "") entry.programs.push(value)
        measureComment = false
        break
      case "SanctionsEntry":
        entry = undefined
        break
    }
    path.pop()
    text = ""
  })

  const feed = (chunk: string) => {
    try {
      sax.write(chunk)
    } catch (cause) {
      throw new ParseFailure(`XML line ${sax.line}`, (cause as Error).message)
    }
  }

  return {
    write: (chunk) => {
      feed(chunk)
      return []
    },
    end: () => {
      try {
        sax.close()
      } catch (cause) {
        throw new ParseFailure(`XML line ${sax.line}`, (cause as Error).message)
      }
      if (asOf === undefined) throw new ParseFailure("XML", "no DateOfIssue: not an SDN Advanced XML file")
      const out: Array<ParsedRecord> = []
      for (const p of parties.values()) {
        const e = entries.get(p.ref)
        const kind = p.subType === undefined ? undefined : partyTypes.get(partySubTypes.get(p.subType) ?? "")
        const programs = e?.programs ?? []
        // Every address of a screened format is screened on the network its format says, whatever ticker OFAC
        // filed it under (USDT on Omni is a Bitcoin address; the list has slips); the reference keeps the ticker.
        for (const { ticker, address } of p.addresses) {
          const r = toRecord(address, "sanctions", `SDN ${p.ref} ${ticker}`, {
            jurisdiction: "US",
            ...(p.name === undefined ? {} : { entityName: p.name }),
            ...(kind === undefined ? {} : { entityType: kind.toLowerCase() }),
            label: programs.length === 0 ? "OFAC SDN" : `OFAC SDN (${programs.join(", ")})`,
            ...(e?.date === undefined ? {} : { listedAt: e.date })
          })
          if (typeof r === "string") skipped.add(`SDN ${p.ref} ${ticker}: ${r}`)
          else out.push(r)
        }
      }
      return out
    },
    asOf: () => asOf,
    skipped: skipped.get
  }
}
