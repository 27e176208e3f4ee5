/** Vigil in a Node process: the Promise facade over an embedded SQLite database, and the ingest input reader. */
export * as BuiltinLists from "./BuiltinLists.ts"
export * as Input from "./Input.ts"
export * as Refresh from "./Refresh.ts"
export * as Vigil from "./Vigil.ts"
export { createVigil } from "./Vigil.ts"
