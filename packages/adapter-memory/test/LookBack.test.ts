/**
 * Screening a past day (fast-check): whatever lists and versions are stored, a day before a snapshot list's oldest
 * version, or strictly between two of its versions that differ on the address, is never answered complete, and
 * never `ALLOW`; any other day is. A list that carries its whole history (`usdt-events`) covers any day.
 */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { MemoryIntelIndex } from "@vigil/adapter-memory"
import { type Intel, IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer } from "effect"

// Not 0x01–0x04: those are precompiles, system addresses answered as what they are.
const pool = [1, 2, 3, 4].map((n) => `0x${(0x1000 + n).toString(16).padStart(40, "0")}`)
const day = (offset: number) => new Date(Date.UTC(2024, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10)

/** One stored list: its kind, and its versions (ascending days, each naming some of the pool). */
interface Stored {
  readonly kind: "address-list" | "usdt-events"
  readonly category: "sanctions" | "scam"
  readonly versions: ReadonlyArray<{ readonly day: number; readonly named: ReadonlyArray<number> }>
}

const stored: fc.Arbitrary<Stored> = fc.record({
  kind: fc.constantFrom("address-list" as const, "usdt-events" as const),
  category: fc.constantFrom("sanctions" as const, "scam" as const),
  versions: fc
    .uniqueArray(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 3 })
    .chain((days) =>
      fc.tuple(
        ...[...days]
          .sort((a, b) => a - b)
          .map((d) => fc.record({ day: fc.constant(d), named: fc.subarray([0, 1, 2, 3], { minLength: 1 }) }))
      )
    )
})

/** Stores the lists, then screens `address` on `asOf`. */
const screen = (lists: ReadonlyArray<Stored>, address: string, asOf: string) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.all
    for (const [i, list] of lists.entries()) {
      for (const v of list.versions) {
        const version: IntelIndex.VersionInfo = {
          list: `list-${i}`,
          source: "test",
          kind: list.kind,
          mode: "snapshot",
          asOf: day(v.day),
          contentHash: `${i}-${v.day}`,
          origin: "test",
          ingestedAt: `${day(v.day)}T12:00:00.000Z`,
          authority: "official"
        }
        const id = yield* index.stage(version)
        yield* index.append(
          id,
          v.named.map((n): Intel.ParsedRecord => ({
            address: pool[n]!,
            family: "evm",
            category: list.category,
            reference: `ref-${n}`
          }))
        )
        yield* index.commit(id, version)
      }
    }
    return yield* (yield* Screening.Screening).screen(address, { asOf })
  }).pipe(Effect.provide(Screening.Screening.layer.pipe(Layer.provideMerge(MemoryIntelIndex.layer))))

describe("screening a past day", () => {
  it("is incomplete and never ALLOW before a snapshot list's oldest version, complete once every one covers it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stored, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: -100, max: 800 }),
        async (lists, who, when) => {
          const address = pool[who] ?? `0x${"e".repeat(40)}`
          const asOf = day(when)
          const answer = await Effect.runPromise(screen(lists, address, asOf))
          const snapshots = lists.filter((l) => l.kind !== "usdt-events")
          const blind = snapshots.filter((l) => day(l.versions[0]!.day) > asOf)
          // Strictly between two versions whose membership of this address differs, its state that day is unknown.
          const undated = snapshots.filter((l) =>
            l.versions.some((v, i) => {
              const next = l.versions[i + 1]
              return (
                next !== undefined &&
                day(v.day) < asOf &&
                asOf < day(next.day) &&
                v.named.includes(who) !== next.named.includes(who)
              )
            })
          )
          const doubtful = blind.length + undated.length
          assert.strictEqual(answer.metadata.is_complete, doubtful === 0, JSON.stringify({ lists, who, asOf }))
          if (doubtful > 0) {
            assert.notInclude(["ALLOW", "ALLOW_CAUTIOUS"], answer.recommendation.action)
            // One line per record in doubt, and one per oldest-version date of the lists that cannot vouch.
            const lines = undated.length + new Set(blind.map((l) => l.versions[0]!.day)).size
            assert.strictEqual(answer.metadata.warnings?.length, lines, JSON.stringify({ lists, who, asOf }))
          }
        }
      ),
      { numRuns: 150 }
    )
  })
})
