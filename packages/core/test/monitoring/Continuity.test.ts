/** Continuity: new blocks against the cursor, a reorganisation's common ancestor, lagging replicas; golden and properties. */
import { fc, test } from "@fast-check/vitest"
import { Continuity, type FollowStore } from "@vigil/core"
import { assert, describe, it } from "vitest"

/** A branch of `length` blocks from `from`, hashes tagged by `tag`, the first's parent `parent`. */
const branch = (tag: string, from: number, length: number, parent: string): Array<FollowStore.Mark> => {
  const out: Array<FollowStore.Mark> = []
  for (let i = 0; i < length; i++) {
    const parentHash = i === 0 ? parent : out[i - 1]!.hash
    out.push({ number: from + i, hash: `${tag}${from + i}`, parentHash })
  }
  return out
}

describe("Continuity", () => {
  it("reads from the block after the cursor up to the head less the confirmations, a batch at most", () => {
    assert.deepStrictEqual(Continuity.nextRange(10, 100, 2, 80), { from: 11, to: 90 })
    assert.deepStrictEqual(Continuity.nextRange(10, 15, 2, 80), { from: 11, to: 13 })
    assert.strictEqual(Continuity.nextRange(10, 12, 2, 80), undefined)
  })

  it("takes the blocks that link to the cursor, stops at one that does not, and sees a reorganisation first", () => {
    const main = branch("a", 1, 5, "a0")
    assert.deepStrictEqual(Continuity.extend("a0", main), { kind: "extends", count: 5 })
    assert.deepStrictEqual(Continuity.extend("a0", [...main.slice(0, 2), ...branch("b", 3, 2, "b2")]), {
      kind: "extends",
      count: 2
    })
    assert.deepStrictEqual(Continuity.extend("b0", main), { kind: "reorganised" })
    assert.deepStrictEqual(Continuity.extend("a0", []), { kind: "extends", count: 0 })
  })

  it("tells a cursor still on the chain from one reorganised away and from a node that lacks its height", () => {
    const cursor = { number: 5, hash: "a5", parentHash: "a4" }
    assert.strictEqual(Continuity.atCursor(cursor, { hash: "a5" }), "same")
    assert.strictEqual(Continuity.atCursor(cursor, { hash: "b5" }), "reorganised")
    assert.strictEqual(Continuity.atCursor(cursor, undefined), "lagging")
  })

  it("finds the common ancestor, waits for a lagging replica, and says when it is deeper than the kept blocks", () => {
    const kept = branch("a", 1, 6, "a0")
    const node = [...kept.slice(0, 3).map((m) => ({ hash: m.hash })), ...branch("b", 4, 3, "a3")]
    assert.deepStrictEqual(Continuity.ancestor(kept, node), { kind: "found", mark: kept[2]! })
    assert.deepStrictEqual(Continuity.ancestor(kept, [...node.slice(0, 4), undefined, node[5]]), {
      kind: "lagging",
      number: 5
    })
    assert.deepStrictEqual(Continuity.ancestor(kept, branch("c", 1, 6, "c0")), { kind: "none" })
  })

  it("accepts a window read again only when it still ends at the cursor and links", () => {
    const kept = branch("a", 1, 4, "a0")
    assert.isTrue(Continuity.intact(kept, kept[3]!))
    assert.isFalse(Continuity.intact([...kept.slice(0, 3), { ...kept[3]!, parentHash: "x" }], kept[3]!))
    assert.isFalse(Continuity.intact(kept.slice(0, 3), kept[3]!))
  })

  test.prop([
    fc.integer({ min: 1, max: 30 }),
    fc.integer({ min: 0, max: 30 }),
    fc.integer({ min: 1, max: 30 }),
    fc.integer({ min: 0, max: 5 })
  ])(
    "finds as ancestor exactly the block where a branch left the kept one, unless the node lags",
    (length, forkAt, otherLength, lagAt) => {
      const kept = branch("a", 1, length, "a0")
      const fork = Math.min(forkAt, length)
      const other = [...kept.slice(0, fork), ...branch("b", fork + 1, otherLength, fork === 0 ? "a0" : `a${fork}`)]
      const onNode = kept.map((m) => other.find((o) => o.number === m.number))
      const found = Continuity.ancestor(kept, onNode)
      if (onNode.some((o) => o === undefined)) assert.strictEqual(found.kind, "lagging")
      else if (fork === 0) assert.deepStrictEqual(found, { kind: "none" })
      else assert.deepStrictEqual(found, { kind: "found", mark: kept[fork - 1]! })
      // A replica without one of the heights is waited for, never taken for an orphan.
      if (lagAt < length) {
        const lagging = onNode.map((o, i) => (i === lagAt ? undefined : o))
        const first = lagging.findIndex((o) => o === undefined)
        assert.deepStrictEqual(Continuity.ancestor(kept, lagging), { kind: "lagging", number: kept[first]!.number })
      }
    }
  )
})
