/** Tools of tests and benchmarks: a local EVM node and the Solidity fixtures deployed on it. */
export * as Anvil from "./Anvil.ts"
export * as Solidity from "./Solidity.ts"
export * as Postgres from "./Postgres.ts"
