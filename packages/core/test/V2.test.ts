import { type Intel, Scoring, Screening, V2 } from "@vigil/core"
import { assert, describe, it } from "vitest"

/** Every list official. */
const official: Scoring.Context = { authorityOf: () => "official", officialLists: "the official lists" }

const result = (
  records: ReadonlyArray<Partial<Intel.IntelRecord> & Pick<Intel.IntelRecord, "category">>,
  context: Scoring.Context = official
): Screening.Result => {
  const a = Scoring.assess(
    records.map((r, i) => ({
      list: "l",
      source: "S",
      address: "0xaa",
      family: "evm",
      reference: `r${i}`,
      listedAt: "2024-01-01",
      ingestedAt: "2024-01-01T00:00:00Z",
      ...r
    })),
    context
  )
  return {
    address: "0xAA",
    score: a.score,
    risk_level: a.band,
    confidence: a.confidence,
    flags: a.flags,
    entity: a.entity,
    signals: a.signals.map(Screening.wireSignal),
    labels: a.labels,
    recommendation: { action: a.action, summary: "", details: "", ai_enhanced: false },
    metadata: {
      version: "v3",
      latency_ms: 0,
      sources_used: 1,
      is_complete: true,
      timestamp: "2024-01-01T00:00:00.000Z",
      chain: { family: "evm", networks: ["ethereum"], normalized: "0xaa" },
      as_of: "2024-01-01"
    }
  }
}

describe("V2 projection", () => {
  it("bands at 80/60/30, with clean only when no risk signal is in force", () => {
    const cases: ReadonlyArray<[number, boolean, V2.Level]> = [
      [100, true, "critical"],
      [80, true, "critical"],
      [79, true, "high"],
      [60, true, "high"],
      [59, true, "medium"],
      [30, true, "medium"],
      [29, true, "low"],
      [0, true, "low"],
      [0, false, "clean"]
    ]
    for (const [score, risk, level] of cases) assert.strictEqual(V2.level(score, risk), level, `${score} ${risk}`)
    assert.deepStrictEqual(V2.priorities, {
      critical: "URGENT",
      high: "HIGH",
      medium: "MEDIUM",
      low: "LOW",
      clean: "ROUTINE"
    })
  })

  it("projects a sanctioned address", () => {
    const data = V2.project(result([{ category: "sanctions", source: "OFAC", entityName: "Tornado Cash" }]), {
      active: [],
      unchecked: []
    })
    assert.deepStrictEqual(data, {
      address: "0xAA",
      entity: { type: "sanctioned", name: "Tornado Cash" },
      risk_assessment: { risk_score: 100, risk_level: "critical" },
      recommendation:
        "IMMEDIATE REVIEW REQUIRED: High-risk entity detected - enhanced due diligence mandatory (Risk Score: 100/100 - SEVERE)",
      classification: "Sanctioned Entity",
      risk_tags: "Sanctioned Entity",
      priority: "URGENT",
      labels: ["OFAC Sanctioned"],
      chains_with_activity: []
    })
    // Without a node nothing was checked: said, so that the empty list is not read as an unused address.
    assert.deepStrictEqual(V2.project(result([])).warnings, [
      "every network: on-chain activity not checked (no node is configured (VIGIL_RPC_URL_<chainId>))"
    ])
  })

  it("projects a clean address as the spec's clean example does, with entity type unknown when no list names it", () => {
    const data = V2.project(result([]))
    assert.deepStrictEqual(
      {
        entity: data.entity,
        level: data.risk_assessment,
        recommendation: data.recommendation,
        classification: data.classification,
        tags: data.risk_tags,
        priority: data.priority,
        labels: data.labels
      },
      {
        entity: { type: "unknown", name: null },
        level: { risk_score: 0, risk_level: "clean" },
        recommendation: "APPROVED: Clean risk profile - standard operations authorized",
        classification: "Clean Entity",
        tags: "Standard Address Profile",
        priority: "ROUTINE",
        labels: []
      }
    )
  })

  it("joins several tags with '; ' and calls a service a service", () => {
    const mixed = V2.project(result([{ category: "mixer" }, { category: "gambling" }]))
    assert.strictEqual(mixed.risk_tags, "Mixer; Gambling")
    assert.strictEqual(mixed.entity.type, "suspicious")
    assert.strictEqual(mixed.classification, "Critical-Risk Entity")
    const exchange = V2.project(result([{ category: "exchange", entityName: "Binance" }]))
    assert.deepStrictEqual(exchange.entity, { type: "service", name: "Binance" })
    assert.strictEqual(exchange.risk_assessment.risk_level, "clean")
  })
  it("projects an unconfirmed sanctions claim as a suspicious entity with its own tag, never as sanctioned", () => {
    const scraped: Scoring.Context = { authorityOf: () => "scraped", officialLists: "the official lists" }
    const data = V2.project(result([{ category: "sanctions", label: "OFAC Sanctioned" }], scraped))
    assert.strictEqual(data.entity.type, "suspicious")
    assert.strictEqual(data.risk_tags, "Sanctions Reported (Unconfirmed)")
    assert.notStrictEqual(data.classification, "Sanctioned Entity")
    assert.strictEqual(data.risk_assessment.risk_level, "high")
  })
})
