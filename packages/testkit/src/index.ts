/** Tools of tests and benchmarks: a local EVM node, the Solidity fixtures deployed on it, a database, a mail relay. */
export * as Anvil from "./Anvil.ts"
export * as Solidity from "./Solidity.ts"
export * as Postgres from "./Postgres.ts"
export * as MailRelay from "./MailRelay.ts"
