/**
 * Screening with a calibration model (fast-check): whatever lists name an address and whatever the model weighs,
 * an official sanctions match stays BLOCK, an address no list names for a risk is not raised, a listed address is
 * never ALLOW, the score moves only within the documented bounds, and `as_of` screens with the model of that day.
 */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { MemoryIntelIndex } from "@vigil/adapter-memory"
import { Calibration, type Intel, IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer } from "effect"
import { modelOf } from "@vigil/core-test/CalibrationModels.ts"

// Not 0x01–0x03: those are precompiles, system addresses no list grades.
const pool = [1, 2, 3].map((n) => `0x${(0x1000 + n).toString(16).padStart(40, "0")}`)
const day = (offset: number) => new Date(Date.UTC(2025, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10)

interface List {
  readonly authority: Intel.Authority
  readonly category: Intel.Category
  readonly named: ReadonlyArray<number>
}

const list: fc.Arbitrary<List> = fc.record({
  authority: fc.constantFrom<Intel.Authority>("official", "curated", "scraped"),
  category: fc.constantFrom<Intel.Category>("sanctions", "phishing", "scam", "mixer", "gambling", "exchange"),
  named: fc.subarray([0, 1, 2], { minLength: 1 })
})

const featureNames = [
  "agreement",
  "age",
  "positive",
  "list:list-0",
  "list:list-1",
  "list:list-2",
  "signal:phishing",
  "signal:scam",
  "signal:sanctions_reported"
]

/** A model of `asOf` with these weights (bias first, then {@link featureNames}). */
const model = (asOf: string, weights: ReadonlyArray<number>): Calibration.Model =>
  modelOf(asOf, ["bias", ...featureNames], weights)

const weights = fc.array(fc.double({ min: -20, max: 20, noNaN: true }), {
  minLength: featureNames.length + 1,
  maxLength: featureNames.length + 1
})

/** Stores the lists (one version each, on day 0) and the models. */
const store = (lists: ReadonlyArray<List>, models: ReadonlyArray<Calibration.Model>) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.all
    for (const [i, l] of lists.entries()) {
      const version: IntelIndex.VersionInfo = {
        list: `list-${i}`,
        source: `source-${i}`,
        kind: "address-list",
        mode: "snapshot",
        asOf: day(0),
        contentHash: `${i}`,
        origin: "test",
        ingestedAt: `${day(0)}T12:00:00.000Z`,
        authority: l.authority
      }
      const id = yield* index.stage(version)
      yield* index.append(
        id,
        l.named.map((n): Intel.ParsedRecord => ({
          address: pool[n]!,
          family: "evm",
          category: l.category,
          reference: `ref-${n}`
        }))
      )
      yield* index.commit(id, version)
    }
    for (const m of models) yield* index.storeModel(m)
  })

const layer = Screening.Screening.layer.pipe(Layer.provideMerge(MemoryIntelIndex.layer))

describe("screening with a calibration model", () => {
  it("keeps official sanctions at BLOCK, never raises an address no list names for a risk, never makes a listed one ALLOW, moves within bounds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(list, { minLength: 1, maxLength: 3 }), weights, async (lists, w) => {
        await Effect.runPromise(
          Effect.gen(function* () {
            yield* store(lists, [model(day(0), w)])
            const screening = yield* Screening.Screening
            for (const [n, address] of pool.entries()) {
              const naming = lists.filter((l) => l.named.includes(n))
              const calibrated = yield* screening.screen(address, { asOf: day(5) })
              const rules = yield* screening.screen(address, { asOf: day(5), agentic: false })
              assert.isFalse(rules.recommendation.ai_enhanced)
              const risky = naming.filter((l) => l.category !== "exchange")
              const sanctioned = naming.some((l) => l.authority === "official" && l.category === "sanctions")
              if (sanctioned) {
                assert.strictEqual(calibrated.recommendation.action, "BLOCK")
                assert.isAtLeast(calibrated.score, 85)
              }
              if (risky.length === 0) {
                assert.strictEqual(calibrated.score, rules.score)
                assert.strictEqual(calibrated.risk_level, rules.risk_level)
              } else {
                assert.notStrictEqual(calibrated.recommendation.action, "ALLOW")
              }
              assert.isAtMost(calibrated.score, rules.score + Calibration.bounds.raise)
              assert.isAtLeast(calibrated.score, rules.score - Calibration.bounds.lower)
              // The calibration moves the score, never the confidence: it cannot read as the opposite of the band.
              assert.strictEqual(calibrated.confidence, rules.confidence)
              // Graded exactly when the answer rests on scraped labels alone.
              const graded = risky.length > 0 && naming.every((l) => l.authority === "scraped")
              assert.strictEqual(calibrated.recommendation.ai_enhanced, graded)
              if (!graded) assert.deepStrictEqual(calibrated.score, rules.score)
              if (graded) assert.include(calibrated.recommendation.details, "Calibration (model 1")
            }
          }).pipe(Effect.provide(layer))
        )
      }),
      { numRuns: 150 }
    )
  })

  it("screens a day with the model of that day: none before the first, then the newest stored on or before it", async () => {
    const lists: ReadonlyArray<List> = [{ authority: "scraped", category: "phishing", named: [0] }]
    const confirming = [0, 0, 0, 0, 10, 0, 0, 0, 0, 0]
    const refuting = [0, 0, 0, 0, -10, 0, 0, 0, 0, 0]
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* store(lists, [model(day(10), confirming), model(day(100), refuting)])
        const screening = yield* Screening.Screening
        const at = (d: number) => screening.screen(pool[0]!, { asOf: day(d), includeDetails: true })
        const before = yield* at(5)
        assert.isFalse(before.recommendation.ai_enhanced)
        assert.strictEqual(before.score, 90)
        assert.isUndefined(before.details?.calibration)
        const first = yield* at(50)
        assert.deepInclude(first.details?.calibration, { model: 1, probability: 0.99, rule_score: 90, score: 100 })
        assert.strictEqual(first.details?.calibration?.model_as_of, day(10))
        // Confidence is how far the answer's lists are trusted (a scraped phishing label), not the model's probability.
        assert.strictEqual(first.confidence, 0.75)
        const second = yield* at(100)
        assert.deepInclude(second.details?.calibration, { model: 2, probability: 0.01, rule_score: 90, score: 65 })
        assert.strictEqual(second.confidence, 0.75, "not 0.01 beside a high, REVIEW answer")
        assert.strictEqual(second.recommendation.action, "REVIEW")
        assert.include(second.recommendation.details, "moves the score from 90 to 65")
        assert.strictEqual((yield* screening.screen(pool[0]!, { asOf: day(100), agentic: false })).score, 90)
      }).pipe(Effect.provide(layer))
    )
  })
})

