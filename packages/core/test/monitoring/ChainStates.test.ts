/**
 * A chain's follower state as a value: each event changes it in one pure function, and the counts the metrics read
 * only grow, whatever becomes of the state (fast-check over sequences of events).
 */
import { fc, test } from "@fast-check/vitest"
import { Follower } from "@vigil/core"
import { assert, describe, it } from "vitest"

const { ChainStates } = Follower
const { Event } = ChainStates

const started = ChainStates.apply(1, undefined, Event.Held({ holder: "a" }))!

describe("a chain's follower state", () => {
  it("starts on holding the lease or standing by, and ignores other events for a chain without a state", () => {
    assert.deepStrictEqual(started, {
      chainId: 1,
      state: "starting",
      heads: "polling",
      bots: 0,
      blocks: 0,
      alerts: 0,
      retractions: 0,
      reorganisations: 0,
      deferred: 0,
      holder: "a"
    })
    assert.isUndefined(ChainStates.apply(1, undefined, Event.Deferred()))
    const standing = ChainStates.apply(1, { ...started, blocks: 7, lastError: "x" }, Event.Standby({ bots: 2 }))!
    assert.deepInclude(standing, { state: "standby", bots: 2, blocks: 7 })
    assert.notProperty(standing, "lastError")
  })

  it("says why and since when it is stalled or failing, from the first time, until a step goes through", () => {
    const stalled = ChainStates.apply(1, started, Event.Stalled({ reason: "no block 5", at: "t1" }))!
    const again = ChainStates.apply(1, stalled, Event.Stalled({ reason: "no block 6", at: "t2" }))!
    assert.deepInclude(again, { lastError: "no block 6", stalledSince: "t1" })
    const halted = ChainStates.apply(1, again, Event.Failed({ message: "deep", halted: true, at: "t3" }))!
    assert.deepInclude(halted, { state: "halted", lastError: "deep", stalledSince: "t1" })
    const stepped = ChainStates.apply(1, halted, Event.Stepped())!
    assert.strictEqual(stepped.state, "following")
    assert.notProperty(stepped, "lastError")
    assert.notProperty(stepped, "stalledSince")
    const catching = ChainStates.apply(
      1,
      stepped,
      Event.Advanced({ cursor: 10, head: 30, blocks: 3, alerts: 1, at: "t4", catchingUp: true, judging: 0.5 })
    )!
    assert.deepInclude(catching, {
      state: "catching up",
      cursor: 10,
      lag: 20,
      blocks: 3,
      alerts: 1,
      lastProgress: "t4"
    })
    assert.notProperty(catching, "judging", "the time spent judging is a metric, not part of /health's state")
    assert.strictEqual(ChainStates.apply(1, catching, Event.Stepped())!.state, "catching up", "not troubled: kept")
  })

  const event = fc.oneof(
    fc.constant(Event.Held({ holder: "a" })),
    fc.constant(Event.Standby({ bots: 1 })),
    fc.nat(5).map((blocks) =>
      Event.Advanced({
        cursor: 100,
        head: 110,
        blocks,
        alerts: blocks % 3,
        at: "t",
        catchingUp: false,
        judging: blocks / 4
      })
    ),
    fc.nat(3).map((alerts) => Event.CaughtUp({ alerts, judging: alerts / 2 })),
    fc.nat(3).map((retracted) => Event.Rewound({ cursor: 90, retracted })),
    fc.constant(Event.Deferred()),
    fc.constant(Event.Stepped()),
    fc.constant(Event.Stalled({ reason: "r", at: "t" })),
    fc.constant("forget" as const)
  )

  test.prop([fc.array(fc.tuple(fc.constantFrom(1, 137), event), { maxLength: 60 })])(
    "counts every event that happened to a chain's state, only ever growing, whatever becomes of the state",
    (events) => {
      const chains = ChainStates.make()
      const expected = new Map<
        number,
        { blocks: number; alerts: number; reorganisations: number; deferred: number; judging: number }
      >()
      for (const [chainId, e] of events) {
        const before = chains.counts().get(chainId)
        if (e === "forget") {
          chains.keepOnly(new Set([1, 137].filter((id) => id !== chainId)))
          continue
        }
        const had = chains.get(chainId) !== undefined || e._tag === "Held" || e._tag === "Standby"
        chains.record(chainId, e)
        const after = chains.counts().get(chainId)
        if (before !== undefined && after !== undefined)
          for (const field of ["blocks", "alerts", "retractions", "reorganisations", "deferred", "judging"] as const)
            assert.isAtLeast(after[field], before[field])
        if (!had) continue
        const x = expected.get(chainId) ?? { blocks: 0, alerts: 0, reorganisations: 0, deferred: 0, judging: 0 }
        if (e._tag === "Advanced") {
          x.blocks += e.blocks
          x.alerts += e.alerts
          x.judging += e.judging
        }
        if (e._tag === "CaughtUp") {
          x.alerts += e.alerts
          x.judging += e.judging
        }
        if (e._tag === "Rewound") x.reorganisations++
        if (e._tag === "Deferred") x.deferred++
        expected.set(chainId, x)
      }
      for (const [chainId, x] of expected) assert.deepInclude(chains.counts().get(chainId), x)
    }
  )
})
