/**
 * Counterparty exposure: the address's transfers on the configured EVM networks (ERC-20 and ERC-721 `Transfer`
 * logs that name it, and native transfers from the node's traces), read within a block window that ends at the
 * head (or, with a past `as_of`, at the last block of that day) and a time budget; every counterparty screened
 * against the lists of that day; direct exposure to a listed one becomes a signal with its direction, amounts,
 * share of the address's volume, the counterparty's own evidence and the transactions. One hop only.
 *
 * What is not a counterparty: the address itself and system addresses (the zero address of mints and burns, burn
 * addresses, precompiles). What is possibly unsolicited (anyone can send anyone a token from a listed address): a
 * zero-value transfer either way, and an incoming one below the dust floor (an amount per token, in its units). From
 * a listed counterparty such a transfer is reported, marked as such, and does not raise the score.
 *
 * `complete` is earned: a network not read, a block range the node refused, or a kind of transfer it does not
 * serve makes it false, with a warning saying what was left out.
 */
import { Clock, Context, Data, Effect, Layer } from "effect"
import { BoundedMemo, Chain, Instant } from "../kernel/index.ts"
import { chainIds, networkName } from "./ChainActivity.ts"
import * as Intel from "./Intel.ts"
import { IntelIndex } from "./IntelIndex.ts"
import type { IntelResult, Signal } from "./IntelResult.ts"
import * as Scoring from "./Scoring.ts"
import { summaries } from "./Screening.ts"
import * as SystemAddresses from "./SystemAddresses.ts"

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

/** Blocks of a window whose transfers of one kind could not be read, and why. */
export interface Gap {
  readonly kind: "token" | "native"
  readonly fromBlock: number
  readonly toBlock: number
  readonly reason: string
}

/** What a node gave for one address over a block window. */
export interface Transfers {
  readonly transfers: ReadonlyArray<Transfer>
  /** The block ranges it could not read (a range it refused even split, a kind of transfer it does not serve). */
  readonly gaps: ReadonlyArray<Gap>
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
    /**
     * The newest block whose timestamp is at or before `seconds` (Unix time); undefined when the chain's first
     * block is later.
     */
    readonly blockAt: (chainId: number, seconds: number) => Effect.Effect<number | undefined, TransferReadError>
    /** The transfers that name `address` in blocks `from..to` (inclusive), and what could not be read. */
    readonly transfers: (
      chainId: number,
      address: string,
      from: number,
      to: number
    ) => Effect.Effect<Transfers, TransferReadError>
    /** The `decimals()` of these token contracts; a token without a readable answer is left out. */
    readonly decimals: (
      chainId: number,
      tokens: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, number>, TransferReadError>
  }
>()("@vigil/core/Exposure/TransferReader") {}

/**
 * The dust floor: an incoming transfer below it, from a listed counterparty, is possibly unsolicited. Amounts in
 * whole units of the coin or token (decimal strings, e.g. `"0.1"`), turned into smallest units with the token's
 * `decimals()`; a token whose decimals cannot be read has no floor (its transfers count).
 */
export interface DustFloor {
  /** The native coin (18 decimals on every EVM chain). */
  readonly native: string
  /** Any token not named in `tokens`. */
  readonly token: string
  /** Per token contract (lowercase address). */
  readonly tokens: Readonly<Record<string, string>>
}

/** Knobs of exposure reading. */
export interface Settings {
  /** How long one request may wait for the nodes, all read at once. */
  readonly budgetMillis: number
  /** How many of the newest blocks of each chain are read (up to the window's end). */
  readonly blocks: number
  /** The default dust floor; a request may set its own. */
  readonly dustFloor: DustFloor
  /** How long what a node gave is kept (per chain, address and window end). */
  readonly keepMillis: number
  /** Readings kept. */
  readonly memo: number
}

export const defaultSettings: Settings = {
  budgetMillis: 1_000,
  blocks: 10_000,
  dustFloor: { native: "0.1", token: "1", tokens: {} },
  keepMillis: 60_000,
  memo: 10_000
}

/** A whole-unit decimal amount (`"12"`, `"0.5"`), as the dust floor takes it. */
export const amountPattern = /^(0|[1-9][0-9]{0,30})(\.[0-9]{1,36})?$/

/** `amount` (whole units, {@link amountPattern}) in smallest units of a token of `decimals`; digits past them are dropped. */
export const smallestUnits = (amount: string, decimals: number): bigint => {
  const [whole = "0", fraction = ""] = amount.split(".")
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.slice(0, decimals).padEnd(decimals, "0") || "0")
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
  /** Whether native transfers were read over the whole window. */
  readonly native: boolean
}

