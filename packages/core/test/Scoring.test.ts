import { readFileSync } from "node:fs"
import { fc, test } from "@fast-check/vitest"
import { Intel, Scoring } from "@vigil/core"

/** Every list official, as the scoring tables assume. */
const official: Scoring.Context = { authorityOf: () => "official", officialLists: "the official lists" }
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
    const a = Scoring.assess([], official)
    assert.deepStrictEqual(
      { score: a.score, band: a.band, action: a.action, signals: a.signals, labels: a.labels },
      { score: 0, band: "minimal", action: "ALLOW", signals: [], labels: [] }
    )
    assert.deepStrictEqual(a.entity, { name: "Unknown Entity", type: "wallet", category: "unknown" })
    assert.deepStrictEqual(a.flags, { sanctioned: false, blacklisted: false, threat_actor: false, smart_money: false })
  })

  it("blocks a sanctioned address: score at least 85, critical, flagged, entity named", () => {
    const a = Scoring.assess(
      [
        record("sanctions", {
          source: "OFAC",
          entityName: "Garantex Europe OU",
          entityType: "entity",
          reference: "SDN 35926"
        })
      ],
      official
    )
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
    const a = Scoring.assess([record("stablecoin_blacklist", { source: "Tether", label: "USDT" })], official)
    assert.isAtLeast(a.score, 60)
    assert.isTrue(a.flags.blacklisted)
    assert.include(a.labels, "USDT Blacklisted")
  })

  it("names an exchange from a positive record without raising the score", () => {
    const a = Scoring.assess([record("exchange", { entityName: "Binance", entityType: "exchange" })], official)
    assert.strictEqual(a.score, 0)
    assert.deepStrictEqual(a.entity, { name: "Binance", type: "exchange", category: "exchange" })
    assert.strictEqual(a.signals[0]?.polarity, "positive")
  })

  it("lets a sanctioned exchange stay critical", () => {
    const a = Scoring.assess([record("exchange", { entityName: "Garantex" }), record("sanctions")], official)
    assert.strictEqual(a.band, "critical")
  })

  it("corroborates: a second medium finding raises the score but by less than its own weight", () => {
    const one = Scoring.assess([record("mixer")], official)
    const two = Scoring.assess([record("mixer"), record("gambling")], official)
    assert.strictEqual(one.score, 75)
    assert.strictEqual(two.score, 80)
  })
})

describe("Scoring properties", () => {
  const risk = fc.array(fc.constantFrom(...riskCategories), { maxLength: 8 })
  const any = fc.array(fc.constantFrom(...categories), { maxLength: 8 })

  test.prop([any])("scores stay within [0, 100] and the band and action follow the score", (cs) => {
    const a = Scoring.assess(
      cs.map((c, i) => record(c, { reference: `r${i}` })),
      official
    )
    assert.isTrue(a.score >= 0 && a.score <= 100)
    assert.strictEqual(a.band, Scoring.band(a.score))
    assert.strictEqual(a.action, Scoring.actions[a.band])
    assert.isTrue(a.confidence >= 0 && a.confidence <= 1)
  })

  test.prop([risk, fc.constantFrom(...riskCategories)])("adding a risk signal never lowers the score", (cs, extra) => {
    const before = Scoring.assess(
      cs.map((c, i) => record(c, { reference: `r${i}` })),
      official
    )
    const after = Scoring.assess(
      [...cs.map((c, i) => record(c, { reference: `r${i}` })), record(extra, { reference: "x" })],
      official
    )
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
      assert.strictEqual(
        Scoring.assess([...records, record(positive)], official).score,
        Scoring.assess(records, official).score
      )
    }
  )

  test.prop([risk])("the signals' contributions add up to the score", (cs) => {
    const a = Scoring.assess(
      cs.map((c, i) => record(c, { reference: `r${i}` })),
      official
    )
    const total = a.signals.reduce((sum, s) => sum + s.contribution, 0)
    assert.isTrue(Math.abs(total - a.score) <= 0.5 + 0.01 * a.signals.length, `${total} vs ${a.score}`)
  })
})