describe("the ground truth of calibration", () => {
  /** A list of `publisher` naming `addresses`, each entry citing `cites` when given. */
  const ingestList = (
    list: string,
    publisher: string,
    authority: Intel.Authority,
    addresses: ReadonlyArray<string>,
    cites?: string
  ) =>
    Effect.gen(function* () {
      const index = yield* IntelIndex.all
      const version: IntelIndex.VersionInfo = {
        list,
        source: publisher,
        kind: authority === "scraped" ? "labels" : "graphsense",
        mode: "snapshot",
        asOf: day(0),
        contentHash: list,
        origin: "test",
        ingestedAt: `${day(0)}T12:00:00.000Z`,
        authority
      }
      const id = yield* index.stage(version)
      yield* index.append(
        id,
        addresses.map((address): Intel.ParsedRecord => ({
          address,
          family: "evm",
          category: "phishing",
          reference: list,
          ...(cites === undefined ? {} : { cites })
        }))
      )
      yield* index.commit(id, version)
    })

  const addresses = Array.from({ length: 40 }, (_, i) => `0x${(0x2000 + i).toString(16).padStart(40, "0")}`)

  it("does not count a curated pack that copies a scraped list as the truth of the addresses that list names", async () => {
    const examples = await Effect.runPromise(
      Effect.gen(function* () {
        yield* ingestList("feed", "FeedCo", "scraped", addresses)
        // A curated pack re-publishing the feed (its tags cite it), and one with its own evidence for a few.
        yield* ingestList("pack-copy", "GraphSense", "curated", addresses.slice(0, 30), "https://feedco.example/list")
        yield* ingestList("pack-own", "GraphSense", "curated", addresses.slice(25, 35), "https://court.example/case/1")
        return yield* Calibration.examplesOn(day(1))
      }).pipe(Effect.provide(MemoryIntelIndex.layer))
    )
    const byAddress = new Map(examples.map((e) => [e.address, e]))
    // Named by the copy alone: no truth, said as copied.
    for (const a of addresses.slice(0, 25)) assert.deepInclude(byAddress.get(a), { truth: false, copied: true }, a)
    // Named by a pack on its own word: truth.
    for (const a of addresses.slice(25, 35)) assert.deepInclude(byAddress.get(a), { truth: true, copied: false }, a)
    // Named by no reviewed list: neither.
    for (const a of addresses.slice(35)) assert.deepInclude(byAddress.get(a), { truth: false, copied: false }, a)
  })

  it("ties a citation to the lists a declared tie names, beside the publisher's own", async () => {
    const provenance: Calibration.Provenance = {
      ties: [{ cites: "scamdb.example", lists: ["feed"], why: "FeedCo imports ScamDB" }]
    }
    const run = (p?: Calibration.Provenance) =>
      Effect.runPromise(
        Effect.gen(function* () {
          yield* ingestList("feed", "FeedCo", "scraped", addresses)
          yield* ingestList("pack", "GraphSense", "curated", addresses.slice(0, 10), "https://scamdb.example/")
          return yield* Calibration.examplesOn(day(1), p)
        }).pipe(Effect.provide(MemoryIntelIndex.layer))
      )
    assert.strictEqual((await run()).filter((e) => e.truth).length, 10, "without the tie, the pack is independent")
    const tiedOff = await run(provenance)
    assert.strictEqual(tiedOff.filter((e) => e.truth).length, 0)
    assert.strictEqual(tiedOff.filter((e) => e.copied === true).length, 10)
  })
})
