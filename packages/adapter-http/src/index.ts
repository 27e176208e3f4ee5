/** Inbound adapter: the reference HTTP server of Vigil (Effect HttpApi on Node). */
export * as Api from "./Api.ts"
export * as Console from "./Console.ts"
export * as GatedServer from "./GatedServer.ts"
export * as HotRoutes from "./HotRoutes.ts"
export * as HttpMetrics from "./HttpMetrics.ts"
export * as Schemas from "./Schemas.ts"
export * as SystemHandlers from "./SystemHandlers.ts"
export * as VigilServer from "./VigilServer.ts"
