import { fc, test } from "@fast-check/vitest"
import { Instant } from "@vigil/core"
import { DateTime } from "effect"
import { assert, describe } from "vitest"

// Every instant a JavaScript date can hold, years before 1 and after 9999 included.
const millis = fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 })

describe("Instant", () => {
  test.prop([millis])("writes an instant as DateTime.formatIso does", (m) => {
    assert.strictEqual(Instant.iso(m), DateTime.formatIso(DateTime.makeUnsafe(m)))
  })

  test.prop([fc.array(fc.oneof(millis, fc.integer({ min: 0, max: 2 })), { maxLength: 20 })])(
    "writes each of a run of instants, the same one again or another, as DateTime.formatIso does",
    (run) => {
      for (const m of run) assert.strictEqual(Instant.iso(m), DateTime.formatIso(DateTime.makeUnsafe(m)))
    }
  )

  test.prop([millis])("writes its UTC day as DateTime.formatIsoDateUtc does", (m) => {
    assert.strictEqual(Instant.day(m), DateTime.formatIsoDateUtc(DateTime.makeUnsafe(m)))
  })
})