/** What was read for an address: per network, the transfers, the window and its gaps, or why it was not read. */
export interface Read {
  readonly windows: ReadonlyArray<
    Window & {
      readonly found: ReadonlyArray<Transfer>
      readonly gaps?: ReadonlyArray<Gap>
      /** The chain's id, for reading its tokens' decimals. */
      readonly chainId?: number
    }
  >
  readonly unchecked: ReadonlyArray<{ readonly network: string; readonly reason: string }>
}

/** Transfers with a listed counterparty set aside as possibly unsolicited, as the answer reports them. */
export interface Unsolicited {
  readonly counterparty: string
  readonly network: string
  readonly type: Scoring.SignalType
  readonly list: string
  readonly reason: string
  readonly transactions: ReadonlyArray<string>
  readonly amounts: ReadonlyArray<{
    readonly token: string
    readonly standard: Transfer["standard"]
    readonly incoming: string
    readonly outgoing: string
  }>
}

/** The exposure found, as the answer states it. */
export interface Found {
  readonly signals: ReadonlyArray<Signal>
  readonly metadata: {
    readonly budget_ms: number
    readonly dust_floor: DustFloor
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
    readonly system_transfers: number
    readonly unsolicited: ReadonlyArray<Unsolicited>
    readonly gaps: ReadonlyArray<{
      readonly network: string
      readonly kind: Gap["kind"]
      readonly from_block: number
      readonly to_block: number
      readonly reason: string
    }>
  }
  readonly unchecked: ReadonlyArray<{ readonly network: string; readonly reason: string }>
}

interface Flow {
  readonly counterparty: string
  readonly network: string
  readonly incoming: Array<Transfer>
  readonly outgoing: Array<Transfer>
}

/** The transfers of a window grouped by counterparty, less what is never exposure. */
export interface Grouped {
  readonly flows: ReadonlyArray<Flow>
  /** Zero-value transfers (either way), with their network and counterparty: possibly unsolicited, never exposure. */
  readonly zero: ReadonlyArray<Transfer & { readonly network: string; readonly counterparty: string }>
  /** Transfers with a system address (mints, burns), never exposure. */
  readonly system: number
}

/**
 * Groups the transfers of `address` by counterparty: the address itself and system addresses are not
 * counterparties, and a zero-value transfer is set aside.
 */
export const flows = (address: string, read: Read): Grouped => {
  const byCounterparty = new Map<string, Flow>()
  const zero: Array<Transfer & { readonly network: string; readonly counterparty: string }> = []
  let system = 0
  for (const w of read.windows)
    for (const t of w.found) {
      const incoming = t.to === address
      const counterparty = incoming ? t.from : t.to
      if (counterparty === address) continue
      if (SystemAddresses.of(counterparty) !== undefined) {
        system++
        continue
      }
      if (t.value === 0n) {
        zero.push({ ...t, network: w.network, counterparty })
        continue
      }
      const key = `${w.network} ${counterparty}`
      const flow = byCounterparty.get(key) ?? { counterparty, network: w.network, incoming: [], outgoing: [] }
      ;(incoming ? flow.incoming : flow.outgoing).push(t)
      byCounterparty.set(key, flow)
    }
  return { flows: [...byCounterparty.values()], zero, system }
}

