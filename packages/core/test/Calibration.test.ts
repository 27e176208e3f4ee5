/** The calibration model: what it learns from known rates, that it is deterministic, and how far it moves a score. */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { Calibration, type Intel, Scoring } from "@vigil/core"

/** `n` examples whose features are `features`, of which `confirmed` have the truth. */
const group = (prefix: string, n: number, confirmed: number, features: Record<string, number>) =>
  Array.from({ length: n }, (_, i): Calibration.Example => ({
    address: `${prefix}-${String(i).padStart(5, "0")}`,
    features: new Map([["bias", 1], ...Object.entries(features)]),
    truth: i < confirmed,
    ruleScore: 90,
    graded: true
  }))

describe("Calibration.fit", () => {
  it("learns the rate at which each source is borne out", () => {
    const examples = [
      ...group("a", 1_000, 800, { "list:a": 1 }),
      ...group("b", 1_000, 200, { "list:b": 1 }),
      ...group("ab", 500, 475, { "list:a": 1, "list:b": 1, agreement: 1 })
    ]
    const model = Calibration.fit(examples, 0.01)
    const p = (features: Record<string, number>) =>
      Calibration.probability(model, new Map([["bias", 1], ...Object.entries(features)]))
    assert.closeTo(p({ "list:a": 1 }), 0.8, 0.01)
    assert.closeTo(p({ "list:b": 1 }), 0.2, 0.01)
    assert.closeTo(p({ "list:a": 1, "list:b": 1, agreement: 1 }), 0.95, 0.01)
  })

  it("gives the same weights whatever order the examples come in", () => {
    const examples = [...group("a", 300, 100, { "list:a": 1 }), ...group("b", 300, 250, { "list:b": 1, age: 0.4 })]
    const once = Calibration.train(examples, { asOf: "2026-01-01", fittedAt: "2026-01-01T00:00:00.000Z" })
    const reversed = Calibration.train([...examples].reverse(), {
      asOf: "2026-01-01",
      fittedAt: "2026-01-01T00:00:00.000Z"
    })
    assert.deepStrictEqual(reversed, once)
  })

  it("leaves out a feature seen in fewer than minSupport examples", () => {
    const examples = [
      ...group("a", 100, 50, { "list:a": 1 }),
      ...group("r", Calibration.minSupport - 1, 0, { "list:rare": 1 })
    ]
    assert.notInclude(Calibration.fit(examples).features, "list:rare")
    assert.include(Calibration.fit(examples).features, "list:a")
  })

  it("holds out about a fifth of the addresses, always the same ones", () => {
    const addresses = Array.from({ length: 10_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`)
    const held = addresses.filter(Calibration.heldOut)
    assert.closeTo(held.length / addresses.length, Calibration.heldOutShare, 0.02)
    assert.deepStrictEqual(addresses.filter(Calibration.heldOut), held)
  })
})

describe("Calibration.evaluate", () => {
  it("counts precision and recall at the BLOCK and REVIEW thresholds and bins predictions by decile", () => {
    const model = { features: ["bias", "list:a"], weights: [-2, 4] }
    const e = (address: string, a: number, truth: boolean): Calibration.Example => ({
      address,
      features: new Map([
        ["bias", 1],
        ["list:a", a]
      ]),
      truth,
      ruleScore: 90,
      graded: true
    })
    // list:a → p = σ(2) ≈ 0.88 (score 88, BLOCK); without it σ(−2) ≈ 0.12 (score 65 after the bound, REVIEW).
    const evaluation = Calibration.evaluate(model, [
      e("1", 1, true),
      e("2", 1, false),
      e("3", 0, true),
      e("4", 0, false)
    ])
    assert.deepStrictEqual(evaluation.block, { flagged: 2, precision: 0.5, recall: 0.5 })
    assert.deepStrictEqual(evaluation.blockRules, { flagged: 4, precision: 0.5, recall: 1 })
    assert.deepStrictEqual(evaluation.review, { flagged: 4, precision: 0.5, recall: 1 })
    assert.deepStrictEqual(
      evaluation.reliability.filter((b) => b.count > 0).map((b) => [b.from, b.count, b.observed]),
      [
        [0.1, 2, 0.5],
        [0.8, 2, 0.5]
      ]
    )
  })
})

describe("Calibration.calibratedScore", () => {
  it("stays within the bounds of the rule-based score, and a listed address never falls to ALLOW", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 1, noNaN: true }), (rule, p) => {
        const score = Calibration.calibratedScore(rule, p)
        assert.isAtMost(score, Math.min(100, rule + Calibration.bounds.raise))
        assert.isAtLeast(score, Math.max(Math.min(Calibration.bounds.floor, rule), rule - Calibration.bounds.lower))
        if (rule >= Calibration.bounds.floor) assert.notStrictEqual(Scoring.actions[Scoring.band(score)], "ALLOW")
      })
    )
  })
})

describe("Calibration.modelOn", () => {
  const stored = (version: number, asOf: string) => ({ version, asOf })
  it("takes the newest model of the day or before it, the later stored of one day", () => {
    const models = [stored(1, "2025-01-01"), stored(2, "2025-06-01"), stored(3, "2025-06-01"), stored(4, "2025-03-01")]
    assert.isUndefined(Calibration.modelOn(models, "2024-12-31"))
    assert.strictEqual(Calibration.modelOn(models, "2025-01-01")?.version, 1)
    assert.strictEqual(Calibration.modelOn(models, "2025-04-01")?.version, 4)
    assert.strictEqual(Calibration.modelOn(models, "2025-06-01")?.version, 3)
  })
})

describe("Calibration.featuresOf", () => {
  const record = (list: string, category: Intel.Category, listedAt = "2024-01-01"): Intel.IntelRecord => ({
    list,
    source: list,
    address: "0x01",
    family: "evm",
    category,
    reference: list,
    listedAt,
    ingestedAt: `${listedAt}T00:00:00.000Z`
  })
  const authority = (list: string): Intel.Authority => (list.startsWith("official") ? "official" : "scraped")
  it("reads scraped records only, so the ground truth is never a feature", () => {
    const records = [
      record("official-sdn", "sanctions"),
      record("scraped-a", "phishing"),
      record("scraped-b", "exchange")
    ]
    const features = Calibration.featuresOf(records, authority, "2026-01-01")
    assert.deepStrictEqual([...features.keys()].sort(), [
      "age",
      "bias",
      "list:scraped-a",
      "positive",
      "signal:phishing"
    ])
    assert.deepStrictEqual(Calibration.truthOf(records, authority), { truth: true, copied: false })
    assert.isFalse(Calibration.grades(records, authority))
    assert.isTrue(Calibration.grades(records.slice(1), authority))
    assert.deepStrictEqual(Calibration.truthOf(records.slice(1), authority), { truth: false, copied: false })
    // The same official record citing a copied source is no truth: the address was named only through a copy.
    const cited = [{ ...records[0]!, cites: "https://scraped-a.example" }, ...records.slice(1)]
    assert.deepStrictEqual(
      Calibration.truthOf(cited, authority, (c) => c.includes("scraped-a")),
      { truth: false, copied: true }
    )
  })
})
