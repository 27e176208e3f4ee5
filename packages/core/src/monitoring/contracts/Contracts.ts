/**
 * Contracts registered for monitoring (spec §2.9): validated, given an ABI (the one supplied, or a verified one
 * fetched, a proxy's implementation's included), and stored per API key. Rules name them by label.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Instant, RandomIds, type StoreError } from "../../kernel/index.ts"
import * as Abi from "../rules/Abi.ts"
import * as AbiSource from "./AbiSource.ts"
import { ContractState } from "../chain/ChainData.ts"
import type { Request } from "./Contract.ts"
import { type Contract, ContractStore } from "./ContractStore.ts"
import { isLabel } from "../rules/Ast.ts"

/** A field of a registration is wrong; `field` is its name in the request. */
export class InvalidContract extends Schema.TaggedError<InvalidContract>()("InvalidContract", {
  field: Schema.String,
  message: Schema.String
}) {}

/** Limits of one key's contracts. */
export const limits = { maxPerKey: 200, maxLabelLength: 64 }

/** The key has as many contracts as it may have. */
export class ContractLimitReached extends Schema.TaggedError<ContractLimitReached>()("ContractLimitReached", {
  max: Schema.Int
}) {
  override get message(): string {
    return `the key has ${this.max} contracts, the most it may have; delete one first`
  }
}

/** The key already has a contract of that label on that chain. */
export class ContractLabelTaken extends Schema.TaggedError<ContractLabelTaken>()("ContractLabelTaken", {
  label: Schema.String,
  chainId: Schema.Number
}) {
  override get message(): string {
    return `the label ${this.label} is already used on chain ${this.chainId}`
  }
}

/** The key has no contract of that id. */
export class ContractNotFound extends Schema.TaggedError<ContractNotFound>()("ContractNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `no contract ${this.id}`
  }
}

/** A registration as it arrives (`POST /v1/contracts`): the ABI, when given, as JSON or a JSON string. */
/** What registering a contract takes: the request's decoded fields ({@link Request}). */
export type Registration = Request

/** The selector of `decimals()`, the first 4 bytes of its keccak-256. */
const decimalsSelector = "0x313ce567"

/**
 * What a token's `decimals()` answers through the chain's node, when the ABI has it (no inputs, one unsigned integer
 * out) and the answer is a whole number from 0 to 255; undefined otherwise (no node, a revert, a strange answer): an
 * amount is then shown as it is stored.
 */
const decimalsOf = (chain: ContractState["Service"], chainId: number, address: string, abi: Abi.Abi) => {
  const declared = abi.some(
    (i) =>
      i.type === "function" &&
      i.name === "decimals" &&
      i.inputs.length === 0 &&
      i.outputs?.length === 1 &&
      /^uint\d*$/.test(i.outputs[0]!.type)
  )
  if (!declared) return Effect.succeed(undefined)
  return chain.call(chainId, address, decimalsSelector).pipe(
    Effect.map((out) => {
      const word = out.replace(/^0x/, "")
      if (word.length !== 64) return undefined
      const n = BigInt(`0x${word}`)
      return n <= 255n ? Number(n) : undefined
    }),
    Effect.orElseSucceed(() => undefined)
  )
}

const AbiFromText = Schema.fromJsonString(Abi.Abi)

/** The ABI of a registration: an array, or a JSON string of one (as explorers give it); with functions or events. */
const suppliedAbi = (raw: unknown): Effect.Effect<Abi.Abi, InvalidContract> =>
  Effect.gen(function* () {
    const decoded = yield* Effect.mapError(
      typeof raw === "string" ? Schema.decodeUnknownEffect(AbiFromText)(raw) : Schema.decodeUnknownEffect(Abi.Abi)(raw),
      (e) => new InvalidContract({ field: "ABI", message: `not a valid ABI: ${e.message.split("\n").join(" ")}` })
    )
    if (Abi.functions(decoded).length === 0 && Abi.events(decoded).length === 0)
      return yield* new InvalidContract({ field: "ABI", message: "the ABI has no functions or events to watch" })
    const problem = Abi.typeProblem(decoded)
    if (problem !== undefined)
      return yield* new InvalidContract({ field: "ABI", message: `not a valid ABI: ${problem}` })
    return decoded
  })

