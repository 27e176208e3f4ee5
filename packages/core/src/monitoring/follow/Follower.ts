/**
 * Following chains live: one follower per chain with at least one active bot reads each new block once (after
 * the chain's confirmations), runs every active bot of the chain over it with the same window step as
 * historical scans (`Scan.judge`), and stores the step's alerts, their notification deliveries and the new
 * cursor in one transaction (`FollowStore.advance`), so an alert is never lost to a crash nor sent twice.
 *
 * - Continuity: each block's parent must be the cursor. When it is not, or when the node no longer has the
 *   cursor's hash at its height, the follower walks back to the common ancestor (the hashes of the last `keep`
 *   blocks are kept), retracts the alerts of the orphaned blocks (a retraction notice to the same channels, with
 *   the alert's id) and goes on along the new branch.
 * - Restarts: a follower resumes from the stored cursor, however long it was down (catching up `batch` blocks a
 *   step), rebuilding its window (the blocks a multi-transaction rule or a forward negation still reaches) from
 *   the node. A chain followed for the first time begins at its head.
 * - Bots: read at every step, so a bot switched off alerts on nothing from the next step, and one switched on
 *   (or created) is run from the block the follower processes next (the head, once caught up), never over what
 *   happened while it was off.
 * - Trouble with the node (timeouts, 429, a node that falls behind, a replica that lacks blocks another showed)
 *   backs off, doubling up to a minute, and is reported in the follower's state; no block is skipped.
 * - New heads: where the chain's node announces them (`ChainData.newHeads`), each announcement starts a step at
 *   once instead of at the next poll; polling goes on beside it, so a subscription that drops silently costs
 *   latency, never a block. A failed subscription is retried, backing off like the steps.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Cause, Clock, Context, Effect, Fiber, Layer, Queue, Schema, Stream } from "effect"
import { WebhookDispatcher, WebhookStore } from "../../delivery/index.ts"
import { Instant } from "../../kernel/index.ts"
import { type Bot, BotStore } from "../bots/BotStore.ts"
import { ChainData } from "../chain/ChainData.ts"
import { type BlockData, type Contract, fromBlocks } from "../chain/ChainFacts.ts"
import { ContractStore } from "../contracts/ContractStore.ts"
import { type Alert, FollowStore, type Mark } from "./FollowStore.ts"
import type * as Messages from "../alerts/Messages.ts"
import { compose } from "../notifications/Notifications.ts"
import * as Checker from "../rules/Checker.ts"
import * as Literals from "../rules/Literals.ts"
import * as Scan from "../chain/Scan.ts"

/** Knobs of following. */
export interface Settings {
  /** How often each chain's head is polled. */
  readonly pollMillis: number
  /** Confirmations to wait per chain (blocks behind the head); chains not named wait `defaultConfirmations`. */
  readonly confirmations: Readonly<Record<number, number>>
  readonly defaultConfirmations: number
  /**
   * Blocks read per step while catching up. Best a multiple of what the chain reader has in flight at once (the
   * JSON-RPC reader's default: 4 requests of 10 blocks), so no request slot idles in a step's last round.
   */
  readonly batch: number
  /** Recent block hashes kept per chain: the deepest reorganisation followed. */
  readonly keep: number
  /** Longest wait between attempts while the node fails. */
  readonly maxBackoffMillis: number
  /**
   * The work one bot may do in one step: bindings its rules try, and new matches per new block of the step. A bot
   * over them is switched off with the reason (`paused`), so one rule can neither hold the process nor flood
   * its channels; the others go on.
   */
  readonly limits: { readonly bindingsPerStep: number; readonly matchesPerBlock: number }
}

export const defaultSettings: Settings = {
  pollMillis: 2_000,
  confirmations: {},
  defaultConfirmations: 0,
  batch: 80,
  keep: 256,
  maxBackoffMillis: 60_000,
  // 1,000,000 bindings take 30 to 500 ms (more when each is a match: evidence is built for it).
  limits: { bindingsPerStep: 1_000_000, matchesPerBlock: 100 }
}

