/**
 * Evidence as stored text: `FollowStore.evidenceText` writes by plain code what encoding `FollowStore.EvidenceJson`
 * writes, and refuses alike what it refuses. Drawn evidence, well-formed and not: values of other types, extra and
 * missing fields, optional fields present as undefined, keys that are numbers or `__proto__`, arrays of arrays, holes.
 */
import { assert, describe, it } from "@effect/vitest"
import { fc } from "@fast-check/vitest"
import { FollowStore } from "@vigil/core"
import { Schema } from "effect"

const bySchema = Schema.encodeSync(FollowStore.EvidenceJson)
type Evidence = typeof FollowStore.Evidence.Type

/** Now and then something else in the place of a well-formed value. */
const odd = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  fc.string({ maxLength: 3 }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({})
)
const often = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 40, arbitrary: a }, { weight: 1, arbitrary: odd })
const key = fc.oneof(
  fc.constantFrom("tx1", "tx2", "0", "7", "", "__proto__", "value", "$0"),
  fc.string({ maxLength: 4 })
)
/** A record as JSON.parse would make it (so `__proto__` is an own key). */
const record = <T>(value: fc.Arbitrary<T>, maxKeys = 3) =>
  fc.array(fc.tuple(key, value), { maxLength: maxKeys }).map((entries) => {
    const r: Record<string, unknown> = {}
    for (const [k, v] of entries)
      Object.defineProperty(r, k, { value: v, enumerable: true, writable: true, configurable: true })
    return r
  })
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 8, arbitrary: fc.string({ maxLength: 6 }) },
    { weight: 3, arbitrary: fc.boolean() },
    { weight: 3, arbitrary: record(tie("json")) },
    {
      weight: 3,
      arbitrary: fc.array(
        fc.oneof(
          { weight: 6, arbitrary: fc.string({ maxLength: 4 }) },
          { weight: 2, arbitrary: fc.boolean() },
          { weight: 2, arbitrary: record(tie("json"), 2) },
          {
            weight: 1,
            arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer(), fc.boolean(), fc.bigInt()), {
              maxLength: 2
            })
          },
          { weight: 1, arbitrary: odd }
        ),
        { maxLength: 3 }
      )
    },
    { weight: 1, arbitrary: odd }
  )
}))
/** A struct with each field present (usually), absent, or undefined, and now and then an extra field. */
const struct = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      fc.record(
        Object.fromEntries(
          Object.entries(fields).map(([k, a]) => [k, fc.option(a, { nil: absent, freq: 40 })])
        ) as Record<string, fc.Arbitrary<unknown>>
      ),
      fc.option(fc.tuple(fc.constantFrom("extra", "hash", "name"), json), { nil: undefined, freq: 4 }),
      fc.boolean()
    )
    .map(([r, extra, undefinedForAbsent]) => {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(r)) {
        if (v !== absent) out[k] = v
        else if (undefinedForAbsent && k !== "index") out[k] = undefined
      }
      if (extra !== undefined && !(extra[0] in out)) out[extra[0]] = extra[1]
      return out
    })
const absent = Symbol("absent")
const int = fc.oneof({ weight: 40, arbitrary: fc.nat({ max: 1000 }) }, { weight: 1, arbitrary: fc.double() })

const evidence = struct({
  transactions: often(record(often(struct({ hash: fc.string({ maxLength: 6 }), blockNumber: int, txIndex: int })))),
  frames: often(record(often(struct({ index: int, from: json, to: json, type: json })))),
  occurrences: often(
    record(
      often(
        struct({
          contract: fc.string({ maxLength: 4 }),
          name: fc.string({ maxLength: 4 }),
          signature: fc.string({ maxLength: 4 }),
          args: json,
          logIndex: int,
          frame: int,
          reverted: fc.boolean()
        })
      )
    )
  ),
  held: often(
    fc.oneof(
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
      fc.array(fc.string(), { maxLength: 3 }).map((a) => {
        const sparse = [...a]
        sparse.length += 1
        return sparse
      })
    )
  )
})

/** What encoding `e` gives: its text, or the refusal's message. */
const outcome = (encode: (e: Evidence) => string, e: unknown) => {
  try {
    return { text: encode(e as Evidence) }
  } catch (cause) {
    return { refused: cause instanceof Error ? cause.message : String(cause) }
  }
}

describe("FollowStore.evidenceText", () => {
  it("writes what the Schema writes, and refuses what it refuses, in its words", () => {
    const seen = { written: 0, refused: 0 }
    fc.assert(
      fc.property(evidence, (e) => {
        const expected = outcome(bySchema, e)
        assert.deepStrictEqual(outcome(FollowStore.evidenceText, e), expected)
        if ("text" in expected) seen.written++
        else seen.refused++
      }),
      { numRuns: 3_000 }
    )
    // Both kinds were drawn often enough to mean something.
    assert.isAbove(seen.written, 300)
    assert.isAbove(seen.refused, 300)
  })

  it("writes an evaluator's evidence with its fields in the Schema's order", () => {
    const e: Evidence = {
      held: ["system.emitted(tx1.T.E.Transfer)"],
      occurrences: {
        "tx1.T.E.Transfer": {
          reverted: false,
          logIndex: 3,
          args: { to: "0x01", value: "5", path: ["0x02", { $0: true }] },
          signature: "Transfer(address,address,uint256)",
          name: "Transfer",
          contract: "T"
        }
      },
      frames: { "tx1.itx1": { type: "CALL", index: 1 } },
      transactions: { tx1: { txIndex: 0, blockNumber: 7, hash: "0xab" } }
    }
    assert.strictEqual(FollowStore.evidenceText(e), bySchema(e))
    assert.strictEqual(
      FollowStore.evidenceText(e),
      '{"transactions":{"tx1":{"hash":"0xab","blockNumber":7,"txIndex":0}},"frames":{"tx1.itx1":{"index":1,"type":"CALL"}},"occurrences":{"tx1.T.E.Transfer":{"contract":"T","name":"Transfer","signature":"Transfer(address,address,uint256)","args":{"to":"0x01","value":"5","path":["0x02",{"$0":true}]},"logIndex":3,"reverted":false}},"held":["system.emitted(tx1.T.E.Transfer)"]}'
    )
  })
})
