import { fc, test } from "@fast-check/vitest"
import { RandomIds, Webhooks } from "@vigil/core"
import { assert, describe, it } from "vitest"

describe("RandomIds", () => {
  it("draws alphanumerics and hex of the asked length, none repeated across refills of the pool", () => {
    const seen = new Set<string>()
    // 30,000 ids of 16 characters take the pool of 4 KiB through more than a hundred refills.
    for (let i = 0; i < 30_000; i++) {
      const id = RandomIds.alphanumeric(16)
      assert.match(id, /^[a-z0-9]{16}$/)
      seen.add(id)
    }
    assert.strictEqual(seen.size, 30_000)
    for (const n of [1, 6, 5000]) assert.match(RandomIds.hex(n), new RegExp(`^[0-9a-f]{${2 * n}}$`))
  })

  it("uses every character of the alphabet", () => {
    const chars = new Set(Array.from({ length: 200 }, () => RandomIds.alphanumeric(16)).join(""))
    assert.strictEqual(chars.size, 36)
  })
})

describe("Webhooks.envelope", () => {
  test.prop([fc.string(), fc.string(), fc.string(), fc.option(fc.jsonValue(), { nil: undefined })])(
    "is the text of serialising each destination's whole body, in the envelope's key order",
    (timestamp, correlationId, webhookId, data) => {
      const body = Webhooks.envelope(timestamp, { correlationId, data })(webhookId)
      assert.strictEqual(
        body,
        JSON.stringify({ timestamp, correlation_id: correlationId, webhook_id: webhookId, data })
      )
    }
  )
})