describe("Scoring by authority", () => {
  const authorities = Intel.Authority.literals
  /** Lists named `list-<category>` by default; `authorityOf` reads the authority from a suffix `@<authority>`. */
  const byName: Scoring.Context = {
    authorityOf: (list) => (list.split("@")[1] as Intel.Authority | undefined) ?? "official",
    officialLists: "the official list in force on 2026-11-24 (ofac-sdn of 2025-11-19)"
  }
  const at = (authority: Intel.Authority, category: Intel.Category, extra: Partial<Intel.IntelRecord> = {}) =>
    record(category, { list: `${category}@${authority}`, ...extra })

  it("takes a scraped sanctions label for a weaker, unconfirmed signal that says so: high, REVIEW, not sanctioned", () => {
    const a = Scoring.assess(
      [at("scraped", "sanctions", { source: "Etherscan labels", label: "OFAC Sanctioned", reference: "0xd90e" })],
      byName
    )
    assert.isFalse(a.flags.sanctioned)
    assert.deepStrictEqual([a.score, a.band, a.action], [60, "high", "REVIEW"])
    assert.strictEqual(a.signals[0]?.type, "sanctions_reported")
    assert.strictEqual(a.signals[0]?.evidence.authority, "scraped")
    assert.strictEqual(
      a.signals[0]?.summary,
      "Sanctions reported by Etherscan labels (sanctions@scraped 0xd90e, scraped labels); not on the official list in force on 2026-11-24 (ofac-sdn of 2025-11-19)."
    )
    assert.deepStrictEqual(a.labels, ["Sanctions reported by Etherscan labels"])
    assert.strictEqual(a.entity.category, "sanctions_reported")
    assert.strictEqual(a.confidence, 0.65)
  })

  it("counts a third-party sanctions claim as a match once an official record confirms it", () => {
    const a = Scoring.assess([at("scraped", "sanctions"), at("official", "sanctions", { source: "OFAC" })], byName)
    assert.isTrue(a.flags.sanctioned)
    assert.deepStrictEqual(
      a.signals.map((s) => [s.type, s.evidence.authority]),
      [
        ["sanctions_match", "official"],
        ["sanctions_match", "scraped"]
      ].sort((x, y) => (x[1]! < y[1]! ? -1 : 1))
    )
    assert.strictEqual(a.action, "BLOCK")
  })

  it("lends confidence by authority: official over curated over scraped", () => {
    const confidence = (authority: Intel.Authority) => Scoring.assess([at(authority, "hack")], byName).confidence
    assert.deepStrictEqual(authorities.map(confidence), [0.98, 0.85, 0.75])
  })

  test.prop([
    fc.array(
      fc.tuple(fc.constantFrom("curated", "scraped") as fc.Arbitrary<Intel.Authority>, fc.constantFrom(...categories)),
      {
        maxLength: 8
      }
    )
  ])("no record of a curated or scraped list ever sets the sanctioned flag", (items) => {
    const a = Scoring.assess(
      items.map(([authority, c], i) => at(authority, c, { reference: `r${i}` })),
      byName
    )
    assert.isFalse(a.flags.sanctioned)
    assert.isFalse(a.signals.some((s) => s.type === "sanctions_match"))
  })

  test.prop([fc.constantFrom("curated", "scraped") as fc.Arbitrary<Intel.Authority>, fc.integer({ min: 1, max: 4 })])(
    "unconfirmed sanctions claims alone, however many, never block",
    (authority, n) => {
      const a = Scoring.assess(
        Array.from({ length: n }, (_, i) => at(authority, "sanctions", { reference: `r${i}` })),
        byName
      )
      assert.notStrictEqual(a.band, "critical")
      assert.notStrictEqual(a.action, "BLOCK")
    }
  )
})

describe("confidence, as docs/api.md states it", () => {
  it("is stated in docs/api.md with the figures the tests below hold", () => {
    const doc = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8").replace(/\s+/g, " ")
    for (const stated of [
      "an official list's own record 0.98–0.99, a curated one 0.75–0.85, scraped labels 0.65–0.75, 0.03 more per further list that agrees, at most 0.99",
      "0.5 when no list names the address, 0 for an incomplete answer, 1 for a system address"
    ])
      assert.include(doc, stated)
  })

  it("is the reliability of the lists an answer rests on: official 0.98–0.99, curated 0.75–0.85, scraped 0.65–0.75", () => {
    const ranges: Record<Intel.Authority, readonly [number, number]> = {
      official: [0.98, 0.99],
      curated: [0.75, 0.85],
      scraped: [0.65, 0.75]
    }
    for (const authority of ["official", "curated", "scraped"] as const)
      for (const category of Object.keys(Scoring.weights) as Array<Intel.Category>) {
        const r = Scoring.reliability(category, authority)
        assert.isAtLeast(r, ranges[authority][0], `${authority} ${category}`)
        assert.isAtMost(r, ranges[authority][1], `${authority} ${category}`)
      }
  })

  it("is 0.5 with no record, and 0.03 more per further list that agrees, at most 0.99", () => {
    const opts = { authorityOf: () => "scraped" as const, officialLists: "" }
    assert.strictEqual(Scoring.assess([], opts).confidence, 0.5)
    const record = (list: string): Intel.IntelRecord => ({
      list,
      source: "S",
      address: "0xab",
      family: "evm",
      category: "phishing",
      reference: list,
      listedAt: "2024-01-01",
      ingestedAt: "2024-01-01T00:00:00.000Z"
    })
    assert.strictEqual(Scoring.assess([record("a")], opts).confidence, 0.75)
    assert.strictEqual(Scoring.assess([record("a"), record("b")], opts).confidence, 0.78)
    const many = Array.from({ length: 20 }, (_, i) => record(`l${i}`))
    assert.strictEqual(Scoring.assess(many, opts).confidence, 0.99)
  })
})
