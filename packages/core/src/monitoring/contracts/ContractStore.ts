/**
 * Port: the contracts each API key registered for monitoring, by chain, with the ABI rules are typed and decoded
 * against. A label names one contract per key and chain (rules say `tx1.<label>.E.Transfer`).
 */
import { Context, type Effect } from "effect"
import type { StoreError } from "../../kernel/index.ts"
import type { Contract } from "./Contract.ts"

export { Contract } from "./Contract.ts"

export class ContractStore extends Context.Service<
  ContractStore,
  {
    /**
     * Stores a contract unless its key already has that label on that chain (`label taken`) or already has `max`
     * contracts (`limit reached`), both decided in the same transaction; nothing is stored then.
     */
    readonly add: (
      contract: Contract,
      max?: number
    ) => Effect.Effect<"added" | "label taken" | "limit reached", StoreError.StoreError>
    /** The key's contracts (on one chain, when given), oldest first. */
    readonly list: (keyId: string, chainId?: number) => Effect.Effect<ReadonlyArray<Contract>, StoreError.StoreError>
    /** The key's contract of that id; undefined when the key has none (another key's id included). */
    readonly get: (keyId: string, id: string) => Effect.Effect<Contract | undefined, StoreError.StoreError>
    /** Removes the key's contract; `false` when the key has no such contract. */
    readonly remove: (keyId: string, id: string) => Effect.Effect<boolean, StoreError.StoreError>
  }
>()("@vigil/core/ContractStore") {}