/** Every counterparty of the grouped transfers (zero-value ones included: they are reported when listed). */
export const counterpartiesOf = (grouped: Grouped): ReadonlyArray<string> => [
  ...new Set([...grouped.flows.map((f) => f.counterparty), ...grouped.zero.map((t) => t.counterparty)])
]

const share = (part: bigint, total: bigint) => (total === 0n ? 0 : Number((part * 10_000n) / total) / 10_000)

/** The floor of a transfer in its smallest units (on its network); undefined: it has none (it counts). */
export type FloorOf = (network: string, t: Transfer) => bigint | undefined

/** The floor of `floor` for tokens whose decimals are known (`decimals` by network and token). */
export const floorOf =
  (floor: DustFloor, decimals: (network: string, token: string) => number | undefined): FloorOf =>
  (network, t) => {
    if (t.standard === "native") return smallestUnits(floor.native, 18)
    if (t.standard === "erc721") return undefined
    const d = decimals(network, t.token)
    return d === undefined ? undefined : smallestUnits(floor.tokens[t.token] ?? floor.token, d)
  }

const summed = (ts: ReadonlyArray<Transfer>, token: string) =>
  ts.filter((t) => t.token === token).reduce((n, t) => n + t.value, 0n)

const amountsOf = (incoming: ReadonlyArray<Transfer>, outgoing: ReadonlyArray<Transfer>) =>
  [...new Set([...incoming, ...outgoing].map((t) => t.token))].sort().map((token) => ({
    token,
    standard: [...incoming, ...outgoing].find((t) => t.token === token)!.standard,
    incoming: summed(incoming, token).toString(),
    outgoing: summed(outgoing, token).toString()
  }))

/** The counterparty's strongest risk as an exposure, from its records in force on `asOf`; undefined: none. */
const riskOf = (
  theirs: ReadonlyArray<Intel.IntelRecord>,
  authorityOf: (list: string) => Intel.Authority
):
  | { readonly top: Scoring.Signal; readonly exposure: { readonly type: Scoring.SignalType; readonly weight: number } }
  | undefined => {
  if (theirs.length === 0) return undefined
  const a = Scoring.assess(theirs, { authorityOf, officialLists: "the official lists" })
  const top = a.signals.find((s) => s.polarity === "risk")
  const exposure = top === undefined ? undefined : exposureOf[top.type]
  return top === undefined || exposure === undefined ? undefined : { top, exposure }
}

/** A counterparty's strongest risk, and the exposure it gives. */
type Risk = NonNullable<ReturnType<typeof riskOf>>

/** Transfers with a listed counterparty set aside as possibly unsolicited, as the answer reports them. */
const unsolicitedOf = (
  counterparty: string,
  network: string,
  risk: Risk,
  reason: string,
  incoming: ReadonlyArray<Transfer>,
  outgoing: ReadonlyArray<Transfer>
): Unsolicited => ({
  counterparty,
  network,
  type: risk.exposure.type,
  list: risk.top.evidence.list,
  reason,
  transactions: [
    ...new Set([...incoming, ...outgoing].sort((x, y) => x.block - y.block).map((t) => t.transaction))
  ].slice(0, 10),
  amounts: amountsOf(incoming, outgoing)
})

/**
 * The exposure signal of a flow with a listed counterparty (its `incoming` those that count): direction, amounts
 * and their share of the address's volume (`volume` by network and token), the transactions, and the counterparty's
 * own evidence.
 */
