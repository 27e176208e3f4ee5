/** The behaviour every IntelIndex adapter must show. Each test gets a fresh index from `layer`. */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { type Calibration, Intel, IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer } from "effect"
import { modelOf } from "@vigil/core-test/CalibrationModels.ts"

/** A version of `list` as of `asOf`, as an ingest would describe it. */
export const info = (
  list: string,
  asOf: string,
  overrides: Partial<IntelIndex.VersionInfo> = {}
): IntelIndex.VersionInfo => ({
  list,
  source: "OFAC",
  kind: "test",
  mode: "snapshot",
  asOf,
  contentHash: `hash-${asOf}`,
  origin: "test",
  ingestedAt: `${asOf}T12:00:00.000Z`,
  authority: "official",
  ...overrides
})

const rec = (address: string, extra: Partial<Intel.ParsedRecord> = {}): Intel.ParsedRecord => ({
  address,
  family: "evm",
  category: "sanctions",
  reference: `ref-${address}`,
  ...extra
})

const A = "0x00000000000000000000000000000000000000aa"
const B = "0x00000000000000000000000000000000000000bb"
const C = "0x00000000000000000000000000000000000000cc"

/** Every record of `addresses` as intervals, in a stable order: what answers on any date depend on. */
const intervals = (records: ReadonlyArray<Intel.IntelRecord>) =>
  records.map((r) => `${r.list} ${r.address} ${r.category} ${r.reference} ${r.listedAt}..${r.delistedAt ?? ""}`).sort()

const pool = [A, B, C, "0x00000000000000000000000000000000000000dd", "0x00000000000000000000000000000000000000ee"]

/** Snapshots of one list: distinct dates, each a subset of the pool (some records with a stated listing date). */
const snapshots = fc
  .uniqueArray(fc.integer({ min: 1, max: 28 }), { minLength: 1, maxLength: 5 })
  .chain((days) =>
    fc.tuple(
      fc.constant(days.map((d) => `2025-02-${String(d).padStart(2, "0")}`)),
      fc.array(fc.subarray(pool.map((_, i) => i)), { minLength: days.length, maxLength: days.length }),
      fc.array(fc.boolean(), { minLength: pool.length, maxLength: pool.length })
    )
  )
  .map(([dates, members, stated]) =>
    dates.map((asOf, v) => ({
      asOf,
      records: members[v]!.map((i) => rec(pool[i]!, stated[i] ? { listedAt: "2024-12-25" } : {}))
    }))
  )

