/**
 * `ofac-sdn-xml`: OFAC's SDN Advanced XML, streamed. Only what the digital-currency records need is kept:
 * the reference values (feature and party types), each party's primary name, type and digital-currency
 * addresses, and each sanctions entry's first date and programs. Records are emitted at the end, when
 * the sanctions entries (which follow the parties) have been read. The locations, identity documents, profile
 * relationships, parties with no digital-currency feature and the sanctions entries of profiles no party kept are
 * passed over untokenised (`ElementSkipper`). An entry passed over is of no party the file has kept so far; should
 * a party of its profile be kept after it (against the schema's order: parties, then entries), the file is refused.
 */
import { SaxesParser } from "saxes"
import type { ParsedRecord } from "../Intel.ts"
import * as ElementSkipper from "./ElementSkipper.ts"
import { ParseFailure, type Parser, skipLog, toRecord } from "./Parser.ts"

/** Each container whose elements may be passed over, with the element. */
const units = new Map([
  ["Locations", "Location"],
  ["IDRegDocuments", "IDRegDocument"],
  ["ProfileRelationships", "ProfileRelationship"],
  ["DistinctParties", "DistinctParty"],
  ["SanctionsEntries", "SanctionsEntry"]
])
/** Elements that change what the parser keeps wherever they stand: a unit holding one is read. */
const kept = /<(DateOfIssue|FeatureType|PartySubType|PartyType|DistinctParty|SanctionsEntry)(?=[\s/>])/g
/** A sanctions entry's start tag, and the profile it is of. */
const entryTag = /^<SanctionsEntry(?:\s+[^\s=<>"']+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*\/?>/
const profileId = /\sProfileID\s*=\s*(?:"([^"]*)"|'([^']*)')/
/** A feature's type, as written in the start tag. */
const featureType = /FeatureTypeID\s*=\s*(?:"([^"]*)"|'([^']*)')/g
const digitalPrefix = "Digital Currency Address - "
/** An attribute value as written may read otherwise once parsed: an entity, or a tab or line break (a space then). */
const unlike = (raw: string) => /[&\t\n\r]/.test(raw)

/**
 * A string of its own: a piece of the input as saxes hands it over may point into the whole chunk it was cut from,
 * and the few values kept (names, addresses) would keep every such chunk alive until the end.
 */
const own = (s: string) => (s.length < 13 ? s : (" " + s).slice(1))

interface Party {
  readonly ref: string
  subType?: string
  name?: string
  readonly addresses: Array<{ readonly ticker: string; readonly address: string }>
}

/**
 * A streaming parser of the SDN Advanced XML. `passOver: false` tokenises every element (what passing over is held
 * to); `gatherChars` is how much text the element skipper gathers before it looks.
 */
export const make = (options: { readonly passOver?: boolean; readonly gatherChars?: number } = {}): Parser => {
  const skipped = skipLog()
  const sax = new SaxesParser({ position: true })
  const path: Array<string> = []
  const featureTypes = new Map<string, string>()
  /** The feature types of digital-currency addresses. */
  const digitalTypes = new Set<string>()
  const partySubTypes = new Map<string, string>()
  const partyTypes = new Map<string, string>()
  const parties = new Map<string, Party>()
  const entries = new Map<string, { date?: string; readonly programs: Array<string> }>()
  /** The profiles whose last sanctions entry so far was passed over: no party kept had their reference then. */
  const entriesPassed = new Set<string>()
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
        feature = name?.startsWith(digitalPrefix) ? name.slice(digitalPrefix.length) : undefined
        break
      }
      case "VersionDetail":
        detailAddress = feature !== undefined && a.DetailTypeID === "1432"
        break
      case "SanctionsEntry":
        entry = { programs: [] }
        if (a.ProfileID !== undefined) {
          entries.set(a.ProfileID, entry)
          entriesPassed.delete(a.ProfileID)
        }
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
    const value = own(text.trim())
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
        if (refId !== undefined) {
          featureTypes.set(refId, value)
          if (value.startsWith(digitalPrefix)) digitalTypes.add(refId)
          else digitalTypes.delete(refId)
        }
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

  /** Whether reading this whole element would change nothing the parser keeps. */
  const skippable = (unit: string, text: string) => {
    if (options.passOver === false || party !== undefined || entry !== undefined) return false
    kept.lastIndex = 1
    if (kept.test(text)) return false
    if (unit === "SanctionsEntry") {
      // An entry of a profile no party kept so far; should one come later, `end` refuses the file.
      const tag = entryTag.exec(text)
      if (tag === null) return false
      const id = profileId.exec(tag[0])
      if (id === null) return true
      const ref = id[1] ?? id[2] ?? ""
      if (unlike(ref) || parties.has(ref)) return false
      entriesPassed.add(ref)
      return true
    }
    if (unit !== "DistinctParty") return true
    featureType.lastIndex = 0
    for (let m = featureType.exec(text); m !== null; m = featureType.exec(text)) {
      const id = m[1] ?? m[2] ?? ""
      if (unlike(id) || digitalTypes.has(id)) return false
    }
    return true
  }
  /**
   * Where the parser stopped, and why: saxes counts lines and columns in the text it read, so its own `line:column: `
   * prefix goes and the line is counted in the whole input.
   */
  const failure = (cause: unknown) =>
    new ParseFailure(
      `XML line ${sax.line + skipper.skippedLines()}`,
      String((cause as Error).message).replace(/^\d+:\d+: /, "")
    )
  const skipper = ElementSkipper.make({
    units,
    inside: () => path.at(-1),
    skippable,
    ...(options.gatherChars === undefined ? {} : { gatherChars: options.gatherChars }),
    feed: (chunk) => {
      try {
        sax.write(chunk)
      } catch (cause) {
        throw failure(cause)
      }
    }
  })

  return {
    write: (chunk) => {
      skipper.write(chunk)
      return []
    },
    end: () => {
      skipper.end()
      try {
        sax.close()
      } catch (cause) {
        throw failure(cause)
      }
      if (asOf === undefined) throw new ParseFailure("XML", "no DateOfIssue: not an SDN Advanced XML file")
      const out: Array<ParsedRecord> = []
      for (const p of parties.values())
        if (entriesPassed.has(p.ref))
          throw new ParseFailure(
            "XML",
            `party ${p.ref} comes after its sanctions entry, against the order of the SDN Advanced XML (parties, then entries)`
          )
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
