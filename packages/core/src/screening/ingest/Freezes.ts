/**
 * Stablecoin freezes read from the chain: each issuer's token contract, the events it states a freeze and its end
 * with, and how new events extend a list that carries its whole history. A list read this way names the blocks it
 * has read in its version's origin, so the next refresh reads on from there.
 */
import * as AbiEvent from "ox/AbiEvent"
import type { ParsedRecord } from "../Intel.ts"
import { toRecord } from "./Parser.ts"
import { freezeLogKind } from "./Sources.ts"

/** An issuer's freeze log on one chain. */
export interface Source {
  /** The list it is stored as. */
  readonly list: string
  /** The list's kind (its identity with `publisher`). */
  readonly kind: string
  readonly publisher: string
  /** The token, as each record's label names it. */
  readonly token: string
  readonly chainId: number
  readonly contract: `0x${string}`
  /** The contract's deployment block: a list with no block read yet is read from here. */
  readonly deployBlock: number
  /** The events that start and end a freeze; each names the frozen address as its only argument. */
  readonly listed: AbiEvent.AbiEvent
  readonly unlisted: AbiEvent.AbiEvent
}

/** Tether's USDT on Ethereum: `AddedBlackList` / `RemovedBlackList`, the address in the data. */
export const usdt: Source = {
  list: "usdt-ethereum",
  kind: "usdt-events",
  publisher: "Tether",
  token: "USDT",
  chainId: 1,
  contract: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
  deployBlock: 4_634_748,
  listed: AbiEvent.from("event AddedBlackList(address _user)"),
  unlisted: AbiEvent.from("event RemovedBlackList(address _user)")
}

/** Circle's USDC on Ethereum (its proxy): `Blacklisted` / `UnBlacklisted`, the address indexed. */
export const usdc: Source = {
  list: "usdc-ethereum",
  kind: freezeLogKind,
  publisher: "Circle",
  token: "USDC",
  chainId: 1,
  contract: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  deployBlock: 6_082_465,
  listed: AbiEvent.from("event Blacklisted(address indexed _account)"),
  unlisted: AbiEvent.from("event UnBlacklisted(address indexed _account)")
}

/** The freeze logs Vigil refreshes. */
export const sources: ReadonlyArray<Source> = [usdt, usdc]

/** The origin of a version read from blocks `from` to `to` (both included); `note` says more of where from. */
export const origin = (source: Source, from: number, to: number, note?: string): string =>
  `${source.token} freeze events of ${source.contract} on chain ${source.chainId}, blocks ${from}–${to}${note === undefined ? "" : ` (${note})`}`

/** The last block a version's origin says was read, when it says so. */
export const lastBlock = (origin: string): number | undefined => {
  const m = / on chain \d+, blocks (\d+)–(\d+)/.exec(origin)
  return m === null ? undefined : Number(m[2])
}

/** One freeze event, in the chain's order by block and log index. */
export interface Event {
  readonly kind: "listed" | "unlisted"
  readonly block: number
  readonly logIndex: number
  /** The UTC day of its block. */
  readonly date: string
  readonly tx: string
  readonly address: string
}

/** The topic an event's logs carry first. */
export const selector = (event: AbiEvent.AbiEvent): `0x${string}` => AbiEvent.getSelector(event)

/** A log as a node returns it: its topics and data. */
export interface Log {
  readonly topics: ReadonlyArray<`0x${string}`>
  readonly data: `0x${string}`
}

/** Decodes a log of `source`'s contract into an event; undefined for a log of another event. */
export const decodeLog = (
  source: Source,
  log: Log,
  at: { readonly block: number; readonly logIndex: number; readonly date: string; readonly tx: string }
): Event | undefined => {
  for (const [kind, event] of [
    ["listed", source.listed],
    ["unlisted", source.unlisted]
  ] as const) {
    if (log.topics[0]?.toLowerCase() !== AbiEvent.getSelector(event)) continue
    const args = AbiEvent.decode(event, { topics: log.topics as [`0x${string}`], data: log.data }) as unknown
    const address = Object.values(args as Record<string, unknown>)[0]
    return typeof address === "string" ? { kind, ...at, address } : undefined
  }
  return undefined
}

/**
 * The list after `events`: the records it held (listings with their ends) extended by the events in chain order.
 * A freeze of an address already frozen, or one whose transaction is already recorded, changes nothing (a block
 * read twice is harmless); an end closes the address's open listing; an end with no open listing is passed over.
 */
export const apply = (
  held: ReadonlyArray<ParsedRecord>,
  events: ReadonlyArray<Event>,
  token: string
): { readonly records: ReadonlyArray<ParsedRecord>; readonly added: number; readonly ended: number } => {
  const records = [...held]
  const open = new Map<string, number>()
  const seen = new Set<string>()
  records.forEach((r, i) => {
    seen.add(`${r.address}\u0000${r.reference}`)
    if (r.delistedAt === undefined) open.set(r.address, i)
  })
  let added = 0
  let ended = 0
  const ordered = [...events].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)
  for (const e of ordered) {
    const r = toRecord(e.address, "stablecoin_blacklist", e.tx, { label: token, listedAt: e.date }, ["evm"])
    if (typeof r === "string") continue
    if (e.kind === "listed") {
      if (open.has(r.address) || seen.has(`${r.address}\u0000${r.reference}`)) continue
      seen.add(`${r.address}\u0000${r.reference}`)
      open.set(r.address, records.length)
      records.push(r)
      added++
    } else {
      const i = open.get(r.address)
      if (i === undefined) continue
      records[i] = { ...records[i]!, delistedAt: e.date }
      open.delete(r.address)
      ended++
    }
  }
  return { records, added, ended }
}
