import { fc, test } from "@fast-check/vitest"
import { StoredJson } from "@vigil/core"
import { Exit, Schema } from "effect"
import { assert, describe, it } from "vitest"

const Row = Schema.fromJsonString(Schema.Struct({ id: Schema.String, n: Schema.Int }))
const decode = Schema.decodeUnknownExit(Row)

/** `decode`, counting its calls by text. */
const counted = () => {
  const calls = new Map<string, number>()
  return {
    calls,
    decode: (text: string) => {
      calls.set(text, (calls.get(text) ?? 0) + 1)
      return decode(text)
    }
  }
}

// Texts drawn from a few rows (so reads repeat), some of them not rows at all.
const texts = fc.array(
  fc.oneof(
    fc
      .record({ id: fc.constantFrom("a", "b", "c", "d", "e"), n: fc.integer({ min: 0, max: 3 }) })
      .map((r) => JSON.stringify(r)),
    fc.constantFrom("[{not json", '{"id":1,"n":2}')
  ),
  { maxLength: 200 }
)

describe("StoredJson.remembered", () => {
  test.prop([texts, fc.integer({ min: 1, max: 8 })])(
    "answers every read as the decoding does, whatever the capacity",
    (reads, capacity) => {
      const read = StoredJson.remembered(decode, capacity)
      for (const text of reads) assert.deepStrictEqual(read(text), decode(text))
    }
  )

  test.prop([texts])(
    "decodes a text that decodes once while fewer distinct texts than its capacity are read",
    (reads) => {
      const { calls, decode: counting } = counted()
      const read = StoredJson.remembered(counting, 1_000)
      for (const text of [...reads, ...reads]) read(text)
      for (const [text, n] of calls)
        assert.strictEqual(n, Exit.isSuccess(decode(text)) ? 1 : 2 * reads.filter((t) => t === text).length, text)
    }
  )

  it("gives every read of one text the same value, and a changed text its own", () => {
    const read = StoredJson.remembered(decode, 10)
    const first = read('{"id":"a","n":1}')
    const again = read('{"id":"a","n":1}')
    const changed = read('{"id":"a","n":2}')
    assert.isTrue(Exit.isSuccess(first) && Exit.isSuccess(again) && Exit.isSuccess(changed))
    if (Exit.isSuccess(first) && Exit.isSuccess(again) && Exit.isSuccess(changed)) {
      assert.strictEqual(again.value, first.value)
      assert.deepStrictEqual(changed.value, { id: "a", n: 2 })
    }
  })

  it("forgets the texts not read again within the next `capacity` distinct ones", () => {
    const { calls, decode: counting } = counted()
    const read = StoredJson.remembered(counting, 2)
    const row = (n: number) => JSON.stringify({ id: "a", n })
    // 0 and 1 fill the first generation; 2 starts the next, 3 fills it; 4 starts another, leaving 0 and 1 behind.
    for (const n of [0, 1, 2, 3, 4]) read(row(n))
    read(row(0))
    read(row(3))
    assert.strictEqual(calls.get(row(0)), 2)
    assert.strictEqual(calls.get(row(3)), 1)
  })
})
