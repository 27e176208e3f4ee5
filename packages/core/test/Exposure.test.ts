/** Counterparty exposure, decided from transfers already read: dust, direction, shares, and how far it moves a score. */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { Exposure, type Intel, type IntelResult } from "@vigil/core"

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

const settings = { dustShare: 0.001, budgetMillis: 1_000 }
const assess = (found: ReadonlyArray<Exposure.Transfer>, records = [sanctions]) =>
  Exposure.assess(self, read(found), records, () => "official", "2025-01-01", settings)

describe("Exposure.assess", () => {
  it("makes one signal per listed counterparty, with direction, amounts and share of the address's volume", () => {
    const found = assess([
      transfer(listed, self, 300n, 1),
      transfer(self, listed, 100n, 2),
      transfer(other, self, 600n, 3)
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
      amounts: [{ token, standard: "erc20", incoming: "300", outgoing: "100", share: 0.4 }]
    })
    assert.deepInclude(found.metadata, { counterparties: 2, listed: 1, dust_ignored: 0 })
  })

  it("sets aside zero-value transfers either way, and incoming ones below the dust share", () => {
    const found = assess([
      transfer(other, self, 1_000_000n, 1),
      transfer(listed, self, 999n, 2),
      transfer(self, listed, 0n, 3)
    ])
    assert.deepStrictEqual(found.signals, [])
    assert.strictEqual(found.metadata.dust_ignored, 2)
    // The same amount sent, not received, is the address's own act: it counts.
    assert.strictEqual(
      assess([transfer(other, self, 1_000_000n, 1), transfer(self, listed, 999n, 2)]).signals.length,
      1
    )
  })

  it("ignores a counterparty whose records are not in force, or only positive", () => {
    assert.deepStrictEqual(
      assess([transfer(listed, self, 5n, 1)], [{ ...sanctions, delistedAt: "2024-01-01" }]).signals,
      []
    )
    assert.deepStrictEqual(
      assess([transfer(listed, self, 5n, 1)], [{ ...sanctions, category: "exchange" }]).signals,
      []
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
          const found = Exposure.assess(
            self,
            read(counterparties.map((c, i) => transfer(c, self, 10n, i + 1))),
            counterparties.map((address) => ({ ...sanctions, address })),
            () => "official",
            "2025-01-01",
            settings
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
