/** PostgreSQL implementations of Vigil's storage ports, for several instances acting as one service. */
export * as PgAdapter from "./PgAdapter.ts"
export * as PgApiKeyStore from "./PgApiKeyStore.ts"
export * as PgBlockStore from "./PgBlockStore.ts"
export * as PgBotStore from "./PgBotStore.ts"
export * as PgContractStore from "./PgContractStore.ts"
export * as PgDatabase from "./PgDatabase.ts"
export * as PgQuotaStore from "./PgQuotaStore.ts"
export * as PgStorageProbe from "./PgStorageProbe.ts"
