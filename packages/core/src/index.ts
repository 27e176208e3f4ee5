/** Vigil's pure core: domain modules and the ports that adapters implement. */
export * as Chain from "./Chain.ts"
export * as Intel from "./Intel.ts"
export * as IntelIndex from "./ports/IntelIndex.ts"
export * as QuotaStore from "./ports/QuotaStore.ts"
export * as Scoring from "./Scoring.ts"
export * as StorageProbe from "./ports/StorageProbe.ts"
export * as StoreError from "./ports/StoreError.ts"
export * as Version from "./Version.ts"