/** Registers the IntelIndex contract against an adapter's layer (built anew for every test). */
export const suite = (
  name: string,
  layer: Layer.Layer<IntelIndex.IntelIndex | IntelIndex.Versions | IntelIndex.Administration, unknown>
) =>
  describe(`IntelIndex contract: ${name}`, () => {
    const test = (title: string, body: (index: IntelIndex.All) => Effect.Effect<void, unknown>) =>
      it.effect(title, () =>
        Effect.gen(function* () {
          yield* body(yield* IntelIndex.all)
        }).pipe(Effect.provide(layer))
      )

    const ingest = (
      index: IntelIndex.All,
      version: IntelIndex.VersionInfo,
      records: ReadonlyArray<Intel.ParsedRecord>
    ) =>
      Effect.gen(function* () {
        const id = yield* index.stage(version)
        yield* index.append(id, records.slice(0, 1))
        yield* index.append(id, records.slice(1))
        return yield* index.commit(id, version)
      })

    test("stores committed records with their provenance and dates", (index) =>
      Effect.gen(function* () {
        const outcome = yield* ingest(index, info("ofac", "2024-01-01"), [
          rec(A, {
            listedAt: "2022-08-08",
            entityName: "Tornado Cash",
            entityType: "entity",
            jurisdiction: "US",
            cites: "https://home.treasury.gov/"
          }),
          rec(B)
        ])
        assert.deepStrictEqual(
          { added: outcome.added, delisted: outcome.delisted, unchanged: outcome.unchanged },
          { added: 2, delisted: 0, unchanged: 0 }
        )
        const [a] = yield* index.lookup([A])
        assert.deepStrictEqual(a, {
          list: "ofac",
          source: "OFAC",
          address: A,
          family: "evm",
          category: "sanctions",
          reference: `ref-${A}`,
          jurisdiction: "US",
          entityName: "Tornado Cash",
          entityType: "entity",
          listedAt: "2022-08-08",
          cites: "https://home.treasury.gov/",
          ingestedAt: "2024-01-01T12:00:00.000Z"
        })
        const [b] = yield* index.lookup([B])
        assert.strictEqual(b?.listedAt, "2024-01-01", "without a source date, the version's date")
        assert.deepStrictEqual(yield* index.lookup([C]), [])
      }))

    test("shows nothing of a version until it is committed, and nothing of a discarded one", (index) =>
      Effect.gen(function* () {
        const staged = yield* index.stage(info("ofac", "2024-01-01"))
        yield* index.append(staged, [rec(A)])
        assert.deepStrictEqual(yield* index.lookup([A]), [])
        assert.deepStrictEqual(yield* index.lists, [])
        yield* index.discard(staged)
        assert.deepStrictEqual(yield* index.lookup([A]), [])
        const again = yield* index.stage(info("ofac", "2024-01-01"))
        yield* index.append(again, [rec(B)])
        yield* index.commit(again, { asOf: "2024-01-01", contentHash: "h" })
        assert.deepStrictEqual(yield* index.lookup([A]), [])
        assert.strictEqual((yield* index.lookup([B])).length, 1)
      }))

    test("deletes a list atomically: its records leave lookups, the generation moves, a new list numbers on", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-01-01"), [rec(A), rec(B)])
        yield* ingest(index, info("ofac", "2025-02-01"), [rec(A), rec(B), rec(C)])
        yield* ingest(index, info("labels", "2025-01-01"), [rec(C, { category: "scam" })])
        const before = yield* index.generation
        assert.deepStrictEqual(yield* index.remove("ofac", "2025-03-01T00:00:00.000Z"), {
          list: "ofac",
          version: 2,
          records: 3
        })
        assert.isAbove(yield* index.generation, before)
        assert.deepStrictEqual(yield* index.lookup([A, B]), [])
        assert.deepStrictEqual(
          (yield* index.lookup([C])).map((r) => r.list),
          ["labels"]
        )
        assert.deepStrictEqual(
          (yield* index.lists).map((l) => l.list),
          ["labels"]
        )
        assert.isUndefined(yield* index.remove("ofac", "2025-03-01T00:00:00.000Z"))
        assert.isUndefined(yield* index.remove("nothing", "2025-03-01T00:00:00.000Z"))
        const again = yield* ingest(index, info("ofac", "2025-04-01"), [rec(A)])
        assert.deepStrictEqual([again.version, again.added, again.delisted], [3, 1, 0])
      }))

    test("numbers each list's versions 1, 2, 3…, whatever other lists and failed attempts do", (index) =>
      Effect.gen(function* () {
        const first = yield* ingest(index, info("ofac", "2025-01-01"), [rec(A), rec(B)])
        const other = yield* ingest(index, info("labels", "2025-01-01"), [rec(C)])
        const discarded = yield* index.stage(info("ofac", "2025-02-01"))
        yield* index.discard(discarded)
        const shrunk = yield* index.stage(info("ofac", "2025-02-01"))
        yield* index.append(shrunk, [rec(A)])
        yield* Effect.flip(index.commit(shrunk, { asOf: "2025-02-01", contentHash: "x", maxDelistedShare: 0.2 }))
        const second = yield* ingest(index, info("ofac", "2025-03-01"), [rec(A), rec(B), rec(C)])
        assert.deepStrictEqual([first.version, other.version, second.version], [1, 1, 2])
        assert.deepStrictEqual(
          (yield* index.lists).map((l) => [l.list, l.version]),
          [
            ["labels", 1],
            ["ofac", 2]
          ]
        )
      }))

    test("refuses, inside the commit, a version that would de-list more than its allowed share, applying nothing", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-03-04"), [rec(A), rec(B), rec(C)])
        const staged = yield* index.stage(info("ofac", "2025-11-19"))
        yield* index.append(staged, [rec(A)])
        const refused = yield* Effect.flip(
          index.commit(staged, { asOf: "2025-11-19", contentHash: "shrunk", maxDelistedShare: 0.5 })
        )
        assert.strictEqual(refused._tag, "ShrinkRefused")
        if (refused._tag === "ShrinkRefused") {
          assert.deepStrictEqual([refused.list, refused.active, refused.removed, refused.maxShare], ["ofac", 3, 2, 0.5])
          assert.match(refused.message, /de-list 2 of the 3 active records of ofac \(67%, more than 50%\)/)
        }
        const [status] = yield* index.lists
        assert.deepStrictEqual(
          [status?.asOf, status?.contentHash, status?.active],
          ["2025-03-04", "hash-2025-03-04", 3]
        )
        for (const address of [A, B, C]) assert.isUndefined((yield* index.lookup([address]))[0]?.delistedAt)
        // Within the share, or without a share, the same kind of version is applied.
        const within = yield* index.stage(info("ofac", "2025-11-19"))
        yield* index.append(within, [rec(A), rec(B)])
        const outcome = yield* index.commit(within, { asOf: "2025-11-19", contentHash: "h2", maxDelistedShare: 0.5 })
        assert.strictEqual(outcome.delisted, 1)
      }))

    test("shows a list's latest refused refresh until a version of it is committed after it", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-03-04"), [rec(A), rec(B)])
        yield* ingest(index, info("labels", "2025-03-04"), [rec(C)])
        const refusal = (at: string, message: string) => ({ at, origin: "sdn.xml", message })
        // Each refusal read after it: what an adapter remembers of the reading before must not hide it.
        assert.isFalse("refused" in (yield* index.lists)[1]!)
        yield* index.recordRefusal("ofac", refusal("2025-03-05T08:00:00.000Z", "holds no valid record"))
        assert.deepStrictEqual(
          (yield* index.lists)[1]?.refused,
          refusal("2025-03-05T08:00:00.000Z", "holds no valid record")
        )
        yield* index.recordRefusal("ofac", refusal("2025-03-06T08:00:00.000Z", "would de-list 2 of 2"))
        const shown = yield* index.lists
        assert.deepStrictEqual(
          shown.map((l) => [l.list, "refused" in l]),
          [
            ["labels", false],
            ["ofac", true]
          ]
        )
        assert.deepStrictEqual(shown[1]?.refused, refusal("2025-03-06T08:00:00.000Z", "would de-list 2 of 2"))
        // A version committed since: the list is up to date again.
        yield* ingest(index, info("ofac", "2025-03-07"), [rec(A), rec(B), rec(C)])
        assert.isFalse("refused" in (yield* index.lists)[1]!)
      }))

    test("counts a history version's shrink by the records it leaves no longer active", (index) =>
      Effect.gen(function* () {
        const history = info("usdt", "2025-01-01", { mode: "history" })
        yield* ingest(index, history, [rec(A), rec(B), rec(C)])
        const staged = yield* index.stage(history)
        yield* index.append(staged, [
          rec(A),
          rec(B, { delistedAt: "2025-02-01" }),
          rec(C, { delistedAt: "2025-02-01" })
        ])
        const refused = yield* Effect.flip(
          index.commit(staged, { asOf: "2025-02-02", contentHash: "h", maxDelistedShare: 0.2 })
        )
        assert.strictEqual(refused._tag, "ShrinkRefused")
        assert.strictEqual((yield* index.lists)[0]?.active, 3)
      }))

    test("de-lists what a newer snapshot no longer has, on that snapshot's date, and keeps it as history", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-03-04"), [rec(A, { listedAt: "2022-08-08" }), rec(B)])
        const outcome = yield* ingest(index, info("ofac", "2025-11-19"), [rec(B), rec(C)])
        assert.deepStrictEqual(
          { added: outcome.added, delisted: outcome.delisted, unchanged: outcome.unchanged },
          { added: 1, delisted: 1, unchanged: 1 }
        )
        const [a] = yield* index.lookup([A])
        assert.strictEqual(a?.listedAt, "2022-08-08")
        assert.strictEqual(a?.delistedAt, "2025-11-19")
        assert.isTrue(Intel.activeOn(a!, "2024-06-01"))
        assert.isFalse(Intel.activeOn(a!, "2025-11-22"))
        const [b] = yield* index.lookup([B])
        assert.strictEqual(b?.listedAt, "2025-03-04", "an unchanged record keeps its first date")
        assert.isUndefined(b?.delistedAt)
        const [status] = yield* index.lists
        assert.deepStrictEqual(
          {
            list: status?.list,
            version: status?.version !== undefined,
            asOf: status?.asOf,
            active: status?.active,
            delisted: status?.delisted
          },
          { list: "ofac", version: true, asOf: "2025-11-19", active: 2, delisted: 1 }
        )
      }))

    test("changes its generation with every commit, and only then", (index) =>
      Effect.gen(function* () {
        const start = yield* index.generation
        const id = yield* index.stage(info("ofac", "2025-03-04"))
        yield* index.append(id, [rec(A)])
        assert.strictEqual(yield* index.generation, start, "staging changes nothing readers see")
        yield* index.discard(id)
        assert.strictEqual(yield* index.generation, start, "a discarded version changes nothing")
        yield* ingest(index, info("ofac", "2025-03-04"), [rec(A)])
        const first = yield* index.generation
        assert.notStrictEqual(first, start)
        yield* ingest(index, info("ofac", "2025-11-19"), [rec(B)])
        const second = yield* index.generation
        assert.notStrictEqual(second, first)
        yield* index.lookup([A, B])
        yield* index.lists
        assert.strictEqual(yield* index.generation, second, "reads change nothing")
      }))

    test("lists an address again as a new interval after it was de-listed", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2024-01-01"), [rec(A)])
        yield* ingest(index, info("ofac", "2024-02-01"), [rec(B)])
        yield* ingest(index, info("ofac", "2024-03-01"), [rec(A), rec(B)])
        const intervals = (yield* index.lookup([A])).map((r) => [r.listedAt, r.delistedAt ?? null]).sort()
        assert.deepStrictEqual(intervals, [
          ["2024-01-01", "2024-02-01"],
          ["2024-03-01", null]
        ])
      }))

    test("keeps lists apart: a snapshot of one never de-lists another's records", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2024-01-01"), [rec(A)])
        yield* ingest(index, info("usdt", "2024-01-01", { source: "Tether" }), [
          rec(A, { category: "stablecoin_blacklist", reference: "0xtx" })
        ])
        yield* ingest(index, info("usdt", "2024-02-01", { source: "Tether" }), [])
        const records = yield* index.lookup([A])
        const ofac = records.find((r) => r.list === "ofac")
        const usdt = records.find((r) => r.list === "usdt")
        assert.isUndefined(ofac?.delistedAt)
        assert.strictEqual(usdt?.delistedAt, "2024-02-01")
        assert.deepStrictEqual((yield* index.lists).map((l) => l.list).sort(), ["ofac", "usdt"])
      }))

    test("replaces a history list wholesale with the intervals its version states", (index) =>
      Effect.gen(function* () {
        const history = (asOf: string) => info("usdt", asOf, { mode: "history", source: "Tether" })
        yield* ingest(index, history("2023-01-01"), [
          rec(A, { category: "stablecoin_blacklist", listedAt: "2020-01-01" }),
          rec(B, { category: "stablecoin_blacklist", listedAt: "2021-01-01" })
        ])
        const outcome = yield* ingest(index, history("2023-06-01"), [
          rec(A, { category: "stablecoin_blacklist", listedAt: "2020-01-01", delistedAt: "2023-03-01" }),
          rec(B, { category: "stablecoin_blacklist", listedAt: "2021-01-01" })
        ])
        assert.strictEqual(outcome.version > 0, true)
        const [a] = yield* index.lookup([A])
        assert.strictEqual(a?.delistedAt, "2023-03-01")
        assert.strictEqual((yield* index.lookup([A, B])).length, 2)
      }))

    test("looks up many addresses at once and returns every matching record", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2024-01-01"), [
          rec(A),
          rec(A, { category: "mixer", reference: "other" }),
          rec(B)
        ])
        const found = yield* index.lookup([A, B, C])
        assert.strictEqual(found.length, 3)
        assert.deepStrictEqual(yield* index.lookup([]), [])
      }))

    const commitAll = (
      index: IntelIndex.All,
      versions: ReadonlyArray<{ readonly asOf: string; readonly records: ReadonlyArray<Intel.ParsedRecord> }>
    ) => Effect.forEach(versions, (v) => ingest(index, info("ofac", v.asOf, { contentHash: v.asOf }), v.records))

    it("gives the same intervals whatever order a list's snapshots arrive in (backfill = in-order ingest)", async () => {
      await fc.assert(
        fc.asyncProperty(snapshots, fc.infiniteStream(fc.nat()), async (versions, order) => {
          const shuffled = [...versions]
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = order.next().value % (i + 1)
            ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
          }
          const byDate = [...versions].sort((a, b) => (a.asOf < b.asOf ? -1 : 1))
          const run = (vs: typeof versions) =>
            Effect.runPromise(
              Effect.gen(function* () {
                const index = yield* IntelIndex.all
                yield* commitAll(index, vs)
                const lists = yield* index.lists
                return {
                  records: intervals(yield* index.lookup(pool)),
                  asOf: lists[0]?.asOf,
                  since: lists[0]?.since
                }
              }).pipe(Effect.scoped, Effect.provide(layer)) as Effect.Effect<
                { records: Array<string>; asOf: string | undefined; since: string | undefined },
                never
              >
            )
          assert.deepStrictEqual(await run(shuffled), await run(byDate))
        }),
        { numRuns: 25 }
      )
    }, 60_000)

    test("rolls a list back to what its earlier versions made it, and refuses to roll back its only version", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-01-01"), [rec(A), rec(B)])
        const afterFirst = intervals(yield* index.lookup(pool))
        yield* ingest(index, info("ofac", "2025-02-01", { authority: "curated" }), [rec(B), rec(C)])
        const before = yield* index.generation
        const outcome = yield* index.rollback("ofac", "2025-02-02T00:00:00.000Z")
        assert.deepStrictEqual(outcome, {
          list: "ofac",
          version: 2,
          current: 1,
          asOf: "2025-01-01",
          active: 2,
          delisted: 0
        })
        assert.isAbove(yield* index.generation, before)
        assert.deepStrictEqual(intervals(yield* index.lookup(pool)), afterFirst)
        const [status] = yield* index.lists
        assert.deepStrictEqual(
          [status?.version, status?.asOf, status?.authority, status?.active],
          [1, "2025-01-01", "official", 2]
        )
        const refused = yield* Effect.flip(index.rollback("ofac", "2025-02-03T00:00:00.000Z"))
        assert.strictEqual(refused._tag, "AmendRefused")
        assert.include(refused.message, "only one version")
        assert.deepStrictEqual(intervals(yield* index.lookup(pool)), afterFirst)
        assert.strictEqual(
          (yield* Effect.flip(index.rollback("none", "2025-02-03T00:00:00.000Z")))._tag,
          "AmendRefused"
        )
        // The next version numbers on after the withdrawn one.
        const next = yield* ingest(index, info("ofac", "2025-03-01"), [rec(A), rec(B)])
        assert.strictEqual(next.version, 3)
      }))

    test("corrects a version's date: the intervals become those of the corrected history", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-01-01"), [rec(A)])
        yield* ingest(index, info("ofac", "2025-03-01"), [rec(A), rec(B)])
        const outcome = yield* index.redate("ofac", 2, "2025-02-01", "2025-03-02T00:00:00.000Z")
        assert.deepStrictEqual([outcome.version, outcome.current, outcome.asOf], [2, 2, "2025-02-01"])
        assert.deepStrictEqual(intervals(yield* index.lookup([B])), [`ofac ${B} sanctions ref-${B} 2025-02-01..`])
        // Moved before the other version, it becomes the older one: B is de-listed on the first's date.
        const moved = yield* index.redate("ofac", 2, "2024-12-01", "2025-03-03T00:00:00.000Z")
        assert.deepStrictEqual([moved.current, moved.asOf], [1, "2025-01-01"])
        assert.deepStrictEqual(intervals(yield* index.lookup([A, B])), [
          `ofac ${A} sanctions ref-${A} 2024-12-01..`,
          `ofac ${B} sanctions ref-${B} 2024-12-01..2025-01-01`
        ])
        assert.strictEqual((yield* index.lists)[0]?.since, "2024-12-01")
        assert.deepStrictEqual((yield* index.lists)[0]?.versions, ["2024-12-01", "2025-01-01"])
        const refused = yield* Effect.flip(index.redate("ofac", 7, "2025-01-01", "2025-03-03T00:00:00.000Z"))
        assert.include(refused.message, "no version 7")
      }))

    test("rebuilds a list made again after its deletion from its new versions only", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2025-01-01"), [rec(A)])
        yield* index.remove("ofac", "2025-01-02T00:00:00.000Z")
        yield* ingest(index, info("ofac", "2025-03-01"), [rec(B)])
        yield* ingest(index, info("ofac", "2025-02-01"), [rec(B), rec(C)])
        assert.deepStrictEqual(intervals(yield* index.lookup(pool)), [
          `ofac ${B} sanctions ref-${B} 2025-02-01..`,
          `ofac ${C} sanctions ref-${C} 2025-02-01..2025-03-01`
        ])
      }))

    test("keeps the authority of the version ingested last as the list's", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("mine", "2025-02-01", { authority: "curated" }), [rec(A)])
        assert.strictEqual((yield* index.lists)[0]?.authority, "curated")
        yield* ingest(index, info("mine", "2025-01-01", { authority: "official" }), [rec(A)])
        const [status] = yield* index.lists
        assert.deepStrictEqual(
          [status?.authority, status?.asOf, status?.since, status?.versions],
          ["official", "2025-02-01", "2025-01-01", ["2025-01-01", "2025-02-01"]]
        )
        // Two versions of one date are one date; a withdrawn version's is gone.
        yield* ingest(index, info("mine", "2025-02-01", { authority: "official", contentHash: "again" }), [rec(A)])
        assert.deepStrictEqual((yield* index.lists)[0]?.versions, ["2025-01-01", "2025-02-01"])
        yield* index.rollback("mine", "2025-03-01T00:00:00.000Z")
        yield* index.rollback("mine", "2025-03-02T00:00:00.000Z")
        assert.deepStrictEqual((yield* index.lists)[0]?.versions, ["2025-01-01"])
      }))

    test("appends large batches", (index) =>
      Effect.gen(function* () {
        const many = Array.from({ length: 5_000 }, (_, i) => rec(`0x${i.toString(16).padStart(40, "0")}`))
        const outcome = yield* ingest(index, info("big", "2024-01-01"), many)
        assert.strictEqual(outcome.added, 5_000)
        assert.strictEqual((yield* index.lookup([many[4_999]!.address])).length, 1)
      }))

    test("reads every record in address pages, de-listed ones included", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("ofac", "2024-01-01"), [rec(C), rec(A), rec(B)])
        yield* ingest(index, info("ofac", "2024-02-01"), [rec(A), rec(C)])
        yield* ingest(index, info("scam", "2024-01-01", { authority: "scraped" }), [rec(A, { category: "scam" })])
        const first = yield* index.scan("", 2)
        assert.deepStrictEqual(first.map((r) => `${r.address} ${r.list} ${r.delistedAt ?? ""}`).sort(), [
          `${A} ofac `,
          `${A} scam `,
          `${B} ofac 2024-02-01`
        ])
        assert.deepStrictEqual(
          (yield* index.scan(B, 2)).map((r) => r.address),
          [C]
        )
        assert.deepStrictEqual(yield* index.scan(C, 2), [])
      }))

    test("stores calibration models numbered in order, and each one moves the generation", (index) =>
      Effect.gen(function* () {
        const before = yield* index.generation
        const model = (asOf: string, weight: number): Calibration.Model => ({
          asOf,
          fittedAt: `${asOf}T08:00:00.000Z`,
          features: ["bias", "list:a"],
          weights: [-1.25, weight],
          l2: 1,
          training: { examples: 10, positives: 4 },
          evaluation: {
            examples: 3,
            positives: 1,
            brier: 0.1234,
            brierRules: 0.5,
            block: { flagged: 1, precision: 1, recall: 1 },
            blockRules: { flagged: 3, precision: 0.333, recall: 1 },
            review: { flagged: 1, precision: 1, recall: 1 },
            reviewRules: { flagged: 3, precision: 0.333, recall: 1 },
            reliability: [{ from: 0.9, to: 1, count: 1, predicted: 0.95, observed: 1 }]
          }
        })
        const first = yield* index.storeModel(model("2025-01-01", 2.5))
        const afterFirst = yield* index.generation
        assert.notStrictEqual(afterFirst, before)
        const second = yield* index.storeModel(model("2024-06-01", -0.75))
        assert.notStrictEqual(yield* index.generation, afterFirst)
        assert.deepStrictEqual([first.version, second.version], [1, 2])
        assert.deepStrictEqual(yield* index.models, [
          { version: 1, ...model("2025-01-01", 2.5) },
          { version: 2, ...model("2024-06-01", -0.75) }
        ])
      }))

    test("answers a day between two snapshots readably: the finding first, gaps grouped, the de-listing between versions", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("sdn", "2025-03-04"), [rec(A), rec(B)])
        yield* ingest(index, info("sdn", "2025-11-19"), [rec(B)])
        for (let i = 0; i < 68; i++)
          yield* ingest(index, info(`labels-${String(i).padStart(2, "0")}`, "2025-12-01", { authority: "scraped" }), [
            rec(C, { category: "phishing" })
          ])
        // A history list states its de-listing dates; they stand.
        yield* ingest(index, info("events", "2025-01-01", { kind: "usdt-events", mode: "history" }), [
          rec(B, { category: "stablecoin_blacklist", listedAt: "2024-05-01", delistedAt: "2025-07-09" })
        ])
        const screening = yield* Effect.provide(
          Effect.service(Screening.Screening),
          Screening.Screening.layer.pipe(Layer.provide(Layer.succeed(IntelIndex.IntelIndex)(index)))
        )
        const r = yield* screening.screen(A, { asOf: "2025-06-01", includeDetails: true })
        assert.deepStrictEqual(r.metadata.warnings, [
          "sdn: this address's listing ended between its versions of 2025-03-04 and 2025-11-19, so whether it was listed on 2025-06-01 is not known",
          "68 lists have no stored version on or before 2025-06-01 (their oldest is of 2025-12-01): labels-00, labels-01, labels-02 and 65 more; an entry they de-listed before 2025-12-01 is not known, so this answer cannot say the address was not on them on 2025-06-01"
        ])
        assert.match(
          r.recommendation.details,
          /^2025-06-01 falls between two stored versions of sdn \(2025-03-04 and 2025-11-19\)/
        )
        assert.include(
          r.recommendation.details,
          "precedes the oldest stored version of 68 lists (labels-00, labels-01, labels-02 and 65 more)"
        )
        const [signal] = r.signals
        assert.isUndefined(signal?.evidence.delistedAt)
        assert.deepStrictEqual(signal?.evidence.delistedBetween, {
          lastListed: "2025-03-04",
          firstUnlisted: "2025-11-19"
        })
        assert.deepStrictEqual(
          r.details?.records.map((x) => [x.list, x.delistedAt ?? null, x.delistedBetween ?? null]),
          [["sdn", null, { lastListed: "2025-03-04", firstUnlisted: "2025-11-19" }]]
        )
        const { details: _details, ...answer } = r
        assert.isBelow(new TextEncoder().encode(JSON.stringify(answer)).length, 4096)

        const frozen = yield* screening.screen(B, { asOf: "2025-06-01" })
        const stated = frozen.signals.find((x) => x.evidence.list === "events")
        assert.strictEqual(stated?.evidence.delistedAt, "2025-07-09")
        assert.isUndefined(stated?.evidence.delistedBetween)
      }))

    test("grades an answer with the model of its day whatever is ingested later, and its confidence never reads as the opposite of its band", (index) =>
      Effect.gen(function* () {
        yield* ingest(index, info("scam-feed", "2025-11-01", { authority: "scraped" }), [
          rec(A, { category: "phishing" })
        ])
        yield* ingest(index, info("sdn", "2025-11-01"), [rec(B)])
        // The scam feed is almost never borne out: p about 0.01.
        yield* index.storeModel({
          ...modelOf("2025-12-01", ["bias", "list:scam-feed"], [0, -4.6]),
          fittedAt: "2025-12-02T08:00:00.000Z"
        })
        // An operator's own list of a later day: it cannot vouch for 2025-12-01, but the model of that day stands.
        yield* ingest(index, info("ours", "2026-01-10", { authority: "curated" }), [rec(C)])
        const screening = yield* Effect.provide(
          Effect.service(Screening.Screening),
          Screening.Screening.layer.pipe(Layer.provide(Layer.succeed(IntelIndex.IntelIndex)(index)))
        )
        for (const asOf of ["2025-12-01", "2026-02-01"]) {
          const r = yield* screening.screen(A, { includeDetails: true, asOf })
          assert.isTrue(r.recommendation.ai_enhanced, `graded as of ${asOf}`)
          assert.deepInclude(r.details?.calibration, {
            model: 1,
            model_as_of: "2025-12-01",
            fitted_at: "2025-12-02T08:00:00.000Z",
            probability: 0.01,
            rule_score: 90,
            score: 65
          })
          assert.strictEqual(r.risk_level, "high")
          assert.include(r.recommendation.details, "Calibration (model 1, fitted on the lists as of 2025-12-01)")
        }
        // Once every list can vouch the answer is complete: high, REVIEW, and its confidence is how far its lists
        // are trusted, not the model's 0.01.
        const today = yield* screening.screen(A, { asOf: "2026-02-01" })
        assert.deepStrictEqual(
          [today.metadata.is_complete, today.recommendation.action, today.confidence],
          [true, "REVIEW", 0.75]
        )
        // As of 2025-12-01 the later list cannot vouch: incomplete, REVIEW, confidence 0, graded all the same.
        const then = yield* screening.screen(A, { asOf: "2025-12-01" })
        assert.deepStrictEqual(
          [then.metadata.is_complete, then.recommendation.action, then.confidence, then.score],
          [false, "REVIEW", 0, 65]
        )
      }))
  })
