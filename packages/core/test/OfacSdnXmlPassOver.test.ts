/**
 * The SDN parser passes over locations, identity documents, relationships, parties without a digital-currency
 * feature and sanctions entries of no party it kept, without tokenising them. Held here to the parser that reads
 * every element: on SDN-shaped documents drawn with the markup that could mislead a text scan (comments, CDATA,
 * processing instructions, entities, end tags with spaces, self-closing and nested units, elements that change
 * what the parser keeps standing inside a unit, reference values after the parties, parties after the entries),
 * both give the same records, date, skips and failures, in chunks of any size; except that a party kept after an
 * entry of its own that was passed over is refused, naming the order the SDN Advanced XML has.
 */
import { fc } from "@fast-check/vitest"
import { Ingestion } from "@vigil/core"
import { assert, describe, it } from "vitest"

const { OfacSdnXml } = Ingestion

type Outcome = { readonly ok: string } | { readonly failed: string }

const outOfOrder = /^XML: party (\d+) comes after its sanctions entry, against the order of the SDN Advanced XML/

/**
 * The same outcome; or the refusal of a party kept after the last entry of its profile, an entry passed over then
 * (reading everything took it).
 */
const alike = (passed: Outcome, read: Outcome, text: string) => {
  const refusal = "failed" in passed ? outOfOrder.exec(passed.failed) : null
  if (refusal !== null) {
    assert.property(read, "ok")
    const ref = refusal[1]!
    const lastEntry = text.lastIndexOf(`<SanctionsEntry ProfileID="${ref}"`)
    assert.isAbove(lastEntry, -1, text)
    assert.isAbove(text.lastIndexOf(`<DistinctParty FixedRef="${ref}"`), lastEntry, text)
    return "refused"
  }
  assert.deepStrictEqual(passed, read, text)
  return "alike"
}

const run = (text: string, cuts: ReadonlyArray<number>, passOver: boolean, gatherChars: number): Outcome => {
  const parser = OfacSdnXml.make({ passOver, gatherChars })
  try {
    const out = []
    let at = 0
    for (const cut of [...cuts, text.length]) {
      out.push(...parser.write(text.slice(at, cut)))
      at = cut
    }
    out.push(...parser.end())
    return { ok: JSON.stringify({ out, asOf: parser.asOf(), skipped: parser.skipped() }) }
  } catch (cause) {
    return { failed: String((cause as Error).message) }
  }
}

// Addresses that screen (an EVM address, a Tron one) and one that does not (a skip reason).
const addresses = [
  "0x8589427373D6D84E98730D7795D8f6f8731FDA16",
  "TAYhjpL8pPs8T84FSM329nffQpc6jD8GBM",
  "LaizKtS5DUhPuP1nTQcc83MS7HwK6vk85z"
]
const featureIds = ["1", "2", "3", "4", "4 "]
const refs = ["10", "11", "12"]

const quote = (value: string) => fc.constantFrom(`"${value}"`, `'${value}'`, ` = "${value}"`)
const attr = (name: string, value: string) =>
  quote(value).map((q) => (q.startsWith(" =") ? `${name}${q}` : `${name}=${q}`))

/**
 * Markup that a scan for elements could misread, all well-formed. Comments, CDATA and processing instructions are
 * rare: after the first one, nothing more is passed over.
 */
const spice = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.constantFrom(
      "",
      "",
      "",
      "\n  ",
      "<Note>a &amp; b &lt;Location&gt;</Note>",
      '<DateOfIssue CalendarTypeID="1"><Year>2030</Year><Month>1</Month><Day>2</Day></DateOfIssue>',
      '<FeatureType ID="4">Digital Currency Address - ETH</FeatureType>',
      '<SanctionsEntry ProfileID="11"><SanctionsMeasure><Comment>INSIDE</Comment></SanctionsMeasure></SanctionsEntry>'
    )
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "<!-- a note -->",
      '<!-- <DistinctParty FixedRef="10"> <Location> -->',
      "<![CDATA[</Location> <IDRegDocument>]]>",
      "<?note </DistinctParty>?>"
    )
  }
)

