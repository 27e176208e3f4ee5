/** The reference HTTP server of Vigil (Effect HttpApi on Node). */
export * as Api from "./Api.ts"
export * as HotRoutes from "./HotRoutes.ts"
export * as HttpMetrics from "./HttpMetrics.ts"
export * as HttpsWebhookTransport from "./HttpsWebhookTransport.ts"
export * as NodeHostResolver from "./NodeHostResolver.ts"
export * as Schemas from "./Schemas.ts"
export * as SystemHandlers from "./SystemHandlers.ts"
export * as VigilServer from "./VigilServer.ts"
