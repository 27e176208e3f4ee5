/**
 * Counterparty exposure: the address's recent transfers on the configured EVM networks (ERC-20 and ERC-721
 * `Transfer` logs that name it, and native transfers where the node has traces), read within a block window and a
 * time budget; every counterparty screened against the lists; direct exposure to a listed one becomes a signal with
 * its direction, amounts, share of the address's volume, the counterparty's own evidence and the transactions.
 * One hop only. A zero-value transfer, or an incoming one below the dust share, is set aside and counted, never a
 * signal: a transfer from a listed address is something anyone can send anyone (address poisoning).
 */
import { Clock, Context, Data, Effect, Layer } from "effect"
import { BoundedMemo, Chain } from "../kernel/index.ts"
import { chainIds, networkName } from "./ChainActivity.ts"
import * as Intel from "./Intel.ts"
import { IntelIndex } from "./IntelIndex.ts"
import type { IntelResult, Signal } from "./IntelResult.ts"
import * as Scoring from "./Scoring.ts"
import { summaries } from "./Screening.ts"

/** One transfer that names the address as sender or recipient. */
export interface Transfer {
  readonly transaction: string
  readonly block: number
  /** The token contract, or `native` for the chain's own coin. */
  readonly token: string
  readonly standard: "erc20" | "erc721" | "native"
  readonly from: string
  readonly to: string
  /** The amount in the token's smallest unit (1 for an ERC-721 token). */
  readonly value: bigint
}

/** What a node gave for one address over a block window. */
export interface Transfers {
  readonly transfers: ReadonlyArray<Transfer>
  /** Whether native transfers were read (the node has traces); token transfers always are. */
  readonly native: boolean
}

/** A node that could not be read. */
export class TransferReadError extends Data.TaggedError("TransferReadError")<{ readonly message: string }> {}

/** Reads transfers from the nodes the operator configured, by chain id. */
export class TransferReader extends Context.Service<
  TransferReader,
  {
    /** The chain ids with a node. */
    readonly chains: ReadonlyArray<number>
    /** The newest block number. */
    readonly head: (chainId: number) => Effect.Effect<number, TransferReadError>
    /** The transfers that name `address` in blocks `from..to` (inclusive). */
    readonly transfers: (
      chainId: number,
      address: string,
      from: number,
      to: number
    ) => Effect.Effect<Transfers, TransferReadError>
  }
>()("@vigil/core/Exposure/TransferReader") {}

/** Knobs of exposure reading. */
export interface Settings {
  /** How long one request may wait for the nodes, all read at once. */
  readonly budgetMillis: number
  /** How many of the newest blocks of each chain are read. */
  readonly blocks: number
  /** An incoming transfer below this share of the address's volume of its token in the window is dust. */
  readonly dustShare: number
  /** How long what a node gave is kept (per chain and address). */
  readonly keepMillis: number
  /** Readings kept. */
  readonly memo: number
  /** Counterparties screened at most (the most active first). */
  readonly maxCounterparties: number
}

export const defaultSettings: Settings = {
  budgetMillis: 1_000,
  blocks: 10_000,
  dustShare: 0.001,
  keepMillis: 60_000,
  memo: 10_000,
  maxCounterparties: 1_000
}

/** The exposure signal of a counterparty's strongest risk, and its weight; undefined: not an exposure. */
export const exposureOf: {
  readonly [T in Scoring.SignalType]?: { readonly type: Scoring.SignalType; readonly weight: number }
} = {
  sanctions_match: { type: "exposure_sanctioned", weight: 60 },
  stablecoin_blacklist: { type: "exposure_blacklisted", weight: 50 },
  threat_actor: { type: "exposure_threat", weight: 50 },
  phishing: { type: "exposure_threat", weight: 50 },
  scam: { type: "exposure_threat", weight: 50 },
  ransomware: { type: "exposure_threat", weight: 50 },
  mixer: { type: "exposure_mixer", weight: 45 },
  darknet: { type: "exposure_mixer", weight: 45 },
  fraud: { type: "exposure_fraud", weight: 35 },
  sanctions_reported: { type: "exposure_reported", weight: 30 }
}

/** The highest score exposure alone can give (the top of `high`): it never makes an address BLOCK by itself. */
export const ceiling = 84

/** One network's window as read. */
export interface Window {
  readonly network: string
  readonly fromBlock: number
  readonly toBlock: number
  readonly transfers: number
  readonly native: boolean
}