const exposureSignal = (
  flow: Flow,
  incoming: ReadonlyArray<Transfer>,
  { top, exposure }: Risk,
  volume: ReadonlyMap<string, bigint>
): Signal & { readonly weight: number } => {
  const transfers = [...incoming, ...flow.outgoing].sort((x, y) => x.block - y.block)
  const amounts = amountsOf(incoming, flow.outgoing).map((a) => ({
    ...a,
    share: share(BigInt(a.incoming) + BigInt(a.outgoing), volume.get(`${flow.network} ${a.token}`) ?? 0n)
  }))
  const direction =
    incoming.length > 0 && flow.outgoing.length > 0 ? "both" : incoming.length > 0 ? "incoming" : "outgoing"
  const words = { incoming: "received from", outgoing: "sent to", both: "exchanged with" }[direction]
  return {
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
  }
}

/**
 * The exposure of the grouped transfers whose counterparty the lists name for a risk on `asOf` (its records
 * given), strongest first; `authorityOf` says how far each list's word goes, `floor` what is dust.
 */
export const assess = (
  read: Read,
  grouped: Grouped,
  records: ReadonlyArray<Intel.IntelRecord>,
  authorityOf: (list: string) => Intel.Authority,
  asOf: string,
  settings: { readonly budgetMillis: number; readonly dustFloor: DustFloor },
  floor: FloorOf
): Found => {
  const byAddress = new Map<string, Array<Intel.IntelRecord>>()
  for (const r of records)
    if (Intel.activeOn(r, asOf)) byAddress.set(r.address, [...(byAddress.get(r.address) ?? []), r])
  const volume = new Map<string, bigint>()
  for (const w of read.windows)
    for (const t of w.found)
      volume.set(`${w.network} ${t.token}`, (volume.get(`${w.network} ${t.token}`) ?? 0n) + t.value)
  const signals: Array<Signal & { readonly weight: number }> = []
  const unsolicited: Array<Unsolicited> = []
  let listed = 0
  let belowFloor = 0
  const report = (
    counterparty: string,
    network: string,
    risk: Risk,
    reason: string,
    incoming: ReadonlyArray<Transfer>,
    outgoing: ReadonlyArray<Transfer>
  ) => unsolicited.push(unsolicitedOf(counterparty, network, risk, reason, incoming, outgoing))
  for (const flow of grouped.flows) {
    const risk = riskOf(byAddress.get(flow.counterparty) ?? [], authorityOf)
    if (risk === undefined) continue
    listed++
    // Received below the floor: possibly unsolicited, reported apart and not scored.
    const below = flow.incoming.filter((t) => {
      const f = floor(flow.network, t)
      return f !== undefined && t.value < f
    })
    const incoming = flow.incoming.filter((t) => !below.includes(t))
    if (below.length > 0) {
      belowFloor += below.length
      report(flow.counterparty, flow.network, risk, "received below the dust floor", below, [])
    }
    if (incoming.length === 0 && flow.outgoing.length === 0) continue
    signals.push(exposureSignal(flow, incoming, risk, volume))
  }
  // Zero-value transfers with a listed counterparty: anyone can forge one, so they are reported, never scored.
  const zeroBy = new Map<string, Array<Transfer>>()
  for (const t of grouped.zero) {
    if (!byAddress.has(t.counterparty)) continue
    const key = `${t.network} ${t.counterparty}`
    zeroBy.set(key, [...(zeroBy.get(key) ?? []), t])
  }
  for (const [key, ts] of zeroBy) {
    const [network, counterparty] = key.split(" ") as [string, string]
    const risk = riskOf(byAddress.get(counterparty) ?? [], authorityOf)
    if (risk === undefined) continue
    const incoming = ts.filter((t) => t.from === counterparty)
    report(
      counterparty,
      network,
      risk,
      "zero-value transfers",
      incoming,
      ts.filter((t) => !incoming.includes(t))
    )
  }
  signals.sort((x, y) => y.weight - x.weight || x.summary.localeCompare(y.summary))
  return {
    signals,
    metadata: {
      budget_ms: settings.budgetMillis,
      dust_floor: settings.dustFloor,
      windows: read.windows.map((w) => ({
        network: w.network,
        from_block: w.fromBlock,
        to_block: w.toBlock,
        transfers: w.transfers,
        native: w.native
      })),
      counterparties: grouped.flows.length,
      listed,
      dust_ignored: grouped.zero.length + belowFloor,
      system_transfers: grouped.system,
      unsolicited,
      gaps: read.windows.flatMap((w) =>
        (w.gaps ?? []).map((g) => ({
          network: w.network,
          kind: g.kind,
          from_block: g.fromBlock,
          to_block: g.toBlock,
          reason: g.reason
        }))
      )
    },
    unchecked: read.unchecked
  }
}

