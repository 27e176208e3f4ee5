import { describe, expect, it } from "@effect/vitest"
import { fc, test } from "@fast-check/vitest"
import { NodeMac } from "@vigil/adapter-delivery"
import { WebhookSigning } from "@vigil/core"

describe("NodeMac", () => {
  it("signs the Standard Webhooks reference vector as the JavaScript HMAC does", () => {
    expect(
      WebhookSigning.sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
        NodeMac.mac
      )
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  // Keys of every length (longer than a block are hashed first), messages in any script (UTF-8, surrogates).
  test.prop([fc.uint8Array({ maxLength: 100 }), fc.string({ unit: "grapheme", maxLength: 300 })])(
    "is the same HMAC-SHA256 as the JavaScript one for any key and message",
    (key, message) => {
      expect(Buffer.from(NodeMac.mac(key, message)).toString("hex")).toBe(
        Buffer.from(WebhookSigning.pureMac(key, message)).toString("hex")
      )
    }
  )
})
