/** How an alert's delivery to a channel reads: delivered, retrying, or given up on, each in words. */
import type { Alert } from "./client"

/** A delivery's state in words: a retried delivery's old error is said as past, a dead one stands out. */
export const deliveryText = (n: Alert["notifications"][number], channel: string): string => {
  const attempts = `${n.attempts} attempt${n.attempts === 1 ? "" : "s"}`
  if (n.status === "delivered")
    return `${n.kind} to ${channel}: delivered after ${attempts}${n.lastError === undefined || n.attempts <= 1 ? "" : ` (an earlier attempt failed: ${n.lastError})`}`
  if (n.status === "dead")
    return `${n.kind} to ${channel}: not delivered, gave up after ${attempts}${n.lastError === undefined ? "" : ` (${n.lastError})`}`
  return `${n.kind} to ${channel}: ${n.status} after ${attempts}${n.lastError === undefined ? "" : ` (last attempt: ${n.lastError})`}`
}