/** What an answer says of a gap. */
const gapWarning = (g: Found["metadata"]["gaps"][number]) =>
  `${g.network}: ${g.kind === "native" ? "native" : "token"} transfers in blocks ${g.from_block}–${g.to_block} not read (${g.reason}), so counterparty exposure there is not known`

/** Whether everything the window covers was read and screened. */
export const isComplete = (found: Found) => found.unchecked.length === 0 && found.metadata.gaps.length === 0

/** A v3 result with the exposure found: its signals, the score and action they raise it to, and the window read. */
export const annotate = (result: IntelResult, found: Found): IntelResult => {
  const unsolicited = found.metadata.unsolicited
  const warnings = [
    ...(result.metadata.warnings ?? []),
    ...found.unchecked.map((u) => `${u.network}: counterparty exposure not checked (${u.reason})`),
    ...found.metadata.gaps.map(gapWarning),
    ...unsolicited.map(
      (u) =>
        `${u.network}: ${u.reason} with ${u.counterparty} (${u.type.replace("exposure_", "")} on ${u.list}) set aside as possibly unsolicited, not scored (first ${u.transactions[0] ?? "?"})`
    )
  ]
  const exposure = { ...found.metadata, complete: isComplete(found) }
  const metadata = { ...result.metadata, exposure, ...(warnings.length === 0 ? {} : { warnings }) }
  // What was not read is said where a reader looks first: an empty reading is not a clean one.
  const unread = exposure.complete
    ? ""
    : " Counterparty exposure was not read in full (metadata.warnings say what was left out), so no exposure found is not proof of none."
  if (found.signals.length === 0)
    return {
      ...result,
      recommendation: { ...result.recommendation, details: `${result.recommendation.details}${unread}` },
      metadata
    }
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
      details: `${result.recommendation.details} ${sentence}${unread}`
    },
    metadata
  }
}

/** What one request may set of exposure reading. */
export interface Request {
  /** Its dust floor, over the default's (`tokens` merged). */
  readonly dustFloor?: Partial<DustFloor>
}

/** Counterparties looked up per call of the index; the event loop is yielded between calls. */
const lookupPage = 1_000

const nothing: Grouped = { flows: [], zero: [], system: 0 }

/** The last second (Unix time) of `day` (`YYYY-MM-DD`, UTC). */
const endOfDay = (day: string) => Math.floor(Date.parse(`${day}T00:00:00.000Z`) / 1000) + 86_399

/** A chain's reading of an address: its window's transfers and gaps, or why it was not read. */
type ChainAnswer = { readonly window: Read["windows"][number] } | { readonly unchecked: Read["unchecked"][number] }

/**
 * Reads one chain for an address within the budget: the window up to the head (today) or the last block of a past
 * day, kept `keepMillis` per chain, address and window end; a node that fails or is late leaves it unchecked.
 */
