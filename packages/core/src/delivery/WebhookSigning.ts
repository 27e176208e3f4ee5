/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`, the secret being
 * `whsec_<base64 key>`.
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { randomBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { base64 } from "@scure/base"
import { ConstantTime } from "../kernel/index.ts"

/** A new secret: `whsec_` and 24 random bytes in base64. */
export const newSecret = (): string => `whsec_${base64.encode(randomBytes(24))}`

const keyOf = (secret: string): Uint8Array => base64.decode(secret.startsWith("whsec_") ? secret.slice(6) : secret)

/** HMAC-SHA256 of a message (as UTF-8) under a key. */
export type Mac = (key: Uint8Array, message: string) => Uint8Array

/** HMAC-SHA256 in JavaScript: runs anywhere; a host may hand the dispatcher its platform's own, which is faster. */
export const pureMac: Mac = (key, message) => hmac(sha256, key, utf8ToBytes(message))

/** The `v1,<base64>` signature of one message. */
export const sign = (secret: string, id: string, timestampSeconds: number, body: string, mac: Mac = pureMac): string =>
  `v1,${base64.encode(mac(keyOf(secret), `${id}.${timestampSeconds}.${body}`))}`

/** The three headers of a signed delivery. */
export const headers = (secret: string, id: string, timestampSeconds: number, body: string, mac: Mac = pureMac) => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": sign(secret, id, timestampSeconds, body, mac)
})

/**
 * Whether a received message is authentic: one of the space-separated `v1,` signatures matches and the
 * timestamp is within `toleranceSeconds` of `nowSeconds` (against replays).
 */
export const verify = (
  secret: string,
  received: { readonly id: string; readonly timestamp: string; readonly signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300
): boolean => {
  const timestamp = Number(received.timestamp)
  if (!Number.isSafeInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false
  const expected = sign(secret, received.id, timestamp, body)
  return received.signature.split(" ").some((candidate) => ConstantTime.equal(candidate, expected))
}
