/** Outbound adapter: the chains' nodes over JSON-RPC and the verified-source services ABIs are fetched from. */
export * as AbiSources from "./AbiSources.ts"
export * as EvmAccounts from "./EvmAccounts.ts"
export * as EvmRpc from "./EvmRpc.ts"
export * as EvmTransfers from "./EvmTransfers.ts"
export * as JsonRpc from "./JsonRpc.ts"
export * as NewHeads from "./NewHeads.ts"
