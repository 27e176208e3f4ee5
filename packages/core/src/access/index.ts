/** Access: API keys (issued once, stored hashed) and per-key rate and quota limits. */
export * as ApiKeys from "./ApiKeys.ts"
export * as ApiKeyStore from "./ApiKeyStore.ts"
export * as Quota from "./Quota.ts"
export * as QuotaStore from "./QuotaStore.ts"
export * as Status from "./Status.ts"