/** What was read for an address: per network, the transfers and the window, or why it was not read. */
export interface Read {
  readonly windows: ReadonlyArray<Window & { readonly found: ReadonlyArray<Transfer> }>
  readonly unchecked: ReadonlyArray<{ readonly network: string; readonly reason: string }>
}

/** The exposure found, as the answer states it. */
export interface Found {
  readonly signals: ReadonlyArray<Signal>
  readonly metadata: {
    readonly budget_ms: number
    readonly dust_share: number
    readonly windows: ReadonlyArray<{
      readonly network: string
      readonly from_block: number
      readonly to_block: number
      readonly transfers: number
      readonly native: boolean
    }>
    readonly counterparties: number
    readonly listed: number
    readonly dust_ignored: number
  }
  readonly unchecked: ReadonlyArray<{ readonly network: string; readonly reason: string }>
}

interface Flow {
  readonly counterparty: string
  readonly network: string
  readonly incoming: Array<Transfer>
  readonly outgoing: Array<Transfer>
}

/**
 * Groups the transfers of `address` by counterparty, setting dust aside: a zero-value transfer (either way), or an
 * incoming one worth less than `dustShare` of the address's volume of that token on that network in the window.
 */
export const flows = (
  address: string,
  read: Read,
  dustShare: number
): { readonly flows: ReadonlyArray<Flow>; readonly dust: ReadonlyArray<Transfer & { readonly network: string }> } => {
  const byCounterparty = new Map<string, Flow>()
  const dust: Array<Transfer & { readonly network: string }> = []
  for (const w of read.windows) {
    const volume = new Map<string, bigint>()
    for (const t of w.found) volume.set(t.token, (volume.get(t.token) ?? 0n) + t.value)
    for (const t of w.found) {
      const incoming = t.to === address
      const counterparty = incoming ? t.from : t.to
      if (counterparty === address) continue
      const total = volume.get(t.token) ?? 0n
      // value / total < dustShare, in integers: value · 10⁶ < dustShare · 10⁶ · total.
      const tiny = incoming && t.value * 1_000_000n < BigInt(Math.round(dustShare * 1_000_000)) * total
      if (t.value === 0n || tiny) {
        dust.push({ ...t, network: w.network })
        continue
      }
      const key = `${w.network} ${counterparty}`
      const flow = byCounterparty.get(key) ?? { counterparty, network: w.network, incoming: [], outgoing: [] }
      ;(incoming ? flow.incoming : flow.outgoing).push(t)
      byCounterparty.set(key, flow)
    }
  }
  return { flows: [...byCounterparty.values()], dust }
}

const share = (part: bigint, total: bigint) => (total === 0n ? 0 : Number((part * 10_000n) / total) / 10_000)

/**
 * The exposure signals of the flows whose counterparty the lists name for a risk on `asOf` (its records given),
 * strongest first; `authorityOf` says how far each list's word goes.
 */
export const assess = (
  address: string,
  read: Read,
  records: ReadonlyArray<Intel.IntelRecord>,
  authorityOf: (list: string) => Intel.Authority,
  asOf: string,
  settings: Pick<Settings, "dustShare" | "budgetMillis">
): Found => assessFlows(read, flows(address, read, settings.dustShare), records, authorityOf, asOf, settings)