/** What a chain's follower is doing. */
export interface ChainState {
  readonly chainId: number
  /**
   * `halted`: the chain reorganised deeper than the hashes kept, so the follower cannot tell which of its
   * alerts still stand; it goes no further until an operator re-anchors it (`vigil follow reset`), and the
   * process is not ready (`/health` 503) meanwhile.
   */
  readonly state: "starting" | "following" | "catching up" | "backing off" | "halted"
  /**
   * How new heads are learnt: `subscribed` while the node announces them over its websocket (each announcement
   * starts a step at once; polling goes on), else `polling`.
   */
  readonly heads: "polling" | "subscribed"
  /** Why a configured subscription to new heads is not working, while it is retried. */
  readonly headsError?: string
  /** Active bots of the chain. */
  readonly bots: number
  readonly head?: number
  /** The last block processed. */
  readonly cursor?: number
  /** Blocks between the head and the cursor. */
  readonly lag?: number
  /** Counted since the process started. */
  readonly blocks: number
  readonly alerts: number
  readonly retractions: number
  readonly reorganisations: number
  /** Why the follower is not moving: the last step failed, or the node lacks what it needs (a stall). */
  readonly lastError?: string
  /** ISO instant since which the follower has not moved for the reason in `lastError`. */
  readonly stalledSince?: string
  /** Active bots not run, and why (rules that no longer check, traces the node lacks). */
  readonly skipped?: ReadonlyArray<string>
  /** ISO instant of the last step that moved the cursor. */
  readonly lastProgress?: string
}

/** The chain reorganised deeper than the hashes kept: the follower cannot go on by itself. */
export class DeepReorganisation extends Schema.TaggedError<DeepReorganisation>()("DeepReorganisation", {
  chainId: Schema.Int,
  message: Schema.String
}) {}

/** The live followers. */
export class Follower extends Context.Service<
  Follower,
  {
    /** The state of every chain followed since the process started. */
    readonly status: Effect.Effect<ReadonlyArray<ChainState>>
  }
>()("@vigil/core/Follower") {}

/** A bot ready to run: its checked rules, its key's contracts and its notification channels. */
interface Prepared {
  readonly bot: Bot
  /** Blocks before a new one that its matches may reach: its block range if a rule binds several transactions. */
  readonly reach: number
  readonly rules: ReadonlyArray<Scan.Rule>
  /** The normal form of each rule, by index. */
  readonly normals: ReadonlyArray<string>
  /** What its pending matches are kept under: its id and revision (a changed rule starts afresh). */
  readonly key: string
  /** The first block it is run on (`watchingFrom`); undefined: from the block the follower processes next. */
  readonly from?: number
  readonly contracts: ReadonlyArray<Contract>
  readonly channels: ReadonlyArray<WebhookStore.Webhook>
}

type Block = BlockData & { readonly number: number }

/** The blocks before the cursor that a rule may still reach, and each bot's matches left pending. */
interface Window {
  readonly at: Mark
  readonly traces: boolean
  /** How many blocks before the cursor it holds: the longest reach of the bots it was built for. */
  readonly range: number
  readonly blocks: ReadonlyArray<Block>
  readonly pending: ReadonlyMap<string, ReadonlySet<string>>
}

const markOf = (b: Block): Mark => ({ number: b.number, hash: b.block.hash, parentHash: b.block.parentHash ?? "" })

/** `al_` and 32 hex digits of the SHA-256 of the alert's identity. */
export const alertId = (identity: {
  readonly botId: string
  readonly botVersion: string
  readonly chainId: number
  readonly blockHash: string
  readonly rule: number
  readonly transactions: Readonly<Record<string, string>>
}): string =>
  `al_${bytesToHex(
    sha256(
      utf8ToBytes(
        JSON.stringify([
          identity.botId,
          identity.botVersion,
          identity.chainId,
          identity.blockHash.toLowerCase(),
          identity.rule,
          Object.entries(identity.transactions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        ])
      )
    )
  ).slice(0, 32)}`

/** The message of an alert (or of its retraction). */
export const messageOf = (alert: Alert, bot: Bot, kind: "alert" | "retraction" | "unverified"): Messages.Alert => ({
  id: alert.id,
  kind,
  bot: {
    id: bot.id,
    name: bot.botName,
    severity: bot.severity,
    ...(bot.botVersion === undefined ? {} : { version: bot.botVersion })
  },
  chainId: alert.chainId,
  blockNumber: alert.blockNumber,
  txHash: alert.transactions.tx1 ?? Object.values(alert.transactions)[0] ?? "",
  rule: alert.rule,
  expression: alert.expression,
  evidence: alert.evidence
})