const endTag = (name: string) => fc.constantFrom(`</${name}>`, `</${name}  >`, `</${name}\n>`)

/** A unit of a container that holds nothing the parser reads (or, spiced, something it does). */
const plainUnit = (name: string) =>
  fc.oneof(
    fc
      .tuple(spice, spice, endTag(name), fc.nat(3))
      .map(([a, b, end, n]) => `<${name} ID="${n}">${a}<Part>x${n}</Part>${b}${end}`),
    fc.constant(`<${name} ID="9"/>`),
    fc.tuple(spice, endTag(name)).map(([a, end]) => `<${name} ID="7"><${name} ID="8">${a}</${name}>${end}`)
  )

const feature = fc
  .tuple(
    fc.constantFrom(...featureIds, "&#51;", " 1", "2\n", "4\t"),
    fc.constantFrom("1432", "1432", "99"),
    fc.constantFrom(...addresses)
  )
  .chain(([id, detail, address]) =>
    attr("FeatureTypeID", id).map(
      (a) =>
        `<Feature ID="1" ${a}><FeatureVersion><VersionDetail DetailTypeID="${detail}">${address}</VersionDetail></FeatureVersion></Feature>`
    )
  )

const party = fc
  .tuple(
    fc.constantFrom(...refs),
    fc.array(feature, { maxLength: 2 }),
    fc.constantFrom("TORNADO CASH", "A &amp; B", "LAZARUS"),
    spice,
    endTag("DistinctParty")
  )
  .map(
    ([ref, features, name, extra, end]) =>
      `<DistinctParty FixedRef="${ref}"><Profile ID="${ref}" PartySubTypeID="3">` +
      `<Identity><Alias Primary="true"><DocumentedName><DocumentedNamePart><NamePartValue>${name}</NamePartValue>` +
      `</DocumentedNamePart></DocumentedName></Alias></Identity>${features.join("")}${extra}</Profile>${end}`
  )

const entry = fc
  .tuple(fc.constantFrom(...refs, "99"), fc.constantFrom("CYBER2", "DPRK3"), fc.integer({ min: 2015, max: 2024 }))
  .map(
    ([ref, program, year]) =>
      `<SanctionsEntry ProfileID="${ref}"><EntryEvent><Date><Year>${year}</Year><Month>5</Month><Day>1</Day></Date></EntryEvent>` +
      `<SanctionsMeasure><Comment>${program}</Comment></SanctionsMeasure></SanctionsEntry>`
  )

const container = (name: string, unit: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.array(fc.tuple(spice, unit), { maxLength: 5 }), spice)
    .map(([units, tail]) => `<${name}>${units.map(([s, u]) => `\n    ${s}${u}`).join("")}${tail}\n  </${name}>`)

const references = fc
  .subarray(featureIds, { minLength: 1 })
  .chain((ids) =>
    fc
      .array(fc.constantFrom("Digital Currency Address - ETH", "Digital Currency Address - TRX", "SWIFT/BIC"), {
        minLength: ids.length,
        maxLength: ids.length
      })
      .map((names) => ids.map((id, i) => `<FeatureType ID="${id}">${names[i]}</FeatureType>`).join(""))
  )
  .map(
    (types) =>
      `<ReferenceValueSets><FeatureTypeValues>${types}</FeatureTypeValues>` +
      `<PartySubTypeValues><PartySubType ID="3" PartyTypeID="2">Unknown</PartySubType></PartySubTypeValues>` +
      `<PartyTypeValues><PartyType ID="2">Entity</PartyType></PartyTypeValues></ReferenceValueSets>`
  )

const sections = fc.constantFrom(
  [
    "DateOfIssue",
    "ReferenceValueSets",
    "Locations",
    "IDRegDocuments",
    "DistinctParties",
    "ProfileRelationships",
    "SanctionsEntries"
  ],
  ["ReferenceValueSets", "DateOfIssue", "DistinctParties", "Locations", "SanctionsEntries"],
  ["DateOfIssue", "DistinctParties", "ReferenceValueSets", "SanctionsEntries", "DistinctParties"],
  ["DateOfIssue", "SanctionsEntries", "ReferenceValueSets", "DistinctParties"],
  ["Locations", "IDRegDocuments"]
)

