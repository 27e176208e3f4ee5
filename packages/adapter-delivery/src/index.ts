/**
 * Outbound adapter: webhook and mail delivery on Node (HTTPS transport, SMTP relay, name resolution, signing), and
 * the platform's SHA-256 for alert ids.
 */
export * as HttpsWebhookTransport from "./HttpsWebhookTransport.ts"
export * as NodeDigest from "./NodeDigest.ts"
export * as NodeHostResolver from "./NodeHostResolver.ts"
export * as NodeMac from "./NodeMac.ts"
export * as SmtpMailer from "./SmtpMailer.ts"
