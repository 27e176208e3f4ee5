/**
 * On-chain activity of an address: the configured EVM networks on which it has sent a transaction (a nonce), holds
 * a balance, is a contract (code), or has received a token (a `Transfer` log to it), read from the operator's own
 * nodes in parallel within a time budget. A node that does not answer in time, or fails, leaves its network
 * unchecked, named as such: the answer is partial, never a failed request. Unknown is never "no activity": what was
 * checked and what could not be is part of every answer. What was read is kept per address, network and day.
 */
import { Clock, Context, Data, Effect, Layer } from "effect"
import { BoundedMemo, Chain, Instant } from "../kernel/index.ts"
import type { IntelResult } from "./IntelResult.ts"

/** What a node says of one account (`latest` block). */
export interface Account {
  readonly nonce: bigint
  readonly balance: bigint
  /** The account's code, `0x` when it has none. */
  readonly code: string
  /**
   * Whether a token `Transfer` log names it as recipient, read only when nonce, balance and code show nothing (an
   * address that only ever received tokens is active); undefined when not read.
   */
  readonly receivedTokens?: boolean
}

/** A node that could not be read (unreachable, an error answer, an answer that is not an account's). */
export class AccountReadError extends Data.TaggedError("AccountReadError")<{ readonly message: string }> {}

/** Reads accounts from the nodes the operator configured, by chain id. */
export class AccountReader extends Context.Service<
  AccountReader,
  {
    /** The chain ids with a node. */
    readonly chains: ReadonlyArray<number>
    readonly read: (chainId: number, address: string) => Effect.Effect<Account, AccountReadError>
  }
>()("@vigil/core/ChainActivity/AccountReader") {}

/** The chain id of each EVM network Vigil screens. */
export const chainIds: { readonly [N in Chain.Network]?: number } = {
  ethereum: 1,
  avalanche: 43114,
  polygon: 137,
  arbitrum: 42161,
  optimism: 10,
  base: 8453,
  bsc: 56,
  mantle: 5000,
  linea: 59144,
  manta: 169,
  blast: 81457,
  flare: 14,
  sonic: 146
}

const networkOfId = new Map(Object.entries(chainIds).map(([network, id]) => [id, network]))

/** The lowercase name a chain is reported by: its network's, or `chain-<id>` for a chain Vigil does not name. */
export const networkName = (chainId: number): string => networkOfId.get(chainId) ?? `chain-${chainId}`

/** Whether an account shows activity: a transaction sent, a balance, code, or a token received. */
export const isActive = (account: Account): boolean =>
  account.nonce > 0n ||
  account.balance > 0n ||
  (account.code !== "0x" && account.code !== "") ||
  account.receivedTokens === true

/** The activity found, and what could not be checked. */
export interface Activity {
  /** Networks (lowercase names) on which the address is active, in the order the nodes are configured. */
  readonly active: ReadonlyArray<string>
  /** Networks whose node answered (the address active there or not). */
  readonly checked: ReadonlyArray<string>
  /**
   * What could not be checked and why: a network whose node did not answer within the budget or failed, or, with
   * no node configured or an address of another family, every network.
   */
  readonly unchecked: ReadonlyArray<{ readonly network: string; readonly reason: string }>
}

/** Nothing could be checked, for `reason`. */
const none = (network: string, reason: string): Activity => ({
  active: [],
  checked: [],
  unchecked: [{ network, reason }]
})

/** The answer when no node is configured. */
export const noNode: Activity = none("every network", "no node is configured (VIGIL_RPC_URL_<chainId>)")

/** One network's answer: active or not, or why it was not checked. */
type Answer =
  { readonly chainId: number; readonly active: boolean } | { readonly chainId: number; readonly reason: string }

/** Knobs of the activity probe. */
export interface Settings {
  /** How long one request may wait for the nodes, all read at once. */
  readonly budgetMillis: number
  /** Readings kept (address × network × day). */
  readonly memo: number
}

export const defaultSettings: Settings = { budgetMillis: 300, memo: 100_000 }

