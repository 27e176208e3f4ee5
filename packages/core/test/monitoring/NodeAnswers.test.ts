/**
 * NodeAnswers' decoders of blocks, receipts and call frames answer exactly as `Schema.decodeUnknownResult` of their
 * Schemas: the same value for an answer that holds (extra fields dropped, optional ones kept only when present), the
 * same refusal and message for one that does not. Answers are drawn as a node's JSON would be, with every field
 * present or absent, of its type or of another, and fields nobody reads.
 */
import { fc } from "@fast-check/vitest"
import { NodeAnswers } from "@vigil/core"
import { Result, Schema } from "effect"
import { assert, describe, it } from "vitest"

/** A field's value: mostly a string (what a node sends), sometimes of another type. */
const value = fc.oneof(
  { weight: 40, arbitrary: fc.stringMatching(/^0x[0-9a-f]{0,8}$/) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.array(fc.string(), { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }) }
)

/** A field left out. */
const absent = Symbol("absent")

/** An object with each of `fields` (made by its arbitrary) present or absent, and perhaps a field nobody reads. */
const answer = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      fc.record(
        Object.fromEntries(
          Object.entries(fields).map(([k, a]) => [k, fc.option(a, { nil: absent, freq: 8 })])
        ) as Record<string, fc.Arbitrary<unknown>>
      ),
      fc.option(fc.tuple(fc.constantFrom("extra", "blockNumber", "v", "r", "s"), value), { nil: undefined }),
      fc.nat({ max: 40 })
    )
    .map(([o, extra, n]) => {
      const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== absent))
      if (extra !== undefined) out[extra[0]] = extra[1]
      // Now and then an array where an object belongs.
      return n === 0 ? [out] : out
    })

const often = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: a }, { weight: 1, arbitrary: value })

const transaction = answer({
  hash: value,
  from: value,
  to: fc.oneof(value, fc.constant(null)),
  value,
  nonce: value,
  input: value,
  gas: value,
  gasPrice: value,
  maxFeePerGas: value,
  maxPriorityFeePerGas: value,
  transactionIndex: value
})
const block = answer({
  number: value,
  hash: value,
  parentHash: value,
  timestamp: value,
  transactions: often(fc.array(transaction, { maxLength: 4 }))
})
const log = answer({
  address: value,
  topics: often(fc.array(value, { maxLength: 3 })),
  data: value,
  logIndex: value
})
const receipt = answer({
  transactionHash: value,
  blockHash: value,
  status: value,
  gasUsed: value,
  logs: often(fc.array(log, { maxLength: 3 }))
})
const { frame } = fc.letrec<{ frame: unknown }>((tie) => ({
  frame: answer({
    type: value,
    from: value,
    to: value,
    value,
    gas: value,
    gasUsed: value,
    input: value,
    output: value,
    error: value,
    calls: often(fc.array(tie("frame"), { maxLength: 2, depthIdentifier: "frame" })),
    logs: often(
      fc.array(
        answer({
          address: value,
          topics: often(fc.array(value, { maxLength: 2 })),
          data: value,
          index: fc.oneof(value, fc.integer())
        }),
        { maxLength: 2 }
      )
    )
  })
}))
const entry = fc.oneof(frame, answer({ txHash: value, result: frame }))

/** As a node's JSON arrives: parsed from text. */
const asJson = (u: unknown): unknown => JSON.parse(JSON.stringify(u))

/** Both decoders agree on `u`: the same value, or the same refusal. */
const agree = <A>(
  ours: (u: unknown) => Result.Result<A, Schema.SchemaError>,
  schema: Schema.Decoder<A>,
  u: unknown
): boolean => {
  const expected = Schema.decodeUnknownResult(schema)(u)
  const got = ours(u)
  if (Result.isSuccess(expected)) {
    assert.isTrue(Result.isSuccess(got), "refused an answer the Schema takes")
    // The same fields in the same order, so the answers serialise alike too.
    assert.strictEqual(JSON.stringify(Result.getOrThrow(got)), JSON.stringify(expected.success))
    assert.deepStrictEqual(Result.getOrThrow(got), expected.success)
    return true
  }
  assert.isTrue(Result.isFailure(got), "took an answer the Schema refuses")
  if (Result.isFailure(got)) assert.strictEqual(got.failure.message, expected.failure.message)
  return false
}

describe("NodeAnswers", () => {
  /** Checks that the decoders agree on every drawn answer, and that the answers drawn were both taken and refused. */
  const property = <A>(
    answers: fc.Arbitrary<unknown>,
    ours: (u: unknown) => Result.Result<A, Schema.SchemaError>,
    schema: Schema.Decoder<A>
  ) => {
    const seen = { taken: 0, refused: 0 }
    fc.assert(
      fc.property(answers.map(asJson), (u) => {
        if (agree(ours, schema, u)) seen.taken++
        else seen.refused++
      }),
      { numRuns: 2_000 }
    )
    assert.isAbove(seen.taken, 50)
    assert.isAbove(seen.refused, 50)
  }

  it("decodes a block as its Schema does", () => {
    property(block, NodeAnswers.decodeBlock, NodeAnswers.RpcBlock)
  })

  it("decodes receipts as their Schema does", () => {
    property(fc.array(receipt, { maxLength: 3 }), NodeAnswers.decodeReceipts, Schema.Array(NodeAnswers.RpcReceipt))
  })

  it("decodes call frames as their Schema does", () => {
    property(fc.array(entry, { maxLength: 3 }), NodeAnswers.decodeTraces, Schema.Array(NodeAnswers.TraceEntry))
  })

  it("takes a node's whole answer, fields nobody reads dropped, and names what is wrong in one that is not", () => {
    const tx = {
      hash: "0xaa",
      from: "0x01",
      to: null,
      value: "0x0",
      nonce: "0x1",
      input: "0x",
      gas: "0x5208",
      transactionIndex: "0x0",
      v: "0x1",
      type: "0x2"
    }
    const answer = {
      number: "0x10",
      hash: "0xbb",
      parentHash: "0xcc",
      timestamp: "0x5",
      transactions: [tx],
      size: "0x9"
    }
    const decoded = NodeAnswers.decodeBlock(answer)
    assert.deepStrictEqual(Result.getOrThrow(decoded), {
      number: "0x10",
      hash: "0xbb",
      parentHash: "0xcc",
      timestamp: "0x5",
      transactions: [
        {
          hash: "0xaa",
          from: "0x01",
          to: null,
          value: "0x0",
          nonce: "0x1",
          input: "0x",
          gas: "0x5208",
          transactionIndex: "0x0"
        }
      ]
    })
    const wrong = NodeAnswers.decodeBlock({ ...answer, transactions: [{ ...tx, gas: 21_000 }] })
    assert.isTrue(Result.isFailure(wrong))
    if (Result.isFailure(wrong)) assert.include(wrong.failure.message, "gas")
  })
})
