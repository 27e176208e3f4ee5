/** Outbound adapter: webhook and mail delivery on Node (HTTPS transport, SMTP relay, name resolution, signing). */
export * as HttpsWebhookTransport from "./HttpsWebhookTransport.ts"
export * as NodeHostResolver from "./NodeHostResolver.ts"
export * as NodeMac from "./NodeMac.ts"
export * as SmtpMailer from "./SmtpMailer.ts"
