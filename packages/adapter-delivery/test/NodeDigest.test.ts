import { describe, expect, it } from "@effect/vitest"
import { fc, test } from "@fast-check/vitest"
import { NodeDigest } from "@vigil/adapter-delivery"
import { AlertPolicy } from "@vigil/core"

describe("NodeDigest", () => {
  it("hashes the FIPS 180-2 vector and gives an alert the id the JavaScript digest gives (golden)", () => {
    expect(NodeDigest.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    // A name beyond ASCII (UTF-8 of é and an emoji): sha256('["bot_é😀","",31337,"0xab",2,[["tx1","0x01"]]]') (sha256sum).
    const identity = {
      botId: "bot_é😀",
      botVersion: "",
      chainId: 31337,
      blockHash: "0xAB",
      rule: 2,
      transactions: { tx1: "0x01" }
    }
    expect(AlertPolicy.alertId(identity, NodeDigest.sha256Hex)).toBe("al_3cd915a2a4b12fcfa8e3c87cdeb7837c")
  })

  // Texts in any script, lone surrogates included (both encode them as U+FFFD).
  test.prop([
    fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      // Any UTF-16 code unit: lone surrogates among them.
      fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)), maxLength: 300 })
    )
  ])("is the same SHA-256 as the JavaScript one for any text", (text) => {
    expect(NodeDigest.sha256Hex(text)).toBe(AlertPolicy.pureDigest(text))
  })

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
