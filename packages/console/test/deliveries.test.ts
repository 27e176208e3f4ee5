/** An alert's delivery in words: a dead one says it was given up on, a retried one's old error is said as past. */
import { assert, describe, it } from "vitest"
import type { Alert } from "../src/client"
import { deliveryText } from "../src/deliveries"

type Delivery = Alert["notifications"][number]

const delivery = (fields: Partial<Delivery>): Delivery =>
  ({ channelId: "nc_1", kind: "alert", status: "pending", attempts: 1, ...fields }) as Delivery

describe("deliveryText", () => {
  it("says a delivery arrived, and an earlier failure as past, not as the current state", () => {
    assert.strictEqual(
      deliveryText(delivery({ status: "delivered" }), "ops"),
      "alert to ops: delivered after 1 attempt"
    )
    assert.strictEqual(
      deliveryText(delivery({ status: "delivered", attempts: 3, lastError: "HTTP 503" }), "ops"),
      "alert to ops: delivered after 3 attempts (an earlier attempt failed: HTTP 503)"
    )
  })

  it("says a dead delivery was given up on, and a pending one's last error as the last attempt's", () => {
    assert.strictEqual(
      deliveryText(delivery({ status: "dead", attempts: 4, lastError: "HTTP 500" }), "ops"),
      "alert to ops: not delivered, gave up after 4 attempts (HTTP 500)"
    )
    assert.strictEqual(
      deliveryText(delivery({ status: "pending", attempts: 2, lastError: "timeout" }), "ops"),
      "alert to ops: pending after 2 attempts (last attempt: timeout)"
    )
  })
})
