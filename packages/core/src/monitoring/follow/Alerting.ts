/**
 * A bot's matches of a step made alerts: each identified by its bot, chain, completing block and transactions,
 * and notified or only recorded by the bot's limits on block time ({@link AlertPolicy}), with the deliveries of
 * those notified. No I/O: the follower reads the bot's recent alerts (from {@link since}) and stores what this
 * returns.
 */
import type { WebhookStore } from "../../delivery/index.ts"
import { Instant } from "../../kernel/index.ts"
import * as AlertPolicy from "../alerts/AlertPolicy.ts"
import * as Messages from "../alerts/Messages.ts"
import * as Scan from "../chain/Scan.ts"
import { compose } from "../notifications/Notifications.ts"
import type { Alert } from "./FollowStore.ts"
import type { Block, Prepared } from "./Ready.ts"

/** The matches that count: completing at the bot's first watched block or later, in block order. */
const counted = (p: Prepared, matches: ReadonlyArray<Scan.Found>) =>
  matches
    .filter((m) => p.from === undefined || Scan.lastBlock(m.evidence) >= p.from)
    .sort((a, b) => Scan.lastBlock(a.evidence) - Scan.lastBlock(b.evidence))

/**
 * The block time (seconds) from which the bot's recent alerts are needed to decide the matches completing at
 * `first` or later; undefined when the bot has no limits (nothing to read).
 */
export const since = (p: Prepared, blocks: ReadonlyArray<Block>, first: number): number | undefined => {
  const horizon = AlertPolicy.horizon(p.bot.options)
  if (horizon === 0) return undefined
  const block = blocks.find((b) => b.number === first)
  return (block === undefined ? 0 : Number(BigInt(block.block.timestamp))) - horizon
}

/**
 * The alerts of `matches` after the bot's `history` (oldest first), and the deliveries of those notified; their ids
 * hashed by `digest`.
 */
export const alertsOf = (
  chainId: number,
  p: Prepared,
  matches: ReadonlyArray<Scan.Found>,
  blocks: ReadonlyArray<Block>,
  history: ReadonlyArray<AlertPolicy.Decided>,
  now: number,
  digest: AlertPolicy.Digest
): { readonly alerts: ReadonlyArray<Alert>; readonly deliveries: ReadonlyArray<WebhookStore.Delivery> } => {
  const found = counted(p, matches)
  if (found.length === 0) return { alerts: [], deliveries: [] }
  const byNumber = new Map(blocks.map((b) => [b.number, b]))
  const candidates = found.map((match) => {
    const completed = Scan.lastBlock(match.evidence)
    const block = byNumber.get(completed)
    const transactions = Object.fromEntries(
      Object.entries(match.evidence.transactions).map(([name, t]) => [name, t.hash])
    )
    const blockHash = block?.block.hash ?? ""
    const identity = {
      botId: p.bot.id,
      botVersion: p.bot.botVersion ?? "",
      chainId,
      blockHash,
      rule: match.rule,
      transactions
    }
    return {
      id: AlertPolicy.alertId(identity, digest),
      blockTime: block === undefined ? 0 : Number(BigInt(block.block.timestamp)),
      blockHash,
      completed,
      transactions,
      match
    }
  })
  const decided = new Map(AlertPolicy.decide(p.bot.options, history, candidates).map((d) => [d.id, d]))
  const created = Instant.iso(now)
  const alerts: Array<Alert> = []
  const deliveries: Array<WebhookStore.Delivery> = []
  for (const c of candidates) {
    const d = decided.get(c.id)
    if (d === undefined) continue
    decided.delete(c.id)
    const alert: Alert = {
      id: c.id,
      keyId: p.bot.keyId,
      botId: p.bot.id,
      chainId,
      blockNumber: c.completed,
      blockHash: c.blockHash,
      blockTime: c.blockTime,
      rule: c.match.rule,
      expression: p.normals[c.match.rule]!,
      transactions: c.transactions,
      evidence: c.match.evidence,
      created,
      ...(d.suppressed === undefined ? {} : { suppressed: d.suppressed })
    }
    alerts.push(alert)
    if (d.suppressed === undefined)
      deliveries.push(...compose(p.bot.keyId, p.channels, Messages.messageOf(alert, p.bot, "alert"), now))
  }
  return { alerts, deliveries }
}
