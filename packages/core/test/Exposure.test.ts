/**
 * Counterparty exposure, decided from transfers already read: the dust floor, system addresses, direction, shares,
 * and how far it moves a score.
 */
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { Chain, Exposure, type Intel, type IntelResult, SystemAddresses } from "@vigil/core"

const self = "0x00000000000000000000000000000000000000aa"
const listed = "0x00000000000000000000000000000000000000bb"
const other = "0x00000000000000000000000000000000000000cc"
const token = "0x00000000000000000000000000000000000000dd"

const transfer = (from: string, to: string, value: bigint, n: number, t = token): Exposure.Transfer => ({
  transaction: `0x${n.toString(16).padStart(64, "0")}`,
  block: n,
  token: t,
  standard: t === "native" ? "native" : "erc20",
  from,
  to,
  value
})

const read = (found: ReadonlyArray<Exposure.Transfer>): Exposure.Read => ({
  windows: [{ network: "ethereum", fromBlock: 0, toBlock: 100, transfers: found.length, native: true, found }],
  unchecked: []
})

const sanctions: Intel.IntelRecord = {
  list: "ofac",
  source: "OFAC",
  address: listed,
  family: "evm",
  category: "sanctions",
  reference: "SDN 1",
  listedAt: "2022-01-01",
  ingestedAt: "2022-01-01T00:00:00.000Z"
}

const dustFloor = { native: "0.1", token: "1", tokens: {} }
const settings = { budgetMillis: 1_000, dustFloor }
/** Tokens of 3 decimals: the floor of 1 token is 1,000 units. */
const floor = Exposure.floorOf(dustFloor, () => 3)
const assess = (found: ReadonlyArray<Exposure.Transfer>, records = [sanctions], floorOf = floor) =>
  Exposure.assess(
    read(found),
    Exposure.flows(self, read(found)),
    records,
    () => "official",
    "2025-01-01",
    settings,
    floorOf
  )

describe("Exposure.assess", () => {
  it("makes one signal per listed counterparty, with direction, amounts and share of the address's volume", () => {
    const found = assess([
      transfer(listed, self, 3_000n, 1),
      transfer(self, listed, 1_000n, 2),
      transfer(other, self, 6_000n, 3)
    ])
    assert.strictEqual(found.signals.length, 1)
    const [signal] = found.signals
    assert.strictEqual(signal!.type, "exposure_sanctioned")
    assert.deepStrictEqual(signal!.evidence.exposure, {
      counterparty: listed,
      network: "ethereum",
      direction: "both",
      transfers: 2,
      transactions: [transfer(listed, self, 0n, 1).transaction, transfer(listed, self, 0n, 2).transaction],
      amounts: [{ token, standard: "erc20", incoming: "3000", outgoing: "1000", share: 0.4 }]
    })
    assert.deepInclude(found.metadata, { counterparties: 2, listed: 1, dust_ignored: 0, unsolicited: [] })
  })

  it("sets aside zero-value transfers either way and incoming ones below the floor, reporting those of a listed counterparty", () => {
    const found = assess([
      transfer(other, self, 1_000_000n, 1),
      transfer(listed, self, 999n, 2),
      transfer(self, listed, 0n, 3),
      transfer(other, self, 0n, 4)
    ])
    assert.deepStrictEqual(found.signals, [])
    assert.strictEqual(found.metadata.dust_ignored, 3)
    assert.deepStrictEqual(
      found.metadata.unsolicited.map((u) => [u.counterparty, u.reason, u.type, u.list, u.amounts]),
      [
        [
          listed,
          "received below the dust floor",
          "exposure_sanctioned",
          "ofac",
          [{ token, standard: "erc20", incoming: "999", outgoing: "0" }]
        ],
        [
          listed,
          "zero-value transfers",
          "exposure_sanctioned",
          "ofac",
          [{ token, standard: "erc20", incoming: "0", outgoing: "0" }]
        ]
      ]
    )
    // The same amount sent, not received, is the address's own act: it counts.
    assert.strictEqual(
      assess([transfer(other, self, 1_000_000n, 1), transfer(self, listed, 999n, 2)]).signals.length,
      1
    )
  })

  it("counts a transfer from a listed counterparty at or above the floor, however large the address's own volume", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1_000n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 36n }),
        fc.boolean(),
        (value, volume, native) => {
          const t = native ? "native" : token
          const floorUnits = native ? 10n ** 17n : 1_000n
          const received = value < floorUnits ? floorUnits : value
          const found = assess([transfer(other, self, volume + 1n, 1, t), transfer(listed, self, received, 2, t)])
          assert.strictEqual(found.signals.length, 1)
          assert.deepStrictEqual(found.metadata.unsolicited, [])
        }
      )
    )
  })

  it("has no floor for a token whose decimals are not known: its transfers count", () => {
    const found = assess(
      [transfer(listed, self, 1n, 1)],
      [sanctions],
      Exposure.floorOf(dustFloor, () => undefined)
    )
    assert.strictEqual(found.signals.length, 1)
    // A floor set for that token counts only with its decimals: per token, in its units.
    const perToken = Exposure.floorOf({ ...dustFloor, tokens: { [token]: "0.5" } }, () => 4)
    assert.strictEqual(assess([transfer(listed, self, 4_999n, 1)], [sanctions], perToken).signals.length, 0)
    assert.strictEqual(assess([transfer(listed, self, 5_000n, 1)], [sanctions], perToken).signals.length, 1)
  })

  it("never takes a system address as a counterparty, whatever lists name it", () => {
    const zero = "0x0000000000000000000000000000000000000000"
    const dead = "0x000000000000000000000000000000000000dead"
    const found = assess(
      [
        transfer(zero, self, 10n ** 9n, 1),
        transfer(self, dead, 10n ** 9n, 2),
        transfer(self, "0x0000000000000000000000000000000000000001", 5_000n, 3)
      ],
      [zero, dead].map((address) => ({ ...sanctions, address, category: "stablecoin_blacklist" as const }))
    )
    assert.deepStrictEqual(found.signals, [])
    assert.deepInclude(found.metadata, { counterparties: 0, listed: 0, system_transfers: 3, unsolicited: [] })
  })

  it("ignores a counterparty whose records are not in force, or only positive", () => {
    assert.deepStrictEqual(
      assess([transfer(listed, self, 5_000n, 1)], [{ ...sanctions, delistedAt: "2024-01-01" }]).signals,
      []
    )
    assert.deepStrictEqual(
      assess([transfer(listed, self, 5_000n, 1)], [{ ...sanctions, category: "exchange" }]).signals,
      []
    )
  })
})

