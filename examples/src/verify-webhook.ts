/**
 * Receiving Vigil's webhooks: verify the Standard Webhooks signature with nothing but node:crypto, drop
 * replays and duplicates (deliveries are at-least-once; `webhook-id` is stable across retries), answer 2xx fast.
 *
 * Run: `WEBHOOK_SECRET=whsec_… node examples/dist/verify-webhook.js` (behind your TLS terminator), or copy
 * `verifyWebhook` into any Node service.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"

/** True when `body` was signed with `secret` at most `toleranceSeconds` ago (or ahead). */
export const verifyWebhook = (
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300
): boolean => {
  const id = headers["webhook-id"]
  const timestamp = headers["webhook-timestamp"]
  const signatures = headers["webhook-signature"]
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest()
  return signatures.split(" ").some((candidate) => {
    const [version, signature] = candidate.split(",")
    if (version !== "v1" || signature === undefined) return false
    const given = Buffer.from(signature, "base64")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** A receiver that verifies, deduplicates by `webhook-id` and hands each result to `onResult` once. */
export const makeReceiver = (secret: string, onResult: (event: { correlation_id: string; data: unknown }) => void) => {
  const seen = new Set<string>()
  return createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (body += chunk))
    req.on("end", () => {
      if (!verifyWebhook(secret, req.headers, body)) return void res.writeHead(401).end()
      const id = String(req.headers["webhook-id"])
      if (!seen.has(id)) {
        seen.add(id)
        onResult(JSON.parse(body))
      }
      res.writeHead(204).end()
    })
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env["WEBHOOK_SECRET"]
  if (secret === undefined) throw new Error("set WEBHOOK_SECRET to the secret returned when the webhook was registered")
  makeReceiver(secret, (event) => console.log(JSON.stringify(event))).listen(3001, "127.0.0.1", () =>
    console.log("receiver listening on http://127.0.0.1:3001")
  )
}
