/**
 * The hot lanes keep hand-written encoders of the v3 and v2 answers (a result serialised once, its latency and
 * time filled in per answer): whatever the lists say of an address and however it is screened, what they write is
 * what the endpoints' success Schemas encode (fast-check over lists, options, cache hits and times).
 */
import { fc } from "@fast-check/vitest"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { type Answers, type ApiKeyStore, Engine, type Intel, IntelIndex, Instant, Intelligence, V2 } from "@vigil/core"
import { IntelHandlers, Schemas } from "@vigil/adapter-http"
import { Effect, Layer, Schema } from "effect"
import { assert, describe, it } from "vitest"

// Not 0x01–0x11: precompiles and system addresses no list grades.
const pool = [1, 2, 3].map((n) => `0x${(0x2000 + n).toString(16).padStart(40, "0")}`)

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

const store = (lists: ReadonlyArray<List>) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.all
    for (const [i, l] of lists.entries()) {
      const version: IntelIndex.VersionInfo = {
        list: `list-${i}`,
        source: `source-${i}`,
        kind: "address-list",
        mode: "snapshot",
        asOf: "2025-01-01",
        contentHash: `${i}`,
        origin: "test",
        ingestedAt: "2025-01-01T12:00:00.000Z",
        authority: l.authority
      }
      const id = yield* index.stage(version)
      yield* index.append(
        id,
        l.named.map((n): Intel.ParsedRecord => ({
          address: pool[n]!,
          family: "evm",
          category: l.category,
          reference: `ref-${i}-${n}`
        }))
      )
      yield* index.commit(id, version)
    }
  })

const encodeV3 = Schema.encodeSync(Schemas.V3Result)
const encodeV2 = Schema.encodeSync(Schemas.V2Result)
const client: ApiKeyStore.ApiKeyRecord = {
  id: "k",
  name: 'Acme "quoted" \u2028',
  hash: "00",
  qps: 1,
  daily: 1,
  monthly: 1,
  createdAt: "2025-01-01T00:00:00.000Z"
}

describe("the hot lanes' encoders", () => {
  it("write what the success Schemas encode, for fresh and cached results alike", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(list, { maxLength: 3 }),
        fc.record({
          includeDetails: fc.boolean(),
          agentic: fc.boolean(),
          hit: fc.boolean(),
          latency: fc.nat(100_000),
          answeredAt: fc.integer({ min: Date.UTC(2025, 0, 2), max: Date.UTC(2030, 0, 1) })
        }),
        async (lists, o) => {
          await Effect.runPromise(
            Effect.gen(function* () {
              yield* store(lists)
              const intelligence = yield* Intelligence.Intelligence
              for (const address of pool) {
                const screened = yield* intelligence.single(address, {
                  policy: "v3",
                  includeDetails: o.includeDetails,
                  agentic: o.agentic,
                  asOf: "2025-01-01"
                })
                const answer: Answers.V3Answer = {
                  ...screened,
                  hit: o.hit,
                  started: o.answeredAt - o.latency,
                  answeredAt: o.answeredAt
                }
                const v3 = JSON.parse(IntelHandlers.hotEncoders.v3Json(answer))
                assert.deepStrictEqual(v3, encodeV3(Intelligence.restamped(answer)))
                const v2 = JSON.parse(IntelHandlers.hotEncoders.v2Json(answer, client))
                assert.deepStrictEqual(
                  v2,
                  encodeV2({
                    success: true,
                    data: V2.project(answer.result),
                    message: V2.processedMessage,
                    timestamp: Instant.iso(answer.answeredAt),
                    client: client.name
                  })
                )
              }
            }).pipe(
              Effect.provide(Engine.screening.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: ":memory:" }))))
            )
          )
        }
      ),
      { numRuns: 60 }
    )
  })
})
