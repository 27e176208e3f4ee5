/** A refusal in the console's words: what went wrong, and for a contract without an ABI, what was tried and what to do. */
import { assert, describe, it } from "vitest"
import { errorMessage } from "../src/client"

describe("errorMessage", () => {
  it("says a refusal in words, not as an HTTP code", () => {
    assert.strictEqual(
      errorMessage({ message: "contractAddress: must be an EVM address" }, 400),
      "Not accepted: contractAddress: must be an EVM address"
    )
    assert.strictEqual(errorMessage({}, 503), "The server is busy; try again shortly.")
    assert.strictEqual(errorMessage(undefined, 500), "The server could not answer.")
  })

  it("says what was tried for a contract without an ABI, and what to do", () => {
    const said = errorMessage(
      {
        message: "no ABI found",
        details: { tried: ["sourcify: not verified", "etherscan: the explorer could not be reached"] }
      },
      422
    )
    assert.strictEqual(
      said,
      "No ABI was found for this contract. Tried: sourcify: not verified; etherscan: the explorer could not be reached. Paste its ABI (JSON) to register it, or check the address and chain id."
    )
  })
})
