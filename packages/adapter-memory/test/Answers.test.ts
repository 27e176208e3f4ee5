/**
 * What core's Answers reads beside a screening and how it answers: no node asked when no evidence is, the activity
 * with details, exposure on request, a cached answer restamped with this answer's time, the v2 answer's activity,
 * and an asynchronous screening's delivery.
 */
import { assert, describe, it } from "@effect/vitest"
import { MemoryIntelIndex } from "@vigil/adapter-memory"
import { Answers, ChainActivity, Engine, Exposure, type Intel, IntelIndex, Instant } from "@vigil/core"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"

// Not 0x01–0x11: those are precompiles and system addresses no list grades.
const LISTED = "0x0000000000000000000000000000000000001001"

/** A node of chain 1 on which every address is active; the addresses read, in order. */
const reads: Array<string> = []
const accounts = Layer.succeed(ChainActivity.AccountReader)({
  chains: [1],
  read: (_, address) => {
    reads.push(address)
    return Effect.succeed({ nonce: 1n, balance: 0n, code: "0x" })
  }
})
/** No node for transfers: exposure reads nothing, and says so. */
const transfers = Layer.succeed(Exposure.TransferReader)({
  chains: [],
  head: () => Effect.die("no node"),
  blockAt: () => Effect.die("no node"),
  transfers: () => Effect.die("no node"),
  decimals: () => Effect.die("no node")
})

const layer = Answers.Answers.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Engine.screening,
      ChainActivity.ChainActivity.layer(ChainActivity.defaultSettings).pipe(Layer.provide(accounts)),
      Exposure.Exposure.layer(Exposure.defaultSettings).pipe(Layer.provide(transfers))
    )
  ),
  Layer.provideMerge(MemoryIntelIndex.layer)
)

/** An official sanctions list naming LISTED, as of 1970-01-01 (the TestClock's day). */
const listed = Effect.gen(function* () {
  const index = yield* IntelIndex.all
  const version: IntelIndex.VersionInfo = {
    list: "sanctions",
    source: "test",
    kind: "address-list",
    mode: "snapshot",
    asOf: "1970-01-01",
    contentHash: "0",
    origin: "test",
    ingestedAt: "1970-01-01T00:00:00.000Z",
    authority: "official"
  }
  const id = yield* index.stage(version)
  const record: Intel.ParsedRecord = { address: LISTED, family: "evm", category: "sanctions", reference: "ref-1" }
  yield* index.append(id, [record])
  yield* index.commit(id, version)
})

describe("Answers", () => {
  it.effect("asks no node unless evidence is asked for; with details, the activity, a cached answer restamped", () =>
    Effect.gen(function* () {
      reads.length = 0
      yield* listed
      const answers = yield* Answers.Answers
      const plain = yield* answers.v3(LISTED, {})
      assert.isUndefined(plain.completed)
      assert.isFalse(plain.hit)
      assert.deepStrictEqual(reads, [], "no node asked")
      assert.strictEqual(plain.result.recommendation.action, "BLOCK")

      yield* TestClock.adjust(5_000)
      const detailed = yield* answers.v3(LISTED, { includeDetails: true })
      assert.deepStrictEqual(reads, [LISTED])
      assert.deepStrictEqual(detailed.completed?.details?.chains_with_activity, ["ethereum"])

      // Cached (a score of 60 or more is kept 10 minutes): restamped with this answer's time.
      yield* TestClock.adjust(5_000)
      const again = yield* answers.v3(LISTED, { includeDetails: true })
      assert.isTrue(again.hit)
      assert.strictEqual(again.completed?.metadata.timestamp, Instant.iso(again.answeredAt))
      assert.notStrictEqual(again.result.metadata.timestamp, again.completed?.metadata.timestamp)
    }).pipe(Effect.provide(layer))
  )

  it.effect("reads exposure on request, for each item of a batch, and says what it could not read", () =>
    Effect.gen(function* () {
      yield* listed
      const answers = yield* Answers.Answers
      const single = yield* answers.v3(LISTED, { exposure: {} })
      assert.isFalse(single.completed?.metadata.exposure?.complete)
      const batch = yield* answers.v3Batch([LISTED, "not an address"], { exposure: {} })
      const [first, second] = batch.results
      assert.isTrue(first !== undefined && "score" in first && first.metadata.exposure?.complete === false)
      assert.isTrue(second !== undefined && "error" in second)
      const without = yield* answers.v3Batch([LISTED], {})
      const [plain] = without.results
      assert.isTrue(plain !== undefined && "score" in plain && plain.metadata.exposure === undefined)
    }).pipe(Effect.provide(layer))
  )

  it.effect("answers v2 with the activity its data states, and an asynchronous screening as delivered", () =>
    Effect.gen(function* () {
      reads.length = 0
      yield* listed
      const answers = yield* Answers.Answers
      const v2 = yield* answers.v2(LISTED)
      assert.deepStrictEqual(v2.activity?.active, ["ethereum"])
      const delivery = yield* answers.delivery(LISTED)
      assert.isTrue(delivery.data.webhook_delivery)
      assert.deepStrictEqual(delivery.data.data.chains_with_activity, ["ethereum"])
      assert.match(delivery.correlationId, /^req_[0-9a-z]+_[0-9a-f]{12}$/)
      assert.strictEqual(delivery.data.timestamp, Instant.iso(delivery.finishedAt))
    }).pipe(Effect.provide(layer))
  )
})
