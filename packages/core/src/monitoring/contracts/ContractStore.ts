/**
 * Port: the contracts each API key registered for monitoring, by chain, with the ABI rules are typed and decoded
 * against. A label names one contract per key and chain (rules say `tx1.<label>.E.Transfer`).
 */
import { Context, type Effect } from "effect"
import type { StoreError } from "../../kernel/index.ts"
import type * as Abi from "../rules/Abi.ts"

/** A registered contract. */
export interface Contract {
  /** `ct_<epoch ms>_<9 lowercase alphanumerics>`. */
  readonly id: string
  /** The API key (its id) that owns it. */
  readonly keyId: string
  readonly chainId: number
  /** Lower-case 0x address. */
  readonly address: string
  readonly label: string
  readonly abi: Abi.Abi
  /** Where the ABI came from: `supplied`, or the verified-source service that gave it. */
  readonly abiSource: string
  /** For an EIP-1967 proxy registered without an ABI: the implementation whose ABI it was given. */
  readonly proxy?: { readonly standard: "EIP-1967"; readonly implementation: string }
  /** ISO 8601 instant of registration. */
  readonly created: string
}

/** Registered contracts. */
export class ContractStore extends Context.Service<
  ContractStore,
  {
    /** Stores a contract unless its key already has that label on that chain; `false` then (nothing stored). */
    readonly add: (contract: Contract) => Effect.Effect<boolean, StoreError.StoreError>
    /** The key's contracts (on one chain, when given), oldest first. */
    readonly list: (keyId: string, chainId?: number) => Effect.Effect<ReadonlyArray<Contract>, StoreError.StoreError>
    /** The key's contract of that id; undefined when the key has none (another key's id included). */
    readonly get: (keyId: string, id: string) => Effect.Effect<Contract | undefined, StoreError.StoreError>
    /** Removes the key's contract; `false` when the key has no such contract. */
    readonly remove: (keyId: string, id: string) => Effect.Effect<boolean, StoreError.StoreError>
  }
>()("@vigil/core/ContractStore") {}