const chainReader = (reader: TransferReader["Service"], settings: Settings) => {
  type Read1 = Read["windows"][number]
  type Answer = ChainAnswer
  const memo = BoundedMemo.make<string, { readonly at: number; readonly window: Read1 }>(settings.memo)
  /** The last block of a past day, per chain: final once the day is over. */
  const ends = BoundedMemo.make<string, { readonly end: number | undefined }>(settings.memo)
  const budget = `${settings.budgetMillis} ms`

  /** The window's last block: the head today, the last block of a past day. */
  const windowEnd = (chainId: number, asOf: string, today: string) => {
    if (asOf >= today) return reader.head(chainId)
    const key = `${chainId} ${asOf}`
    const kept = ends.get(key)
    if (kept !== undefined) return Effect.succeed(kept.end)
    return Effect.tap(reader.blockAt(chainId, endOfDay(asOf)), (end) => Effect.sync(() => ends.set(key, { end })))
  }

  const readChain = (
    chainId: number,
    address: string,
    asOf: string,
    today: string,
    now: number
  ): Effect.Effect<Answer> => {
    const key = `${chainId} ${address} ${asOf >= today ? "head" : asOf}`
    const kept = memo.get(key)
    if (kept !== undefined && now - kept.at < settings.keepMillis) return Effect.succeed({ window: kept.window })
    const network = networkName(chainId)
    return windowEnd(chainId, asOf, today).pipe(
      Effect.flatMap((end): Effect.Effect<Answer, TransferReadError> => {
        if (end === undefined)
          return Effect.succeed({ unchecked: { network, reason: `the chain has no block on or before ${asOf}` } })
        const from = Math.max(0, end - settings.blocks + 1)
        return Effect.map(reader.transfers(chainId, address, from, end), (t): Answer => {
          const window: Read1 = {
            network,
            chainId,
            fromBlock: from,
            toBlock: end,
            transfers: t.transfers.length,
            native: !t.gaps.some((g) => g.kind === "native"),
            found: t.transfers,
            gaps: t.gaps
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

  return readChain
}

/** Every counterparty's records, a page per call of the index, yielding between pages. */
const pagedLookup = (index: IntelIndex["Service"]) => (counterparties: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(
      Array.from({ length: Math.ceil(counterparties.length / lookupPage) }, (_, i) =>
        counterparties.slice(i * lookupPage, (i + 1) * lookupPage)
      ),
      (page, i) => (i === 0 ? index.lookup(page) : Effect.andThen(Effect.yieldNow, index.lookup(page))),
      { concurrency: 1 }
    ),
    (pages) => pages.flat()
  )

/**
 * The decimals of the tokens a floor must be applied to, kept per chain (they do not change): those received from a
 * counterparty with a record; a token whose decimals are not read in time has no floor (its transfers count).
 */
const decimalsReader = (reader: TransferReader["Service"], settings: Settings) => {
  /** Tokens' decimals, per chain (they do not change). */
  const decimalsKept = BoundedMemo.make<string, number>(settings.memo)
  const decimalsOf = (read: Read, grouped: Grouped, records: ReadonlyArray<Intel.IntelRecord>) => {
    const named = new Set(records.map((r) => r.address))
    const chainOf = new Map(read.windows.map((w) => [w.network, w.chainId]))
    const wanted = new Map<number, Set<string>>()
    for (const f of grouped.flows) {
      const chainId = chainOf.get(f.network)
      if (chainId === undefined || !named.has(f.counterparty)) continue
      for (const t of f.incoming)
        if (t.standard === "erc20" && decimalsKept.get(`${chainId} ${t.token}`) === undefined)
          wanted.set(chainId, (wanted.get(chainId) ?? new Set()).add(t.token))
    }
    const known = (network: string, token: string) => {
      const chainId = chainOf.get(network)
      return chainId === undefined ? undefined : decimalsKept.get(`${chainId} ${token}`)
    }
    return Effect.as(
      Effect.forEach(
        wanted,
        ([chainId, tokens]) =>
          reader.decimals(chainId, [...tokens]).pipe(
            Effect.tap((found) =>
              Effect.sync(() => {
                for (const [token, d] of found) decimalsKept.set(`${chainId} ${token}`, d)
              })
            ),
            Effect.ignore,
            Effect.timeoutOrElse({ duration: settings.budgetMillis, orElse: () => Effect.void })
          ),
        { concurrency: "unbounded", discard: true }
      ),
      known
    )
  }

  return decimalsOf
}

/** Reads exposure for an address and states it. */
export class Exposure extends Context.Service<
  Exposure,
  {
    /** Whether any network can be read (a node is configured). */
    readonly enabled: boolean
    /**
     * The exposure of `address` on the configured networks (`only` narrows them), in blocks up to the end of
     * `asOf` (the head when it is today), judged against the lists of `asOf`. Addresses of other families than
     * EVM, and a network without a node, give nothing, said as such.
     */
    readonly of: (
      address: string,
      asOf: string,
      only?: Chain.Network | "auto",
      request?: Request
    ) => Effect.Effect<Found>
  }
>()("@vigil/core/Exposure") {
  static readonly layer = (
    settings: Settings = defaultSettings
  ): Layer.Layer<Exposure, never, TransferReader | IntelIndex> =>
    Layer.effect(Exposure)(
      Effect.gen(function* () {
        const reader = yield* TransferReader
        const index = yield* IntelIndex
        const readChain = chainReader(reader, settings)
        const lookupAll = pagedLookup(index)
        const decimalsOf = decimalsReader(reader, settings)

        const of = (
          address: string,
          asOf: string,
          only: Chain.Network | "auto" = "auto",
          request: Request = {}
        ): Effect.Effect<Found> => {
          const dustFloor: DustFloor = {
            ...settings.dustFloor,
            ...request.dustFloor,
            tokens: { ...settings.dustFloor.tokens, ...request.dustFloor?.tokens }
          }
          const asked = { budgetMillis: settings.budgetMillis, dustFloor }
          const judged = (
            read: Read,
            grouped: Grouped,
            records: ReadonlyArray<Intel.IntelRecord>,
            authority: (l: string) => Intel.Authority,
            known: (n: string, t: string) => number | undefined
          ) => assess(read, grouped, records, authority, asOf, asked, floorOf(dustFloor, known))
          /** Nothing read: what an answer says when a network, or the counterparties, could not be. */
          const unread = (unchecked: Read["unchecked"]): Found => ({
            ...judged(
              { windows: [], unchecked: [] },
              nothing,
              [],
              () => "scraped",
              () => undefined
            ),
            unchecked
          })
          const none = (network: string, reason: string): Effect.Effect<Found> =>
            Effect.succeed(unread([{ network, reason }]))
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
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const today = Instant.day(now)
            return Effect.flatMap(
              Effect.forEach(chains, (id) => readChain(id, self, asOf, today, now), { concurrency: "unbounded" }),
              (answers) => {
                const read: Read = {
                  windows: answers.flatMap((a) => ("window" in a ? [a.window] : [])),
                  unchecked: answers.flatMap((a) => ("unchecked" in a ? [a.unchecked] : []))
                }
                // Grouped once; every counterparty looked up (none is left out), then the floors' decimals.
                const grouped = flows(self, read)
                const counterparties = counterpartiesOf(grouped)
                if (counterparties.length === 0)
                  return Effect.succeed(
                    judged(
                      read,
                      grouped,
                      [],
                      () => "scraped",
                      () => undefined
                    )
                  )
                return Effect.gen(function* () {
                  const records = yield* lookupAll(counterparties)
                  const lists = yield* index.lists
                  const authority = new Map(lists.map((l) => [l.list, l.authority]))
                  const known = yield* decimalsOf(read, grouped, records)
                  return judged(read, grouped, records, (l) => authority.get(l) ?? "scraped", known)
                }).pipe(
                  Effect.catchTag("StoreError", (e) =>
                    Effect.succeed(
                      unread([
                        ...read.unchecked,
                        ...read.windows.map((w) => ({
                          network: w.network,
                          reason: `the counterparties could not be screened: ${e.message}`
                        }))
                      ])
                    )
                  )
                )
              }
            )
          })
        }
        return Exposure.of({ enabled: reader.chains.length > 0, of })
      })
    )
}
