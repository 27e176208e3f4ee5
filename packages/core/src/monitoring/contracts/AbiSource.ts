/**
 * Where a contract's ABI comes from when it is registered without one: verified-source services (Sourcify,
 * Etherscan-compatible explorers) tried in order, and for an EIP-1967 proxy, its implementation's ABI (the slot read
 * through the chain's node). What was tried is kept, so "no ABI anywhere" can say where it looked.
 */
import { Context, Effect, Schema } from "effect"
import * as Abi from "../rules/Abi.ts"
import { ContractState } from "../chain/ChainData.ts"

/**
 * Why a verified-source service could not answer (not the same as "not verified there").
 * - `Timeout`, `RateLimited`, `Unavailable`: worth trying again later.
 * - `Invalid`: it answered something that is not its API's answer (or refused our key).
 */
export const AbiSourceErrorReason = Schema.Literals(["Timeout", "RateLimited", "Unavailable", "Invalid"])

/** A verified-source service could not answer; `source` names it. */
export class AbiSourceError extends Schema.TaggedError<AbiSourceError>()("AbiSourceError", {
  reason: AbiSourceErrorReason,
  source: Schema.String,
  message: Schema.String
}) {}

/** A service's answer about one address: its verified ABI, or that it has none (with the service's words). */
export type Lookup =
  { readonly _tag: "Verified"; readonly abi: Abi.Abi } | { readonly _tag: "NotVerified"; readonly detail: string }

/** One verified-source service. */
export interface Source {
  readonly name: string
  readonly lookup: (chainId: number, address: string) => Effect.Effect<Lookup, AbiSourceError>
}

/** The verified-source services, in the order they are tried. */
export class AbiSource extends Context.Service<AbiSource, { readonly sources: ReadonlyArray<Source> }>()(
  "@vigil/core/AbiSource"
) {}

/** An ABI found for an address: where from, and for a proxy, the implementation it came from. */
export interface Resolved {
  readonly abi: Abi.Abi
  readonly source: string
  readonly proxy?: { readonly standard: "EIP-1967"; readonly implementation: string }
}

/** No ABI anywhere: what was tried, each with its answer. */
export class AbiNotFound extends Schema.TaggedError<AbiNotFound>()("AbiNotFound", {
  chainId: Schema.Number,
  address: Schema.String,
  tried: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `no verified ABI for ${this.address} on chain ${this.chainId}: ${this.tried.join("; ")}`
  }
}

/** The EIP-1967 implementation slot: keccak256("eip1967.proxy.implementation") - 1. */
export const implementationSlot = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"

/** The address a storage word holds in its low 20 bytes, or undefined for zero. */
const addressIn = (word: string): string | undefined => {
  const hex = word.toLowerCase().replace(/^0x/, "").padStart(64, "0")
  const address = `0x${hex.slice(24)}`
  return /^0x0{40}$/.test(address) ? undefined : address
}

/**
 * The ABI of `address` on `chainId`: for an EIP-1967 proxy (the implementation slot read through the chain's node,
 * when one is configured), its implementation's ABI with the proxy's own entries that it lacks; otherwise the first
 * verified ABI of the services in order. A service that cannot answer is noted and the next one tried.
 */
export const resolve = (
  chainId: number,
  address: string
): Effect.Effect<Resolved, AbiNotFound, AbiSource | ContractState> =>
  Effect.gen(function* () {
    const { sources } = yield* AbiSource
    const chain = yield* ContractState
    const tried: Array<string> = []
    const first = (target: string, label: string) =>
      Effect.gen(function* () {
        for (const source of sources) {
          const answer = yield* Effect.result(source.lookup(chainId, target))
          if (answer._tag === "Failure") tried.push(`${source.name} (${label}): ${answer.failure.message}`)
          else if (answer.success._tag === "NotVerified")
            tried.push(`${source.name} (${label}): ${answer.success.detail}`)
          else return { abi: answer.success.abi, source: source.name }
        }
        return undefined
      })
    const slot = yield* Effect.result(chain.storageAt(chainId, address, implementationSlot))
    const implementation = slot._tag === "Success" ? addressIn(slot.success) : undefined
    if (slot._tag === "Failure") tried.push(`EIP-1967 proxy check: ${slot.failure.message}`)
    else if (implementation === undefined) tried.push("EIP-1967 proxy check: not a proxy")
    const own = yield* first(address, "contract")
    if (implementation !== undefined) {
      const behind = yield* first(implementation, `implementation ${implementation}`)
      if (behind !== undefined) {
        const known = new Set(behind.abi.map(key))
        return {
          abi: [...behind.abi, ...(own?.abi ?? []).filter((item) => !known.has(key(item)))],
          source: behind.source,
          proxy: { standard: "EIP-1967", implementation }
        } satisfies Resolved
      }
    }
    if (own !== undefined) return own
    return yield* new AbiNotFound({ chainId, address, tried })
  })

/** An entry's identity in an ABI: kind and signature. */
const key = (item: Abi.Item): string =>
  item.type === "function" || item.type === "event" ? `${item.type} ${Abi.signature(item)}` : item.type
