/**
 * What makes a match an alert, decided without I/O: its identity (the same match found twice, by two instances
 * or after a restart, is the same alert) and whether it is notified or only recorded under the bot's limits on
 * block time (`alertThreshold`: notified once `count` alerts fall within `windowSeconds`; `notifyMinIntervalSeconds`:
 * not notified within that many seconds of the last one notified).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"

/** What identifies an alert. */
export interface Identity {
  readonly botId: string
  readonly botVersion: string
  readonly chainId: number
  /** The hash of the block that completed the match: a match on another branch is another alert. */
  readonly blockHash: string
  readonly rule: number
  /** The bound transactions' hashes by the rule's names. */
  readonly transactions: Readonly<Record<string, string>>
}

/** The SHA-256 of a text (as UTF-8), in lowercase hex. */
export type Digest = (text: string) => string

/** SHA-256 in JavaScript: runs anywhere; a host may hand the follower its platform's own, which is faster. */
export const pureDigest: Digest = (text) => bytesToHex(sha256(utf8ToBytes(text)))

/**
 * `al_` and 32 hex digits of the SHA-256 of the alert's identity (transaction names in order), by `digest`: every
 * SHA-256 gives the same id.
 */
export const alertId = (identity: Identity, digest: Digest = pureDigest): string =>
  `al_${digest(
    JSON.stringify([
      identity.botId,
      identity.botVersion,
      identity.chainId,
      identity.blockHash.toLowerCase(),
      identity.rule,
      Object.entries(identity.transactions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    ])
  ).slice(0, 32)}`

/** A bot's notification limits. */
export interface Limits {
  readonly notifyMinIntervalSeconds?: number | undefined
  readonly alertThreshold?: { readonly count: number; readonly windowSeconds: number } | undefined
}

/** Why an alert was recorded without being notified. */
export type Suppressed = "threshold" | "interval"

/** An alert as the policy sees it: its id, its block's time (seconds) and whether it was notified. */
export interface Decided {
  readonly id: string
  readonly blockTime: number
  readonly suppressed?: Suppressed
}

/** How far back (seconds of block time) the policy must see a bot's alerts; 0 when it needs none. */
export const horizon = (limits: Limits): number =>
  Math.max(limits.notifyMinIntervalSeconds ?? 0, limits.alertThreshold?.windowSeconds ?? 0)

/**
 * Decides `candidates` (in block order) after `history` (the bot's alerts within {@link horizon} before the first,
 * oldest first): a candidate already alerted is left out; each other one becomes an alert, suppressed by the
 * threshold when fewer than `count` alerts (itself included) fall within the window ending at its block time, else
 * by the interval when the last notified one is less than the interval before it, else notified. Deciding in one
 * call or in several (the history carried over) gives the same alerts.
 */
export const decide = (
  limits: Limits,
  history: ReadonlyArray<Decided>,
  candidates: ReadonlyArray<{ readonly id: string; readonly blockTime: number }>
): ReadonlyArray<Decided> => {
  const seen: Array<Decided> = [...history]
  const ids = new Set(history.map((h) => h.id))
  const out: Array<Decided> = []
  const { notifyMinIntervalSeconds: interval, alertThreshold: threshold } = limits
  let lastNotified = history.filter((h) => h.suppressed === undefined).at(-1)
  for (const c of candidates) {
    if (ids.has(c.id)) continue
    ids.add(c.id)
    let suppressed: Suppressed | undefined
    if (
      threshold !== undefined &&
      seen.filter((h) => h.blockTime > c.blockTime - threshold.windowSeconds).length + 1 < threshold.count
    )
      suppressed = "threshold"
    if (
      suppressed === undefined &&
      interval !== undefined &&
      lastNotified !== undefined &&
      c.blockTime - lastNotified.blockTime < interval
    )
      suppressed = "interval"
    const decided = { id: c.id, blockTime: c.blockTime, ...(suppressed === undefined ? {} : { suppressed }) }
    seen.push(decided)
    if (suppressed === undefined) lastNotified = decided
    out.push(decided)
  }
  return out
}
