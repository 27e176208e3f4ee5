/** ContractStore in process memory: contracts in a map, each method one synchronous step. */
import { ContractStore } from "@vigil/core"
import { Effect, Layer } from "effect"

const make = Effect.sync(() => {
  const contracts = new Map<string, ContractStore.Contract>()
  /** The key's contracts, oldest first (registration order among equal instants). */
  const ofKey = (keyId: string) =>
    [...contracts.values()]
      .filter((c) => c.keyId === keyId)
      .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))
  return ContractStore.ContractStore.of({
    add: (contract, max = Infinity) =>
      Effect.sync(() => {
        const owned = ofKey(contract.keyId)
        if (owned.length >= max) return "limit reached" as const
        if (owned.some((c) => c.chainId === contract.chainId && c.label === contract.label))
          return "label taken" as const
        contracts.set(contract.id, contract)
        return "added" as const
      }),
    list: (keyId, chainId) =>
      Effect.sync(() => ofKey(keyId).filter((c) => chainId === undefined || c.chainId === chainId)),
    get: (keyId, id) =>
      Effect.sync(() => {
        const c = contracts.get(id)
        return c?.keyId === keyId ? c : undefined
      }),
    remove: (keyId, id) =>
      Effect.sync(() => {
        if (contracts.get(id)?.keyId !== keyId) return false
        return contracts.delete(id)
      })
  })
})

/** The memory ContractStore; each build starts empty. */
export const layer: Layer.Layer<ContractStore.ContractStore> = Layer.effect(ContractStore.ContractStore)(make)
