/** Monitoring: watch rules, contracts and their ABIs, chain data, bots, historical analysis and the follower. */
export * as Abi from "./Abi.ts"
export * as AbiSource from "./AbiSource.ts"
export * as ChainData from "./ChainData.ts"
export * as Contracts from "./Contracts.ts"
export * as ContractStore from "./ContractStore.ts"
export * as ChainFacts from "./ChainFacts.ts"
export * as Scan from "./Scan.ts"
export * as Rules from "./rules/index.ts"