describe("SystemAddresses", () => {
  it("holds each address once, normalized as screening normalizes it", () => {
    const seen = new Set<string>()
    for (const s of SystemAddresses.all) {
      const detected = Chain.detect(s.address)
      assert.isTrue(detected.valid, s.address)
      if (detected.valid) assert.strictEqual(detected.normalized, s.address)
      assert.isFalse(seen.has(s.address), s.address)
      seen.add(s.address)
    }
  })

  it("is listed in docs/screening.md exactly as the code holds it", () => {
    const doc = readFileSync(new URL("../../../docs/screening.md", import.meta.url), "utf8")
    const section = doc.slice(doc.indexOf("### System addresses"))
    const rows = section
      .split("\n")
      .filter((line) => /^\| `/.test(line))
      .map((line) =>
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim())
      )
    assert.deepStrictEqual(
      rows,
      SystemAddresses.all.map((s) => [`\`${s.address}\``, s.name, s.kind])
    )
  })
})

const result = (score: number, complete = true): IntelResult.IntelResult => ({
  address: self,
  score,
  risk_level: score >= 85 ? "critical" : score >= 60 ? "high" : "minimal",
  confidence: 0.5,
  flags: { sanctioned: false, blacklisted: false, threat_actor: false, smart_money: false },
  entity: { name: "Unknown Entity", type: "wallet", category: "unknown" },
  signals: [],
  labels: [],
  recommendation: { action: complete ? "ALLOW" : "REVIEW", summary: "", details: "No record.", ai_enhanced: false },
  metadata: {
    version: "v3",
    latency_ms: 0,
    sources_used: 1,
    is_complete: complete,
    timestamp: "2025-01-01T00:00:00.000Z",
    chain: { family: "evm", networks: ["ethereum"], normalized: self },
    as_of: "2025-01-01"
  }
})

describe("Exposure.annotate", () => {
  it("never lowers a score, and exposure alone never makes an address critical", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 6 }),
        fc.boolean(),
        (score, n, complete) => {
          const counterparties = Array.from({ length: n }, (_, i) => `0x${(0xb0 + i).toString(16).padStart(40, "0")}`)
          const found = assess(
            counterparties.map((c, i) => transfer(c, self, 10_000n, i + 1)),
            counterparties.map((address) => ({ ...sanctions, address }))
          )
          const annotated = Exposure.annotate(result(score, complete), found)
          assert.isAtLeast(annotated.score, score)
          if (score < 85) assert.isAtMost(annotated.score, Exposure.ceiling)
          if (n > 0) assert.isAtLeast(annotated.score, Math.max(score, 60))
          if (!complete) assert.notStrictEqual(annotated.recommendation.action, "ALLOW")
          assert.strictEqual(annotated.signals.length, n)
        }
      )
    )
  })
})