/** A well-formed SDN-shaped document. */
const document = sections.chain((order) =>
  fc
    .tuple(
      fc.tuple(
        ...order.map((section) => {
          switch (section) {
            case "DateOfIssue":
              return fc
                .integer({ min: 2020, max: 2026 })
                .map((y) => `<DateOfIssue><Year>${y}</Year><Month>11</Month><Day>19</Day></DateOfIssue>`)
            case "ReferenceValueSets":
              return references
            case "DistinctParties":
              return container("DistinctParties", party)
            case "SanctionsEntries":
              return container("SanctionsEntries", entry)
            case "Locations":
              return container("Locations", plainUnit("Location"))
            case "IDRegDocuments":
              return container("IDRegDocuments", plainUnit("IDRegDocument"))
            default:
              return container("ProfileRelationships", plainUnit("ProfileRelationship"))
          }
        })
      ),
      fc.boolean(),
      spice
    )
    .map(
      ([parts, declared, lead]) =>
        `${declared ? '<?xml version="1.0" encoding="utf-8"?>\n' : ""}<Sanctions>${lead}\n  ${parts.join("\n  ")}\n</Sanctions>\n`
    )
)

/** Cut points: many small chunks, or a few. */
const cutsOf = (text: string) =>
  fc
    .array(fc.integer({ min: 0, max: text.length }), { maxLength: 40 })
    .map((cuts) => [...new Set(cuts)].sort((a, b) => a - b))

const outcomes = (text: string, cuts: ReadonlyArray<number>, gatherChars: number) => ({
  read: run(text, [], false, gatherChars),
  passed: run(text, cuts, true, gatherChars)
})

describe("ofac-sdn-xml passing over elements", () => {
  it("gives what reading every element gives, on well-formed documents in chunks of any size", () => {
    let succeeded = 0
    let refused = 0
    fc.assert(
      fc.property(
        document.chain((text) => fc.tuple(fc.constant(text), cutsOf(text), fc.constantFrom(1, 16, 1 << 16))),
        ([text, cuts, gatherChars]) => {
          const { read, passed } = outcomes(text, cuts, gatherChars)
          if (alike(passed, read, text) === "refused") refused++
          else if ("ok" in read) succeeded++
        }
      ),
      { numRuns: 1500 }
    )
    assert.isAbove(succeeded, 500, "most documents are read")
    assert.isAbove(refused, 0, "parties after their entries are drawn")
    assert.isBelow(refused, 300)
  })

  it("names the same line when the input breaks after elements passed over", () => {
    fc.assert(
      fc.property(
        document.chain((text) => fc.tuple(fc.constant(text), cutsOf(text), fc.constantFrom(1, 16, 1 << 16))),
        ([text, cuts, gatherChars]) => {
          // A stray end tag after the root's content, where no unit stands.
          const broken = text.replace(/\n<\/Sanctions>\n$/, "\n</Stray>\n</Sanctions>\n")
          const { read, passed } = outcomes(broken, cuts, gatherChars)
          assert.property(read, "failed")
          // Both refuse: the stray end tag comes before the end, where the order is checked.
          assert.deepStrictEqual(passed, read)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("never reads a document that reading every element refuses into other records", () => {
    const breakage = fc.constantFrom("<Open>", "</Close>", "<a b='1'", "&bogus;", "<<")
    fc.assert(
      fc.property(
        document.chain((text) =>
          fc.tuple(fc.constant(text), fc.integer({ min: 0, max: text.length }), breakage, cutsOf(text))
        ),
        ([text, at, broken, cuts]) => {
          const mangled = text.slice(0, at) + broken + text.slice(at)
          const { read, passed } = outcomes(mangled, cuts, 16)
          // Left-out text is not checked: a break inside it may pass. Anything read is read alike.
          if ("ok" in read) alike(passed, read, mangled)
          if ("failed" in passed && !outOfOrder.test(passed.failed)) assert.property(read, "failed")
        }
      ),
      { numRuns: 500 }
    )
  })
})