/** {@link assess} over the flows already grouped from `read`. */
const assessFlows = (
  read: Read,
  grouped: ReturnType<typeof flows>,
  records: ReadonlyArray<Intel.IntelRecord>,
  authorityOf: (list: string) => Intel.Authority,
  asOf: string,
  settings: Pick<Settings, "dustShare" | "budgetMillis">
): Found => {
  const { flows: all, dust } = grouped
  const byAddress = new Map<string, Array<Intel.IntelRecord>>()
  for (const r of records)
    if (Intel.activeOn(r, asOf)) byAddress.set(r.address, [...(byAddress.get(r.address) ?? []), r])
  const volume = new Map<string, bigint>()
  for (const w of read.windows)
    for (const t of w.found)
      volume.set(`${w.network} ${t.token}`, (volume.get(`${w.network} ${t.token}`) ?? 0n) + t.value)
  const signals: Array<Signal & { readonly weight: number }> = []
  let listed = 0
  for (const flow of all) {
    const theirs = byAddress.get(flow.counterparty) ?? []
    if (theirs.length === 0) continue
    const a = Scoring.assess(theirs, { authorityOf, officialLists: "the official lists" })
    const top = a.signals.find((s) => s.polarity === "risk")
    const exposure = top === undefined ? undefined : exposureOf[top.type]
    if (top === undefined || exposure === undefined) continue
    listed++
    const transfers = [...flow.incoming, ...flow.outgoing].sort((x, y) => x.block - y.block)
    const tokens = [...new Set(transfers.map((t) => t.token))].sort()
    const amounts = tokens.map((token) => {
      const of = (ts: ReadonlyArray<Transfer>) => ts.filter((t) => t.token === token).reduce((n, t) => n + t.value, 0n)
      const moved = of(flow.incoming) + of(flow.outgoing)
      return {
        token,
        standard: transfers.find((t) => t.token === token)!.standard,
        incoming: of(flow.incoming).toString(),
        outgoing: of(flow.outgoing).toString(),
        share: share(moved, volume.get(`${flow.network} ${token}`) ?? 0n)
      }
    })
    const direction =
      flow.incoming.length > 0 && flow.outgoing.length > 0 ? "both" : flow.incoming.length > 0 ? "incoming" : "outgoing"
    const words = { incoming: "received from", outgoing: "sent to", both: "exchanged with" }[direction]
    signals.push({
      type: exposure.type,
      weight: exposure.weight,
      source: top.source,
      polarity: "risk",
      summary: `${words[0]!.toUpperCase()}${words.slice(1)} ${flow.counterparty} on ${flow.network} in ${transfers.length} transfer${transfers.length === 1 ? "" : "s"} (first ${transfers[0]!.transaction}); the counterparty: ${top.summary}`,
      evidence: {
        ...top.evidence,
        exposure: {
          counterparty: flow.counterparty,
          network: flow.network,
          direction,
          transfers: transfers.length,
          transactions: [...new Set(transfers.map((t) => t.transaction))].slice(0, 10),
          amounts
        }
      }
    })
  }
  signals.sort((x, y) => y.weight - x.weight || x.summary.localeCompare(y.summary))
  return {
    signals,
    metadata: {
      budget_ms: settings.budgetMillis,
      dust_share: settings.dustShare,
      windows: read.windows.map((w) => ({
        network: w.network,
        from_block: w.fromBlock,
        to_block: w.toBlock,
        transfers: w.transfers,
        native: w.native
      })),
      counterparties: all.length,
      listed,
      dust_ignored: dust.length
    },
    unchecked: read.unchecked
  }
}

/** A v3 result with the exposure found: its signals, the score and action they raise it to, and the window read. */
export const annotate = (result: IntelResult, found: Found): IntelResult => {
  const warnings = [
    ...(result.metadata.warnings ?? []),
    ...found.unchecked.map((u) => `${u.network}: counterparty exposure not checked (${u.reason})`)
  ]
  const exposure = { ...found.metadata, complete: found.unchecked.length === 0 }
  const metadata = { ...result.metadata, exposure, ...(warnings.length === 0 ? {} : { warnings }) }
  if (found.signals.length === 0) return { ...result, metadata }
  // Exposure alone stops short of critical: it takes a list naming the address itself to BLOCK it.
  const raised = Math.round(Scoring.composite([result.score, ...found.signals.map((s) => s.weight)]))
  const score = result.score >= 85 ? raised : Math.min(ceiling, raised)
  const band = Scoring.band(score)
  const counterparties = found.signals.length
  const sentence = `Counterparty exposure raises the score from ${result.score} to ${score}: ${counterparties} listed counterpart${counterparties === 1 ? "y" : "ies"} in the window read (${found.signals.map((s) => `${s.type} ${s.evidence.exposure?.counterparty ?? ""}`).join("; ")}).`
  const firstPositive = result.signals.findIndex((s) => s.polarity === "positive")
  const signals =
    firstPositive === -1
      ? [...result.signals, ...found.signals]
      : [...result.signals.slice(0, firstPositive), ...found.signals, ...result.signals.slice(firstPositive)]
  return {
    ...result,
    score,
    risk_level: band,
    signals,
    recommendation: {
      ...result.recommendation,
      action: result.metadata.is_complete
        ? Scoring.actions[band]
        : band === "critical"
          ? "BLOCK"
          : result.recommendation.action,
      ...(result.metadata.is_complete ? { summary: summaries[band] } : {}),
      details: `${result.recommendation.details} ${sentence}`
    },
    metadata
  }
}

/** Reads exposure for an address and states it. */
export class Exposure extends Context.Service<
  Exposure,
  {
    /** Whether any network can be read (a node is configured). */
    readonly enabled: boolean
    /**
     * The exposure of `address` on the configured networks (`only` narrows them), judged against the lists of
     * `asOf`. Addresses of other families than EVM, and a network without a node, give nothing.
     */
    readonly of: (address: string, asOf: string, only?: Chain.Network | "auto") => Effect.Effect<Found>
  }
