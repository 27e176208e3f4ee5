import { describe, expect, it } from "@effect/vitest"
import { fc, test } from "@fast-check/vitest"
import { NodeDigest } from "@vigil/adapter-delivery"
import { AlertPolicy } from "@vigil/core"

describe("NodeDigest", () => {
  it("hashes the FIPS 180-2 vector and gives an alert the id the JavaScript digest gives (golden)", () => {
    expect(NodeDigest.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    const identity = {
      botId: "bot_1",
      botVersion: "1",
      chainId: 1,
      blockHash: "0xAB",
      rule: 0,
      transactions: { tx2: "0x02", tx1: "0x01" }
    }
    expect(AlertPolicy.alertId(identity, NodeDigest.sha256Hex)).toBe("al_0bbc94f5a6533595d07a2e8d563db940")
  })

  // Texts in any script, lone surrogates included (both encode them as U+FFFD).
  test.prop([fc.oneof(fc.string({ unit: "grapheme", maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 }))])(
    "is the same SHA-256 as the JavaScript one for any text",
    (text) => {
      expect(NodeDigest.sha256Hex(text)).toBe(AlertPolicy.pureDigest(text))
    }
  )

  test.prop([
    fc.record({
      botId: fc.string(),
      botVersion: fc.string(),
      chainId: fc.nat(),
      blockHash: fc.string(),
      rule: fc.nat(),
      transactions: fc.dictionary(fc.string(), fc.string())
    })
  ])("gives every alert the id the JavaScript digest gives", (identity) => {
    expect(AlertPolicy.alertId(identity, NodeDigest.sha256Hex)).toBe(AlertPolicy.alertId(identity))
  })
})
