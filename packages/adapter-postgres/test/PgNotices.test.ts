/**
 * A reading remembered while notices are heard (`PgNotices.remembered`): the calls that come while it is read wait
 * for that one reading, unless a notice came since it began or nothing is heard; a reading that fails is not kept.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import { assert, describe, it } from "vitest"
import * as PgNotices from "../src/PgNotices.ts"

/** A listener's state set by the test: whether it listens, and the notices it heard. */
const listener = () => {
  const state = { count: 0, listening: true }
  const heard: PgNotices.Heard = {
    count: () => state.count,
    listening: () => state.listening,
    announce: Effect.void,
    forget: () => {
      state.count++
    }
  }
  return { state, heard }
}

/** A reading held open until the test lets it answer: how many were started, and each one's gate. */
const gatedReading = () => {
  const gates: Array<Deferred.Deferred<number, string>> = []
  const read = Effect.suspend(() => {
    const gate = Deferred.makeUnsafe<number, string>()
    gates.push(gate)
    return Deferred.await(gate)
  })
  return { gates, read }
}

/** Lets the started fibers run up to their first wait. */
const settle = Effect.yieldNow.pipe(Effect.repeat({ times: 20 }))

describe("PostgreSQL: a remembered reading", () => {
  it("is read once for every call that comes while it is read, and then given from memory", () =>
    Effect.gen(function* () {
      const { heard } = listener()
      const { gates, read } = gatedReading()
      const remembered = PgNotices.remembered(heard, read)
      const waiting = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.forkChild(remembered))
      yield* settle
      assert.strictEqual(gates.length, 1, "one reading for twenty calls")
      yield* Deferred.succeed(gates[0]!, 7)
      const got = yield* Effect.forEach(waiting, Fiber.join)
      assert.deepStrictEqual(
        got,
        Array.from({ length: 20 }, () => 7)
      )
      assert.strictEqual(yield* remembered, 7)
      assert.strictEqual(gates.length, 1, "given from memory afterwards")
    }).pipe(Effect.runPromise))

  it("is read again for a call after a notice, even while an earlier reading is under way", () =>
    Effect.gen(function* () {
      const { state, heard } = listener()
      const { gates, read } = gatedReading()
      const remembered = PgNotices.remembered(heard, read)
      const before = yield* Effect.forkChild(remembered)
      yield* settle
      state.count++
      const after = yield* Effect.forkChild(remembered)
      yield* settle
      assert.strictEqual(gates.length, 2, "the call after the notice does not wait for the reading begun before it")
      yield* Deferred.succeed(gates[1]!, 2)
      yield* Deferred.succeed(gates[0]!, 1)
      assert.strictEqual(yield* Fiber.join(before), 1)
      assert.strictEqual(yield* Fiber.join(after), 2)
      // The later reading is kept, though the earlier one ended after it: the next call is answered from memory.
      assert.strictEqual(yield* remembered, 2)
      assert.strictEqual(gates.length, 2)
    }).pipe(Effect.runPromise))

  it("is read by every call while nothing is heard", () =>
    Effect.gen(function* () {
      const { state, heard } = listener()
      state.listening = false
      const { gates, read } = gatedReading()
      const remembered = PgNotices.remembered(heard, read)
      const waiting = yield* Effect.forEach(Array.from({ length: 3 }), () => Effect.forkChild(remembered))
      yield* settle
      assert.strictEqual(gates.length, 3)
      for (const [i, gate] of gates.entries()) yield* Deferred.succeed(gate, i)
      assert.deepStrictEqual(yield* Effect.forEach(waiting, Fiber.join), [0, 1, 2])
    }).pipe(Effect.runPromise))

  it("fails every call that waited for a failed reading, and the next call reads again", () =>
    Effect.gen(function* () {
      const { heard } = listener()
      const { gates, read } = gatedReading()
      const remembered = PgNotices.remembered(heard, read)
      const waiting = yield* Effect.forEach(Array.from({ length: 3 }), () => Effect.forkChild(remembered))
      yield* settle
      assert.strictEqual(gates.length, 1)
      yield* Deferred.fail(gates[0]!, "the server went away")
      for (const fiber of waiting) assert.isTrue(Exit.isFailure(yield* Fiber.await(fiber)))
      const next = yield* Effect.forkChild(remembered)
      yield* settle
      assert.strictEqual(gates.length, 2, "read again after the failure")
      yield* Deferred.succeed(gates[1]!, 5)
      assert.strictEqual(yield* Fiber.join(next), 5)
    }).pipe(Effect.runPromise))
})