/** Finds where an address is active. */
export class ChainActivity extends Context.Service<
  ChainActivity,
  {
    /** Whether any network can be checked (a node is configured); when not, {@link of} answers nothing at once. */
    readonly enabled: boolean
    /**
     * The networks with a node on which `address` is active; `only` narrows them to one network. Addresses of other
     * families than EVM, and a network without a node, give nothing.
     */
    readonly of: (address: string, only?: Chain.Network | "auto") => Effect.Effect<Activity>
  }
>()("@vigil/core/ChainActivity") {
  static readonly layer = (settings: Settings = defaultSettings): Layer.Layer<ChainActivity, never, AccountReader> =>
    Layer.effect(ChainActivity)(
      Effect.gen(function* () {
        const reader = yield* AccountReader
        const memo = BoundedMemo.make<string, boolean>(settings.memo)
        const budget = `${settings.budgetMillis} ms`
        /** One network's answer: active or not, or why it was not checked; kept for the day when read. */
        const check = (chainId: number, address: string, day: string) => {
          const key = `${chainId} ${address} ${day}`
          const kept = memo.get(key)
          if (kept !== undefined) return Effect.succeed<Answer>({ chainId, active: kept })
          return reader.read(chainId, address).pipe(
            Effect.map((account): Answer => {
              const active = isActive(account)
              memo.set(key, active)
              return { chainId, active }
            }),
            Effect.catchTag("AccountReadError", (e) => Effect.succeed<Answer>({ chainId, reason: e.message })),
            Effect.timeoutOrElse({
              duration: settings.budgetMillis,
              orElse: () => Effect.succeed<Answer>({ chainId, reason: `no answer within ${budget}` })
            })
          )
        }
        const of = (address: string, only: Chain.Network | "auto" = "auto"): Effect.Effect<Activity> => {
          if (reader.chains.length === 0) return Effect.succeed(noNode)
          const detected = Chain.detect(address)
          if (!detected.valid || detected.family !== "evm")
            return Effect.succeed(
              none(detected.valid ? detected.family : "this address", "activity is read for EVM addresses only")
            )
          const wanted = only === "auto" ? undefined : chainIds[only]
          if (only !== "auto" && (wanted === undefined || !reader.chains.includes(wanted)))
            return Effect.succeed(none(only, "no node is configured for it"))
          const chains = wanted === undefined ? reader.chains : reader.chains.filter((id) => id === wanted)
          return Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(
              Effect.forEach(chains, (id) => check(id, detected.normalized, Instant.day(now)), {
                concurrency: "unbounded"
              }),
              (answers) => ({
                active: answers.flatMap((a) => ("active" in a && a.active ? [networkName(a.chainId)] : [])),
                checked: answers.flatMap((a) => ("active" in a ? [networkName(a.chainId)] : [])),
                unchecked: answers.flatMap((a) =>
                  "reason" in a ? [{ network: networkName(a.chainId), reason: a.reason }] : []
                )
              })
            )
          )
        }
        return ChainActivity.of({ enabled: reader.chains.length > 0, of })
      })
    )
}

/** The warning an answer carries for what was not checked. */
export const uncheckedWarning = (u: Activity["unchecked"][number]): string =>
  `${u.network}: on-chain activity not checked (${u.reason})`

/**
 * A v3 result with the activity found: in `details` (when it has details) the networks the address is active on,
 * those checked and those that could not be; a warning for each network with a node that could not be checked.
 */
export const annotate = (result: IntelResult, activity: Activity): IntelResult => {
  // No node at all is said in details: a warning on every answer would say nothing new.
  const said = activity === noNode ? [] : activity.unchecked.map(uncheckedWarning)
  const warnings = [...(result.metadata.warnings ?? []), ...said]
  return {
    ...result,
    metadata: { ...result.metadata, ...(warnings.length === 0 ? {} : { warnings }) },
    ...(result.details === undefined
      ? {}
      : {
          details: {
            ...result.details,
            chains_with_activity: activity.active,
            activity: { checked: activity.checked, unchecked: activity.unchecked }
          }
        })
  }
}
