/** In-memory implementations of every Vigil storage port. */
export * as MemoryAdapter from "./MemoryAdapter.ts"
export * as MemoryApiKeyStore from "./MemoryApiKeyStore.ts"
export * as MemoryBotStore from "./MemoryBotStore.ts"
export * as MemoryContractStore from "./MemoryContractStore.ts"
export * as MemoryIntelIndex from "./MemoryIntelIndex.ts"
export * as MemoryQuotaStore from "./MemoryQuotaStore.ts"
export * as MemoryStorageProbe from "./MemoryStorageProbe.ts"
export * as MemoryWebhookStore from "./MemoryWebhookStore.ts"
