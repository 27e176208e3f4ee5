/** HMAC-SHA256 by `node:crypto` (OpenSSL): what signs deliveries in a Node host, several times faster than JavaScript's. */
import { createHmac } from "node:crypto"
import type { WebhookSigning } from "@vigil/core"

/** HMAC-SHA256 of `message` (as UTF-8) under `key`. */
export const mac: WebhookSigning.Mac = (key, message) => createHmac("sha256", key).update(message, "utf8").digest()
