/**
 * Vigil in a Node process: the Promise facade over an embedded SQLite database, the ingest input reader, the list
 * refresh, and `Outbound`, the outbound adapters (chains' nodes, deliveries) composed as one layer.
 */
export * as BuiltinLists from "./BuiltinLists.ts"
export * as Input from "./Input.ts"
export * as Outbound from "./Outbound.ts"
export * as Refresh from "./Refresh.ts"
export * as Settings from "./Settings.ts"
export * as Vigil from "./Vigil.ts"
export { createVigil } from "./Vigil.ts"
