/**
 * Vigil's pure core, by bounded context: the kernel, access, screening and delivery (monitoring builds on all
 * three). Each context's modules are re-exported here under their own names.
 */
export * from "./access/index.ts"
export * from "./delivery/index.ts"
export * from "./kernel/index.ts"
export * from "./monitoring/index.ts"
export * from "./screening/index.ts"
export * as Engine from "./Engine.ts"
