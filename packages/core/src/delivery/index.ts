/** Delivery: webhooks, their durable outbox, the delivery loop, signing, the SSRF guard and the transport port. */
export * as HostResolver from "./HostResolver.ts"
export * as NetworkGuard from "./NetworkGuard.ts"
export * as WebhookDispatcher from "./WebhookDispatcher.ts"
export * as WebhookResponses from "./WebhookResponses.ts"
export * as Webhooks from "./Webhooks.ts"
export * as WebhookSigning from "./WebhookSigning.ts"
export * as WebhookStore from "./WebhookStore.ts"
export * as WebhookTransport from "./WebhookTransport.ts"
