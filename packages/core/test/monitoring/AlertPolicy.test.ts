/** The alert policy: identity, threshold and minimum interval on block time, golden cases and properties. */
import { fc, test } from "@fast-check/vitest"
import { AlertPolicy } from "@vigil/core"
import { assert, describe, it } from "vitest"

const identity = {
  botId: "bot_1",
  botVersion: "1",
  chainId: 1,
  blockHash: "0xAB",
  rule: 0,
  transactions: { tx2: "0x02", tx1: "0x01" }
}

const at = (...times: ReadonlyArray<number>) => times.map((t, i) => ({ id: `a${i}`, blockTime: t }))
const shown = (ds: ReadonlyArray<AlertPolicy.Decided>) => ds.map((d) => `${d.blockTime}:${d.suppressed ?? "sent"}`)

describe("AlertPolicy.alertId", () => {
  it("is the SHA-256 of the identity's JSON, as alerts stored by earlier builds have it (golden)", () => {
    // sha256('["bot_1","1",1,"0xab",0,[["tx1","0x01"],["tx2","0x02"]]]'), its first 32 hex digits (sha256sum).
    assert.strictEqual(AlertPolicy.alertId(identity), "al_0bbc94f5a6533595d07a2e8d563db940")
  })

  it("is the same for the same match, whatever the case of the hash or the order of the names", () => {
    const id = AlertPolicy.alertId(identity)
    assert.match(id, /^al_[0-9a-f]{32}$/)
    assert.strictEqual(
      AlertPolicy.alertId({ ...identity, blockHash: "0xab", transactions: { tx1: "0x01", tx2: "0x02" } }),
      id
    )
  })

  it("differs on another branch, bot version, rule or transaction", () => {
    const id = AlertPolicy.alertId(identity)
    for (const other of [
      { ...identity, blockHash: "0xac" },
      { ...identity, botVersion: "2" },
      { ...identity, rule: 1 },
      { ...identity, transactions: { tx1: "0x01", tx2: "0x03" } }
    ])
      assert.notStrictEqual(AlertPolicy.alertId(other), id)
  })
})

describe("AlertPolicy.decide", () => {
  it("notifies every new match when the bot has no limits, and leaves out one already alerted", () => {
    const decided = AlertPolicy.decide({}, [{ id: "a0", blockTime: 10 }], at(10, 20, 30))
    assert.deepStrictEqual(shown(decided), ["20:sent", "30:sent"])
  })

  it("holds back until `count` alerts fall within the window (golden)", () => {
    const limits = { alertThreshold: { count: 3, windowSeconds: 60 } }
    assert.deepStrictEqual(shown(AlertPolicy.decide(limits, [], at(0, 10, 20, 100, 200))), [
      "0:threshold",
      "10:threshold",
      "20:sent",
      "100:threshold",
      "200:threshold"
    ])
  })

  it("records without notifying within the interval of the last one notified (golden)", () => {
    const limits = { notifyMinIntervalSeconds: 30 }
    assert.deepStrictEqual(shown(AlertPolicy.decide(limits, [], at(0, 10, 29, 30, 45, 61))), [
      "0:sent",
      "10:interval",
      "29:interval",
      "30:sent",
      "45:interval",
      "61:sent"
    ])
  })

  const limitsGen = fc.record({
    notifyMinIntervalSeconds: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
    alertThreshold: fc.option(
      fc.record({ count: fc.integer({ min: 1, max: 4 }), windowSeconds: fc.integer({ min: 1, max: 80 }) }),
      { nil: undefined }
    )
  })
  /** Matches in block order, some found twice (the same id). */
  const candidatesGen = fc
    .array(fc.record({ gap: fc.integer({ min: 0, max: 30 }), repeat: fc.boolean() }), { maxLength: 25 })
    .map((steps) => {
      const out: Array<{ id: string; blockTime: number }> = []
      let time = 1_000
      for (const [i, s] of steps.entries()) {
        time += s.gap
        out.push(s.repeat && out.length > 0 ? out.at(-1)! : { id: `m${i}`, blockTime: time })
      }
      return out
    })

  test.prop([limitsGen, candidatesGen, fc.nat()])(
    "decides the same whether the matches come in one step or several (a restart between any two)",
    (limits, candidates, cut) => {
      const split = candidates.length === 0 ? 0 : cut % (candidates.length + 1)
      const whole = AlertPolicy.decide(limits, [], candidates)
      const first = AlertPolicy.decide(limits, [], candidates.slice(0, split))
      const second = AlertPolicy.decide(limits, first, candidates.slice(split))
      assert.deepStrictEqual([...first, ...second], whole)
    }
  )

  test.prop([limitsGen, candidatesGen])(
    "alerts each match once, notifies within the limits, and notifies every match when there are none",
    (limits, candidates) => {
      const decided = AlertPolicy.decide(limits, [], candidates)
      assert.deepStrictEqual(
        decided.map((d) => d.id),
        [...new Set(candidates.map((c) => c.id))]
      )
      const notified = decided.filter((d) => d.suppressed === undefined)
      const interval = limits.notifyMinIntervalSeconds
      if (interval !== undefined)
        notified.forEach((d, i) => i === 0 || assert.isAtLeast(d.blockTime - notified[i - 1]!.blockTime, interval))
      const threshold = limits.alertThreshold
      if (threshold !== undefined)
        for (const [i, d] of decided.entries())
          if (d.suppressed === undefined)
            assert.isAtLeast(
              decided.slice(0, i + 1).filter((e) => e.blockTime > d.blockTime - threshold.windowSeconds).length,
              threshold.count
            )
      if (interval === undefined && threshold === undefined) assert.strictEqual(notified.length, decided.length)
    }
  )
})