/** Registered contracts, per API key. */
export class Contracts extends Context.Service<
  Contracts,
  {
    /** Validates and stores a contract; without an ABI, a verified one is fetched (AbiNotFound: none anywhere). */
    readonly register: (
      keyId: string,
      registration: Registration
    ) => Effect.Effect<
      Contract,
      InvalidContract | ContractLabelTaken | ContractLimitReached | AbiSource.AbiNotFound | StoreError.StoreError
    >
    /** The key's contracts (on one chain, when given), oldest first. */
    readonly list: (keyId: string, chainId?: number) => Effect.Effect<ReadonlyArray<Contract>, StoreError.StoreError>
    readonly get: (keyId: string, id: string) => Effect.Effect<Contract, ContractNotFound | StoreError.StoreError>
    readonly remove: (keyId: string, id: string) => Effect.Effect<void, ContractNotFound | StoreError.StoreError>
  }
>()("@vigil/core/Contracts") {
  /** The service over a ContractStore, the verified-source services and the chains' nodes (for proxies). */
  static readonly layer: Layer.Layer<Contracts, never, ContractStore | AbiSource.AbiSource | ContractState> =
    Layer.effect(Contracts)(
      Effect.gen(function* () {
        const store = yield* ContractStore
        const sources = yield* AbiSource.AbiSource
        const chain = yield* ContractState
        const register = Effect.fn("Contracts.register")(function* (keyId: string, r: Registration) {
          const chainId = r.chainId
          if (typeof chainId !== "number" || !Number.isSafeInteger(chainId) || chainId < 1)
            return yield* new InvalidContract({ field: "chainId", message: "must be a positive whole number" })
          const address = r.contractAddress
          if (typeof address !== "string" || !/^0[xX][0-9a-fA-F]{40}$/.test(address))
            return yield* new InvalidContract({
              field: "contractAddress",
              message: "must be an EVM address (0x and 40 hex digits)"
            })
          const label = r.label
          if (typeof label !== "string" || label.length > limits.maxLabelLength || !isLabel(label))
            return yield* new InvalidContract({
              field: "label",
              message: `must be an identifier of at most ${limits.maxLabelLength} characters (letters, digits, _; not starting with a digit) that is not a reserved word of the rule language`
            })
          const owned = yield* store.list(keyId)
          if (owned.length >= limits.maxPerKey) return yield* new ContractLimitReached({ max: limits.maxPerKey })
          if (owned.some((c) => c.chainId === chainId && c.label === label))
            return yield* new ContractLabelTaken({ label, chainId })
          const lower = `0x${address.slice(2).toLowerCase()}`
          const found =
            r.ABI === undefined || r.ABI === null
              ? yield* AbiSource.resolve(chainId, lower).pipe(
                  Effect.provideService(AbiSource.AbiSource, sources),
                  Effect.provideService(ContractState, chain)
                )
              : { abi: yield* suppliedAbi(r.ABI), source: "supplied" }
          const decimals = yield* decimalsOf(chain, chainId, lower, found.abi)
          const now = yield* Clock.currentTimeMillis
          const contract: Contract = {
            id: `ct_${now}_${RandomIds.alphanumeric(9)}`,
            keyId,
            chainId,
            address: lower,
            label,
            abi: found.abi,
            abiSource: found.source,
            ...("proxy" in found && found.proxy !== undefined ? { proxy: found.proxy } : {}),
            ...(decimals === undefined ? {} : { decimals }),
            created: Instant.iso(now)
          }
          // Checked again as it is stored, in one transaction: two requests racing never pass the cap or share a label.
          const added = yield* store.add(contract, limits.maxPerKey)
          if (added === "label taken") return yield* new ContractLabelTaken({ label, chainId })
          if (added === "limit reached") return yield* new ContractLimitReached({ max: limits.maxPerKey })
          return contract
        })
        const get = (keyId: string, id: string) =>
          Effect.flatMap(store.get(keyId, id), (c) =>
            c === undefined ? Effect.fail(new ContractNotFound({ id })) : Effect.succeed(c)
          )
        return {
          register,
          list: (keyId, chainId) => store.list(keyId, chainId),
          get,
          remove: (keyId, id) =>
            Effect.flatMap(store.remove(keyId, id), (removed) =>
              removed ? Effect.void : Effect.fail(new ContractNotFound({ id }))
            )
        }
      })
    )
}