/** The followers, for as long as the layer lives. */
export const layer = (
  settings: Settings = defaultSettings
): Layer.Layer<Follower, never, BotStore | ContractStore | FollowStore | WebhookStore.WebhookStore | ChainData> =>
  Layer.effect(Follower)(
    Effect.gen(function* () {
      const bots = yield* BotStore
      const contracts = yield* ContractStore
      const store = yield* FollowStore
      const outbox = yield* WebhookStore.WebhookStore
      const chain = yield* ChainData
      const wake = yield* Effect.serviceOption(WebhookDispatcher.Wake)
      const states = new Map<number, ChainState>()
      const set = (chainId: number, change: Partial<ChainState>) =>
        states.set(chainId, { ...states.get(chainId)!, ...change })
      const confirmationsOf = (chainId: number) => settings.confirmations[chainId] ?? settings.defaultConfirmations

      /** The chain's active bots with their checked rules; a bot whose rules no longer check is skipped, and said. */
      const prepare = Effect.fnUntraced(function* (chainId: number) {
        const active = (yield* bots.active()).filter((b) => b.chainId === chainId)
        const byKey = new Map<
          string,
          { contracts: ReadonlyArray<Contract>; channels: ReadonlyArray<WebhookStore.Webhook> }
        >()
        const ready: Array<Prepared> = []
        const problems: Array<string> = []
        for (const bot of active) {
          let of = byKey.get(bot.keyId)
          if (of === undefined) {
            of = {
              contracts: yield* contracts.list(bot.keyId, chainId),
              channels: yield* outbox.list(bot.keyId, "channels")
            }
            byKey.set(bot.keyId, of)
          }
          const literalDefs =
            bot.options.literalDefs === undefined ? new Map() : Literals.fromJson(bot.options.literalDefs)
          if (typeof literalDefs === "string") {
            problems.push(`bot ${bot.id}: ${literalDefs}`)
            continue
          }
          // The bot's expressions are one rule (AND-ed): index 0.
          const checked = Checker.checkRule(bot.watchRule.expressions, {
            contracts: of.contracts,
            literalDefs,
            watchRuleType: bot.watchRule.watchRuleType,
            ...(bot.options.ruleScope === undefined ? {} : { ruleScope: bot.options.ruleScope })
          })
          if (!checked.ok) {
            const first = checked.problems[0]!
            problems.push(`bot ${bot.id}, expression ${first.expression + 1}: ${first.message}`)
            continue
          }
          ready.push({
            bot,
            reach: checked.rule.transactions > 1 ? bot.options.topLevelTxBlockRange : 0,
            rules: [{ index: 0, expr: checked.rule.expr, needsTraces: checked.rule.needsTraces }],
            normals: [checked.rule.normal],
            key: `${bot.id}@${bot.revision}`,
            ...(bot.watchingFrom === undefined ? {} : { from: bot.watchingFrom.blockNumber }),
            contracts: of.contracts,
            channels: of.channels.filter((c) => bot.notifications.includes(c.id))
          })
        }
        return { ready, problems, active: active.length }
      })

      /** The matches of `p` still pending after `blocks` (its negations' ranges open past their last). */
      const pendingOf = (p: Prepared, blocks: ReadonlyArray<Block>, head: number): ReadonlySet<string> => {
        if (p.reach === 0 || blocks.length === 0) return new Set()
        const facts = fromBlocks(
          blocks.filter((b) => b.number > head - p.reach && b.number <= head),
          p.contracts,
          { blockRange: p.bot.options.topLevelTxBlockRange, head }
        )
        return Scan.judge(p.rules, facts, 0, new Set()).pending
      }

      /** Reads the blocks the window needs, up to the cursor, and finds each bot's matches still pending there. */
      const rebuild = Effect.fnUntraced(function* (
        chainId: number,
        cursor: Mark,
        ready: ReadonlyArray<Prepared>,
        traces: boolean
      ) {
        const range = Math.max(0, ...ready.map((p) => p.reach))
        if (range === 0) return { at: cursor, traces, range, blocks: [], pending: new Map() } satisfies Window
        const from = Math.max(0, cursor.number - range + 1)
        const numbers = Array.from({ length: cursor.number - from + 1 }, (_, i) => from + i)
        const blocks: Array<Block> = []
        for (const r of yield* chain.blocks(chainId, numbers, { traces }))
          // Every block of the window was processed, so the node has it: one it lacks now (a replica behind) would
          // leave a hole where a multi-transaction rule's match could hide. The step fails and is tried again.
          if (r._tag === "Missing")
            return yield* Effect.fail(`block ${r.number}, in the window kept before the cursor: ${r.error.message}`)
          else blocks.push({ ...r.data, number: r.number })
        if (
          blocks.at(-1)?.block.hash !== cursor.hash ||
          blocks.some((b, i) => i > 0 && b.block.parentHash !== blocks[i - 1]!.block.hash)
        )
          return yield* Effect.fail(
            `the node's blocks before block ${cursor.number + 1} are no longer those processed (a reorganisation under way)`
          )
        const pending = new Map(ready.map((p) => [p.key, pendingOf(p, blocks, cursor.number)] as const))
        return { at: cursor, traces, range, blocks, pending } satisfies Window
      })

      /** Walks back to the common ancestor and retracts what the orphaned blocks alerted. */
      const rewind = Effect.fnUntraced(function* (chainId: number, cursor: Mark) {
        const marks = yield* store.marks(chainId, cursor.number - settings.keep)
        // The last few first: most reorganisations are shallow.
        let ancestor: Mark | undefined
        for (const span of [16, settings.keep]) {
          const candidates = marks.filter((m) => m.number > cursor.number - span)
          const onNode = yield* chain.hashes(
            chainId,
            candidates.map((m) => m.number)
          )
          // The node showed a block above these a moment ago: one it now lacks is a replica behind the others
          // (a load-balanced provider), not an orphan. Retracting on its word could retract a standing alert.
          const lacking = candidates.findIndex((_, i) => onNode[i] === undefined)
          if (lacking !== -1)
            return yield* Effect.fail(
              `the node answered without block ${candidates[lacking]!.number} while checking a reorganisation below block ${cursor.number}: waiting for it rather than retracting`
            )
          ancestor = candidates.filter((m, i) => onNode[i]?.hash === m.hash).at(-1)
          if (ancestor !== undefined || candidates.length === marks.length) break
        }
        if (ancestor === undefined)
          return yield* new DeepReorganisation({
            chainId,
            message: `the chain reorganised deeper than the ${settings.keep} blocks kept below block ${cursor.number}; the follower cannot find where its branch left the node's: re-anchor it with vigil follow reset --chain ${chainId}`
          })
        const orphans = yield* store.orphaned(chainId, ancestor.number)
        const now = yield* Clock.currentTimeMillis
        const deliveries: Array<WebhookStore.Delivery> = []
        for (const alert of orphans) {
          // An alert that was not notified needs no retraction notice.
          if (alert.suppressed !== undefined) continue
          const bot = yield* bots.get(alert.keyId, alert.botId)
          if (bot === undefined) continue
          const channels = (yield* outbox.list(alert.keyId, "channels")).filter((c) => bot.notifications.includes(c.id))
          deliveries.push(...compose(alert.keyId, channels, messageOf(alert, bot, "retraction"), now))
        }
        const outcome = yield* store.rewind(chainId, cursor, {
          ancestor,
          retract: orphans.map((a) => a.id),
          at: Instant.iso(now),
          deliveries
        })
        if (outcome === "advanced") {
          const s = states.get(chainId)!
          set(chainId, {
            cursor: ancestor.number,
            retractions: s.retractions + orphans.length,
            reorganisations: s.reorganisations + 1
          })
          yield* Effect.logWarning(
            `chain ${chainId} reorganised below block ${cursor.number}: back to ${ancestor.number}, ${orphans.length} alert(s) retracted`
          )
          if (deliveries.length > 0 && wake._tag === "Some") yield* Queue.offer(wake.value, undefined)
        }
      })

      /** Bots switched off for going over their bounds, by chain: what /health says of them until switched on. */
      const paused = new Map<number, Map<string, string>>()

      /** The bot's limits over `blocks` blocks. */
      const limitsOver = (blocks: number) => ({
        bindings: settings.limits.bindingsPerStep,
        matches: settings.limits.matchesPerBlock * Math.max(1, blocks)
      })

      /** Switches off a bot whose rules went over their bounds at `blockNumber`, saying why on the bot. */
      const pause = Effect.fnUntraced(function* (
        chainId: number,
        p: Prepared,
        exceeded: "bindings" | "matches",
        blockNumber: number
      ) {
        const reason =
          exceeded === "bindings"
            ? `its rules tried more than ${settings.limits.bindingsPerStep} bindings in one step, at block ${blockNumber}: they match too widely (join its transactions on a field, narrow the rule or its topLevelTxBlockRange), then switch it on again`
            : `its rules matched more than ${settings.limits.matchesPerBlock} times a block, at block ${blockNumber}: narrow the rule, then switch it on again`
        const now = yield* Clock.currentTimeMillis
        const { watchingFrom: _, ...bot } = p.bot
        // Another update meanwhile wins (the next step reads the bot again and judges it afresh).
        yield* bots.update({
          ...bot,
          active: false,
          paused: { reason, blockNumber, at: Instant.iso(now) },
          revision: bot.revision + 1,
          updated: Instant.iso(now)
        })
        const notes = paused.get(chainId) ?? new Map<string, string>()
        paused.set(chainId, notes)
        notes.set(p.bot.id, `bot ${p.bot.id}: paused: ${reason}`)
        yield* Effect.logWarning(`chain ${chainId}: bot ${p.bot.id} paused: ${reason}`)
      })

      /** Lets the process's other work run (requests, other chains) when this fiber has held it 10 ms or more. */
      const breathe = (since: { at: number }) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          if (now - since.at < 10) return
          yield* Effect.sleep(0)
          since.at = yield* Clock.currentTimeMillis
        })

      /**
       * The alerts of a bot's matches found over `blocks` (those completing at its first watched block or later),
       * with the bot's notification limits applied on block time, and the deliveries of those notified.
       */
      const alertsOf = Effect.fnUntraced(function* (
        chainId: number,
        p: Prepared,
        matches: ReadonlyArray<Scan.Found>,
        blocks: ReadonlyArray<Block>,
        first: number,
        now: number
      ) {
        const alerts: Array<Alert> = []
        const deliveries: Array<WebhookStore.Delivery> = []
        const found = matches
          .filter((m) => p.from === undefined || Scan.lastBlock(m.evidence) >= p.from)
          .sort((a, b) => Scan.lastBlock(a.evidence) - Scan.lastBlock(b.evidence))
        if (found.length === 0) return { alerts, deliveries }
        const hashOf = new Map(blocks.map((b) => [b.number, b.block.hash]))
        const timeOf = new Map(blocks.map((b) => [b.number, Number(BigInt(b.block.timestamp))]))
        // The bot's notification limits, on block time: what it alerted lately, and what this step adds.
        const { notifyMinIntervalSeconds: interval, alertThreshold: threshold } = p.bot.options
        const horizon = Math.max(interval ?? 0, threshold?.windowSeconds ?? 0)
        const history: Array<{ readonly id: string; readonly blockTime: number; readonly suppressed?: string }> =
          horizon === 0 ? [] : [...(yield* store.recent(p.bot.id, (timeOf.get(first) ?? 0) - horizon))]
        for (const match of found) {
          const completed = Scan.lastBlock(match.evidence)
          const transactions = Object.fromEntries(
            Object.entries(match.evidence.transactions).map(([name, t]) => [name, t.hash])
          )
          const blockHash = hashOf.get(completed) ?? ""
          const blockTime = timeOf.get(completed) ?? 0
          const id = alertId({
            botId: p.bot.id,
            botVersion: p.bot.botVersion ?? "",
            chainId,
            blockHash,
            rule: match.rule,
            transactions
          })
          if (history.some((h) => h.id === id)) continue
          let suppressed: "threshold" | "interval" | undefined
          if (
            threshold !== undefined &&
            history.filter((h) => h.blockTime > blockTime - threshold.windowSeconds).length + 1 < threshold.count
          )
            suppressed = "threshold"
          const lastNotified = history.filter((h) => h.suppressed === undefined).at(-1)
          if (
            suppressed === undefined &&
            interval !== undefined &&
            lastNotified !== undefined &&
            blockTime - lastNotified.blockTime < interval
          )
            suppressed = "interval"
          history.push({ id, blockTime, ...(suppressed === undefined ? {} : { suppressed }) })
          const alert: Alert = {
            id,
            keyId: p.bot.keyId,
            botId: p.bot.id,
            chainId,
            blockNumber: completed,
            blockHash,
            blockTime,
            rule: match.rule,
            expression: p.normals[match.rule]!,
            transactions,
            evidence: match.evidence,
            created: Instant.iso(now),
            ...(suppressed === undefined ? {} : { suppressed })
          }
          alerts.push(alert)
          if (suppressed === undefined)
            deliveries.push(...compose(p.bot.keyId, p.channels, messageOf(alert, p.bot, "alert"), now))
        }
        return { alerts, deliveries }
      })

      /**
       * Runs one bot over up to `batch` of the blocks it lacks below the cursor, from `next`, storing its alerts
       * and how far it got, without moving the cursor: a bot created (or switched on) before the follower reached
       * its `watchingFrom` misses nothing.
       */
      const backfill = Effect.fnUntraced(function* (
        chainId: number,
        cursor: Mark,
        p: Prepared,
        next: number,
        traces: boolean
      ) {
        const to = Math.min(cursor.number, next + settings.batch - 1)
        const start = Math.max(0, next - p.reach)
        const numbers = Array.from({ length: to - start + 1 }, (_, i) => start + i)
        const kept = new Map((yield* store.marks(chainId, start)).map((m) => [m.number, m.hash]))
        const blocks: Array<Block> = []
        for (const r of yield* chain.blocks(chainId, numbers, { traces })) {
          if (r._tag === "Missing")
            return yield* Effect.fail(
              `block ${r.number}, which bot ${p.bot.id} watches from block ${p.from}: ${r.error.message}`
            )
          const known = kept.get(r.number)
          // A block processed on another branch than the node's now: a reorganisation the next step resolves.
          if (known !== undefined && known !== r.data.block.hash)
            return yield* Effect.fail(
              `block ${r.number} is no longer the one processed (a reorganisation under way); bot ${p.bot.id} waits`
            )
          blocks.push({ ...r.data, number: r.number })
        }
        const facts = fromBlocks(blocks, p.contracts, { blockRange: p.bot.options.topLevelTxBlockRange, head: to })
        const judged = Scan.judge(p.rules, facts, next, pendingOf(p, blocks, next - 1), limitsOver(to - next + 1))
        if (judged.exceeded !== undefined) {
          yield* pause(chainId, p, judged.exceeded, to)
          return "advanced" as const
        }
        const now = yield* Clock.currentTimeMillis
        const made = yield* alertsOf(chainId, p, judged.found, blocks, next, now)
        const done = yield* store.advance(chainId, cursor, {
          blocks: [],
          alerts: made.alerts,
          deliveries: made.deliveries,
          keep: settings.keep,
          coverage: [{ botId: p.bot.id, from: p.from!, through: to }]
        })
        if (done.outcome === "advanced") {
          const s = states.get(chainId)!
          set(chainId, { alerts: s.alerts + done.stored.length })
          if (done.stored.length > 0 && wake._tag === "Some") yield* Queue.offer(wake.value, undefined)
        }
        return done.outcome
      })

      /**
       * The node lacks what the step needs (a block it announced, a head below the blocks processed): the step
       * waits, and the state says why and since when, from the first step that met it.
       */
      const stall = (chainId: number, reason: string) =>
        Effect.gen(function* () {
          const was = states.get(chainId)!
          const now = yield* Clock.currentTimeMillis
          if (was.lastError !== reason) yield* Effect.logWarning(`following chain ${chainId}: ${reason}`)
          set(chainId, { lastError: reason, stalledSince: was.stalledSince ?? Instant.iso(now) })
          return "stalled" as const
        })

      /** One step of a chain: `idle` when there was nothing to do. */
      const step = Effect.fnUntraced(function* (chainId: number, memory: { window: Window | undefined }) {
        const { ready, problems, active } = yield* prepare(chainId)
        const wantsTraces = ready.some((p) => p.rules.some((r) => r.needsTraces))
        const traces = wantsTraces && (yield* chain.tracesAvailable(chainId))
        const runnable = traces ? ready : ready.filter((p) => !p.rules.some((r) => r.needsTraces))
        // A paused bot switched on again is no longer said to be paused.
        const notes = paused.get(chainId)
        for (const p of ready) notes?.delete(p.bot.id)
        const skipped = [
          ...problems,
          ...ready
            .filter((p) => !runnable.includes(p))
            .map((p) => `bot ${p.bot.id}: needs call traces, and the node of chain ${chainId} has none`),
          ...(notes?.values() ?? [])
        ]
        const { skipped: _, ...was } = states.get(chainId)!
        states.set(chainId, { ...was, bots: active, ...(skipped.length === 0 ? {} : { skipped }) })
        if (runnable.length === 0) return "idle" as const
        const head = yield* chain.head(chainId)
        const target = head - confirmationsOf(chainId)
        const cursor = yield* store.cursor(chainId)
        set(chainId, { head, ...(cursor === undefined ? {} : { cursor: cursor.number, lag: head - cursor.number }) })
        if (cursor !== undefined && head < cursor.number)
          return yield* stall(
            chainId,
            `the node's head ${head} is below block ${cursor.number}, already processed: a node behind (a lagging replica, a resync); waiting for it`
          )
        // Bots that lack blocks below the cursor are run over them a batch at a time; the others go on meanwhile.
        const coverage = cursor === undefined ? new Map() : yield* store.coverage(chainId)
        const nextOf = (p: Prepared) => {
          if (p.from === undefined) return undefined
          const c = coverage.get(p.bot.id)
          return c !== undefined && c.from === p.from ? c.through + 1 : p.from
        }
        const behind = cursor === undefined ? [] : runnable.filter((p) => (nextOf(p) ?? Infinity) <= cursor.number)
        let backfilled = false
        if (behind.length > 0) {
          const p = behind[0]!
          if ((yield* backfill(chainId, cursor!, p, nextOf(p)!, traces)) === "moved") {
            memory.window = undefined
            return "moved" as const
          }
          backfilled = true
        }
        const joined = runnable.filter((p) => !behind.includes(p))
        const idle = backfilled ? ("moved" as const) : ("idle" as const)
        if (joined.length === 0) return idle
        if (cursor !== undefined && target <= cursor.number) {
          // Nothing new: check that the cursor's block is still the chain's (a reorganisation at the same height).
          // A node without the cursor's block is behind (a lagging replica, a node syncing): it is waited for,
          // not taken for a reorganisation.
          const [onNode] = yield* chain.hashes(chainId, [cursor.number])
          if (onNode === undefined || onNode.hash === cursor.hash) return idle
          memory.window = undefined
          yield* rewind(chainId, cursor)
          return "moved" as const
        }
        if (target < 0) return "idle" as const
        if (cursor === undefined) {
          // Followed for the first time: the cursor is set just below the first block a bot watches from (or at
          // the head); what came before is not looked at.
          const watched = runnable.flatMap((p) => (p.from === undefined ? [] : [p.from - 1]))
          const [at] = yield* chain.hashes(chainId, [Math.max(0, Math.min(target, ...watched))])
          if (at === undefined) return "idle" as const
          const mark = { number: at.number, hash: at.hash, parentHash: at.parentHash }
          yield* store.advance(chainId, undefined, { blocks: [mark], alerts: [], deliveries: [], keep: settings.keep })
          set(chainId, { cursor: at.number, lag: Math.max(0, head - at.number), state: "following" })
          return "moved" as const
        }
        const from = cursor.number + 1
        const to = Math.min(target, from + settings.batch - 1)
        const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i)
        const fresh: Array<Block> = []
        let previous = cursor.hash
        let missing: string | undefined
        for (const r of yield* chain.blocks(chainId, numbers, { traces })) {
          if (r._tag === "Missing") {
            missing = `block ${r.number}, at or below the node's head ${head}, could not be read whole: ${r.error.message}`
            break
          }
          const block: Block = { ...r.data, number: r.number }
          if (previous !== undefined && block.block.parentHash !== previous) {
            if (fresh.length > 0) break
            // The first new block does not follow the cursor: the chain reorganised.
            memory.window = undefined
            yield* rewind(chainId, cursor)
            return "moved" as const
          }
          fresh.push(block)
          previous = block.block.hash
        }
        if (fresh.length === 0) return missing === undefined ? idle : yield* stall(chainId, missing)
        const range = Math.max(0, ...joined.map((p) => p.reach))
        let window = memory.window
        // Read again after a restart or a failed step, and when a bot that reaches further back was switched on.
        if (window === undefined || window.at.hash !== cursor.hash || window.traces !== traces || window.range < range)
          window = yield* rebuild(chainId, cursor, joined, traces)
        const blocks = [...window.blocks, ...fresh]
        const last = fresh.at(-1)!
        const now = yield* Clock.currentTimeMillis
        const alerts: Array<Alert> = []
        const deliveries: Array<WebhookStore.Delivery> = []
        const pending = new Map<string, ReadonlySet<string>>()
        const over = new Set<Prepared>()
        const held = { at: now }
        for (const p of joined) {
          yield* breathe(held)
          const reached = blocks.filter((b) => b.number >= fresh[0]!.number - p.reach)
          const facts = fromBlocks(reached, p.contracts, {
            blockRange: p.bot.options.topLevelTxBlockRange,
            head: last.number
          })
          // A bot that joined since the window was built: its matches pending at the cursor are found now.
          const before = window.pending.get(p.key) ?? pendingOf(p, window.blocks, cursor.number)
          const judged = Scan.judge(p.rules, facts, fresh[0]!.number, before, limitsOver(fresh.length))
          if (judged.exceeded !== undefined) {
            over.add(p)
            yield* pause(chainId, p, judged.exceeded, last.number)
            continue
          }
          pending.set(p.key, judged.pending)
          if (judged.found.length === 0) continue
          const made = yield* alertsOf(chainId, p, judged.found, blocks, fresh[0]!.number, now)
          alerts.push(...made.alerts)
          deliveries.push(...made.deliveries)
        }
        const done = yield* store.advance(chainId, cursor, {
          blocks: fresh.map(markOf),
          alerts,
          deliveries,
          keep: settings.keep,
          coverage: joined.flatMap((p) =>
            p.from === undefined || over.has(p) ? [] : [{ botId: p.bot.id, from: p.from, through: last.number }]
          )
        })
        if (done.outcome === "moved") {
          // Another process took this step: start again from where it left the chain.
          memory.window = undefined
          return "moved" as const
        }
        memory.window = {
          at: markOf(last),
          traces,
          range,
          blocks: range === 0 ? [] : blocks.filter((b) => b.number > last.number - range),
          pending
        }
        const s = states.get(chainId)!
        set(chainId, {
          cursor: last.number,
          lag: Math.max(0, head - last.number),
          blocks: s.blocks + fresh.length,
          alerts: s.alerts + done.stored.length,
          lastProgress: Instant.iso(now),
          state: last.number < target ? "catching up" : "following"
        })
        if (done.stored.length > 0 && wake._tag === "Some") yield* Queue.offer(wake.value, undefined)
        return last.number < target ? ("moved" as const) : ("idle" as const)
      })

      /** Backoff after `failures` failures in a row: doubling from the poll interval, up to the longest wait. */
      const backoff = (failures: number) =>
        Math.min(settings.maxBackoffMillis, settings.pollMillis * 2 ** Math.min(failures, 16))

      /** Listens to the chain's new heads, nudging its follower at each; retried while it fails, unless not configured. */
      const listen = (chainId: number, nudge: Queue.Queue<void>) =>
        Effect.gen(function* () {
          let failures = 0
          while (true) {
            const ended = yield* Effect.scoped(
              Effect.gen(function* () {
                const heads = yield* chain.newHeads(chainId)
                failures = 0
                const { headsError: _, ...was } = states.get(chainId)!
                states.set(chainId, { ...was, heads: "subscribed" })
                yield* Stream.runForEach(heads, () => Queue.offer(nudge, undefined))
                return "the node ended the subscription"
              })
            ).pipe(Effect.catch((e) => Effect.succeed(e.reason === "NotConfigured" ? undefined : e.message)))
            if (ended === undefined) return
            failures++
            set(chainId, { heads: "polling", headsError: ended })
            if (failures === 1) yield* Effect.logWarning(`new heads of chain ${chainId}: ${ended}`)
            yield* Effect.sleep(backoff(failures))
          }
        })

      /**
       * Follows one chain until interrupted: steps at once while there is work, else at the next poll or new head.
       */
      const follow = (chainId: number) =>
        Effect.gen(function* () {
          const memory: { window: Window | undefined } = { window: undefined }
          const nudge = yield* Queue.sliding<void>(1)
          yield* Effect.forkChild(listen(chainId, nudge))
          let failures = 0
          while (true) {
            const outcome = yield* step(chainId, memory).pipe(
              Effect.map((o) => {
                failures = 0
                if (o === "stalled") return "idle" as const
                // A step that went through ends the trouble: its error is no longer the state.
                const { lastError: _, stalledSince: __, ...was } = states.get(chainId)!
                states.set(chainId, {
                  ...was,
                  state:
                    was.state === "backing off" || was.state === "starting" || was.state === "halted"
                      ? "following"
                      : was.state
                })
                return o
              }),
              Effect.catchCause((cause) => {
                failures++
                memory.window = undefined
                const squashed = Cause.hasFails(cause) ? Cause.squash(cause) : undefined
                const message =
                  squashed === undefined
                    ? Cause.pretty(cause)
                    : String((squashed as { message?: string }).message ?? squashed)
                return Effect.gen(function* () {
                  const now = yield* Clock.currentTimeMillis
                  set(chainId, {
                    state: squashed instanceof DeepReorganisation ? "halted" : "backing off",
                    lastError: message,
                    stalledSince: states.get(chainId)!.stalledSince ?? Instant.iso(now)
                  })
                  if (failures === 1) yield* Effect.logWarning(`following chain ${chainId}: ${message}`)
                  return "failed" as const
                })
              })
            )
            if (outcome === "moved") continue
            if (outcome === "failed") yield* Effect.sleep(backoff(failures))
            else yield* Effect.raceFirst(Effect.sleep(settings.pollMillis), Queue.take(nudge))
          }
        })

      // The supervisor: a follower per chain with an active bot, started and stopped as bots change.
      const running = new Map<number, Fiber.Fiber<never, never>>()
      const supervise = Effect.gen(function* () {
        const chains = new Set((yield* bots.active()).map((b) => b.chainId))
        for (const chainId of chains) {
          if (running.has(chainId)) continue
          states.set(chainId, {
            chainId,
            state: "starting",
            heads: "polling",
            bots: 0,
            blocks: states.get(chainId)?.blocks ?? 0,
            alerts: states.get(chainId)?.alerts ?? 0,
            retractions: states.get(chainId)?.retractions ?? 0,
            reorganisations: states.get(chainId)?.reorganisations ?? 0
          })
          running.set(chainId, yield* Effect.forkScoped(follow(chainId) as Effect.Effect<never>))
        }
        for (const [chainId, fiber] of running) {
          if (chains.has(chainId)) continue
          yield* Fiber.interrupt(fiber)
          running.delete(chainId)
          states.delete(chainId)
        }
      }).pipe(Effect.catchCause((cause) => Effect.logWarning("following: cannot read the active bots", cause)))
      // Bots are re-read at least every second, so a bot switched on is followed soon even with a long poll interval.
      yield* Effect.forkScoped(
        Effect.forever(Effect.andThen(supervise, Effect.sleep(Math.min(settings.pollMillis, 1_000))))
      )

      return Follower.of({
        // A step held in the reader's retries has not failed yet: the reader's trouble says so from its first
        // failed attempt.
        status: Effect.gen(function* () {
          const out: Array<ChainState> = []
          for (const state of [...states.values()].sort((a, b) => a.chainId - b.chainId)) {
            const trouble = state.stalledSince === undefined ? yield* chain.trouble(state.chainId) : undefined
            out.push(
              trouble === undefined
                ? state
                : {
                    ...state,
                    lastError: `the node is failing, retrying: ${trouble.message}`,
                    stalledSince: Instant.iso(trouble.since)
                  }
            )
          }
          return out
        })
      })
    })
  )