>()("@vigil/core/Exposure") {
  static readonly layer = (
    settings: Settings = defaultSettings
  ): Layer.Layer<Exposure, never, TransferReader | IntelIndex> =>
    Layer.effect(Exposure)(
      Effect.gen(function* () {
        const reader = yield* TransferReader
        const index = yield* IntelIndex
        const memo = BoundedMemo.make<string, { readonly at: number; readonly window: Read["windows"][number] }>(
          settings.memo
        )
        const budget = `${settings.budgetMillis} ms`
        type Answer = { readonly window: Read["windows"][number] } | { readonly unchecked: Read["unchecked"][number] }
        const readChain = (chainId: number, address: string, now: number): Effect.Effect<Answer> => {
          const key = `${chainId} ${address}`
          const kept = memo.get(key)
          if (kept !== undefined && now - kept.at < settings.keepMillis) return Effect.succeed({ window: kept.window })
          const network = networkName(chainId)
          return reader.head(chainId).pipe(
            Effect.flatMap((head) => {
              const from = Math.max(0, head - settings.blocks + 1)
              return Effect.map(reader.transfers(chainId, address, from, head), (t): Answer => {
                const window = {
                  network,
                  fromBlock: from,
                  toBlock: head,
                  transfers: t.transfers.length,
                  native: t.native,
                  found: t.transfers
                }
                memo.set(key, { at: now, window })
                return { window }
              })
            }),
            Effect.catchTag("TransferReadError", (e) =>
              Effect.succeed<Answer>({ unchecked: { network, reason: e.message } })
            ),
            Effect.timeoutOrElse({
              duration: settings.budgetMillis,
              orElse: () => Effect.succeed<Answer>({ unchecked: { network, reason: `no answer within ${budget}` } })
            })
          )
        }
        const empty: Found = assessEmpty(settings)
        const of = (address: string, asOf: string, only: Chain.Network | "auto" = "auto"): Effect.Effect<Found> => {
          const none = (network: string, reason: string) =>
            Effect.succeed<Found>({ ...empty, unchecked: [{ network, reason }] })
          if (reader.chains.length === 0)
            return none("every network", "no node is configured (VIGIL_RPC_URL_<chainId>)")
          const detected = Chain.detect(address)
          if (!detected.valid || detected.family !== "evm")
            return none(detected.valid ? detected.family : "this address", "transfers are read for EVM addresses only")
          const wanted = only === "auto" ? undefined : chainIds[only]
          if (only !== "auto" && (wanted === undefined || !reader.chains.includes(wanted)))
            return none(only, "no node is configured for it")
          const chains = wanted === undefined ? reader.chains : reader.chains.filter((id) => id === wanted)
          const self = detected.normalized
          return Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.flatMap(
              Effect.forEach(chains, (id) => readChain(id, self, now), { concurrency: "unbounded" }),
              (answers) => {
                const read: Read = {
                  windows: answers.flatMap((a) => ("window" in a ? [a.window] : [])),
                  unchecked: answers.flatMap((a) => ("unchecked" in a ? [a.unchecked] : []))
                }
                // Grouped once: the counterparties to look up, then the signals of those the lists name.
                const grouped = flows(self, read, settings.dustShare)
                const counterparties = [...new Set(grouped.flows.map((f) => f.counterparty))].slice(
                  0,
                  settings.maxCounterparties
                )
                if (counterparties.length === 0)
                  return Effect.succeed(assessFlows(read, grouped, [], () => "scraped", asOf, settings))
                return Effect.zipWith(index.lookup(counterparties), index.lists, (records, lists) => {
                  const authority = new Map(lists.map((l) => [l.list, l.authority]))
                  return assessFlows(read, grouped, records, (l) => authority.get(l) ?? "scraped", asOf, settings)
                }).pipe(
                  Effect.catchTag("StoreError", (e) =>
                    Effect.succeed<Found>({
                      ...assess(self, { windows: [], unchecked: [] }, [], () => "scraped", asOf, settings),
                      unchecked: [
                        ...read.unchecked,
                        ...read.windows.map((w) => ({
                          network: w.network,
                          reason: `the counterparties could not be screened: ${e.message}`
                        }))
                      ]
                    })
                  )
                )
              }
            )
          )
        }
        return Exposure.of({ enabled: reader.chains.length > 0, of })
      })
    )
}

const assessEmpty = (settings: Pick<Settings, "dustShare" | "budgetMillis">): Found =>
  assess("", { windows: [], unchecked: [] }, [], () => "scraped", "", settings)
