import { fc, test } from "@fast-check/vitest"
import { Intel, Scoring } from "@vigil/core"
import { assert, describe, it } from "vitest"

const record = (category: Intel.Category, extra: Partial<Intel.IntelRecord> = {}): Intel.IntelRecord => ({
  list: `list-${category}`,
  source: "Test",
  address: "0x00000000000000000000000000000000000000aa",
  family: "evm",
  category,
  reference: `ref-${category}`,
  listedAt: "2024-01-01",
  ingestedAt: "2024-01-02T00:00:00.000Z",
  ...extra
})

const categories = Intel.Category.literals
const riskCategories = categories.filter((c) => Scoring.weights[c].weight > 0)
const positiveCategories = categories.filter((c) => Scoring.weights[c].weight === 0)

describe("Scoring tables", () => {
  it("bands scores exactly as spec §2.2", () => {
    const cases: ReadonlyArray<[number, Scoring.Band]> = [
      [100, "critical"],
      [85, "critical"],
      [84, "high"],
      [60, "high"],
      [59, "medium"],
      [35, "medium"],
      [34, "low"],
      [15, "low"],
      [14, "minimal"],
      [0, "minimal"]
    ]
    for (const [score, band] of cases) assert.strictEqual(Scoring.band(score), band, String(score))
    assert.deepStrictEqual(Scoring.actions, {
      critical: "BLOCK",
      high: "REVIEW",
      medium: "MONITOR",
      low: "ALLOW_CAUTIOUS",
      minimal: "ALLOW"
    })
  })

  it("keeps weights inside the tiers of the intelligence reference", () => {
    const ranges = { 1: [90, 100], 2: [70, 89], 3: [40, 69], 4: [10, 39], 0: [0, 0] } as const
    for (const c of categories) {
      const { tier, weight } = Scoring.weights[c]
      assert.isTrue(weight >= ranges[tier][0] && weight <= ranges[tier][1], `${c}: ${weight} in tier ${tier}`)
    }
  })
})

describe("Scoring.assess outcomes", () => {
  it("finds nothing to say about an address with no record: minimal, ALLOW", () => {
    const a = Scoring.assess([])
    assert.deepStrictEqual(
      { score: a.score, band: a.band, action: a.action, signals: a.signals, labels: a.labels },
      { score: 0, band: "minimal", action: "ALLOW", signals: [], labels: [] }
    )
    assert.deepStrictEqual(a.entity, { name: "Unknown Entity", type: "wallet", category: "unknown" })
    assert.deepStrictEqual(a.flags, { sanctioned: false, blacklisted: false, threat_actor: false, smart_money: false })
  })

  it("blocks a sanctioned address: score at least 85, critical, flagged, entity named", () => {
    const a = Scoring.assess([
      record("sanctions", {
        source: "OFAC",
        entityName: "Garantex Europe OU",
        entityType: "entity",
        reference: "SDN 35926"
      })
    ])
    assert.isAtLeast(a.score, 85)
    assert.strictEqual(a.band, "critical")
    assert.strictEqual(a.action, "BLOCK")
    assert.isTrue(a.flags.sanctioned)
    assert.deepStrictEqual(a.entity, { name: "Garantex Europe OU", type: "entity", category: "sanctioned" })
    assert.deepStrictEqual(a.labels, ["OFAC Sanctioned"])
    assert.strictEqual(a.signals[0]?.evidence.reference, "SDN 35926")
    assert.strictEqual(a.confidence, 0.99)
  })

  it("holds a frozen stablecoin address at high or above and flags it blacklisted", () => {
    const a = Scoring.assess([record("stablecoin_blacklist", { source: "Tether", label: "USDT" })])
    assert.isAtLeast(a.score, 60)
    assert.isTrue(a.flags.blacklisted)
    assert.include(a.labels, "USDT Blacklisted")
  })

  it("names an exchange from a positive record without raising the score", () => {
    const a = Scoring.assess([record("exchange", { entityName: "Binance", entityType: "exchange" })])
    assert.strictEqual(a.score, 0)
    assert.deepStrictEqual(a.entity, { name: "Binance", type: "exchange", category: "exchange" })
    assert.strictEqual(a.signals[0]?.polarity, "positive")
  })

  it("lets a sanctioned exchange stay critical", () => {
    const a = Scoring.assess([record("exchange", { entityName: "Garantex" }), record("sanctions")])
    assert.strictEqual(a.band, "critical")
  })

  it("corroborates: a second medium finding raises the score but by less than its own weight", () => {
    const one = Scoring.assess([record("mixer")])
    const two = Scoring.assess([record("mixer"), record("gambling")])
    assert.strictEqual(one.score, 75)
    assert.strictEqual(two.score, 80)
  })
})

describe("Scoring properties", () => {
  const risk = fc.array(fc.constantFrom(...riskCategories), { maxLength: 8 })
  const any = fc.array(fc.constantFrom(...categories), { maxLength: 8 })

  test.prop([any])("scores stay within [0, 100] and the band and action follow the score", (cs) => {
    const a = Scoring.assess(cs.map((c, i) => record(c, { reference: `r${i}` })))
    assert.isTrue(a.score >= 0 && a.score <= 100)
    assert.strictEqual(a.band, Scoring.band(a.score))
    assert.strictEqual(a.action, Scoring.actions[a.band])
    assert.isTrue(a.confidence >= 0 && a.confidence <= 1)
  })

  test.prop([risk, fc.constantFrom(...riskCategories)])("adding a risk signal never lowers the score", (cs, extra) => {
    const before = Scoring.assess(cs.map((c, i) => record(c, { reference: `r${i}` })))
    const after = Scoring.assess([
      ...cs.map((c, i) => record(c, { reference: `r${i}` })),
      record(extra, { reference: "x" })
    ])
    assert.isAtLeast(after.score, before.score)
  })

  test.prop([fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 10 }), fc.integer({ min: 0, max: 100 })])(
    "the composite is within [max weight, 100] and monotone in every weight",
    (ws, extra) => {
      const s = Scoring.composite(ws)
      assert.isTrue(s >= Math.max(0, ...ws) - 1e-9 && s <= 100 + 1e-9)
      assert.isAtLeast(Scoring.composite([...ws, extra]) + 1e-9, s)
    }
  )

  test.prop([risk, fc.constantFrom(...positiveCategories)])(
    "a positive signal never changes the score",
    (cs, positive) => {
      const records = cs.map((c, i) => record(c, { reference: `r${i}` }))
      assert.strictEqual(Scoring.assess([...records, record(positive)]).score, Scoring.assess(records).score)
    }
  )

  test.prop([risk])("the signals' contributions add up to the score", (cs) => {
    const a = Scoring.assess(cs.map((c, i) => record(c, { reference: `r${i}` })))
    const total = a.signals.reduce((sum, s) => sum + s.contribution, 0)
    assert.isTrue(Math.abs(total - a.score) <= 0.5 + 0.01 * a.signals.length, `${total} vs ${a.score}`)
  })
})
