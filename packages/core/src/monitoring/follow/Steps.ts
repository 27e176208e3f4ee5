/**
 * The parts of a chain's step that talk to the node and the store: the window kept before the cursor read again,
 * a reorganisation walked back to its common ancestor with its alerts retracted, a bot run over blocks it lacks,
 * a bot over its bounds paused, and a stall reported. The decisions are {@link Continuity}'s and
 * {@link Alerting}'s; the loop that calls these is the {@link Follower}'s.
 */
import { Clock, Effect, Fiber } from "effect"
import type { WebhookStore } from "../../delivery/index.ts"
import { Instant, Pace } from "../../kernel/index.ts"
import type { BotStore } from "../bots/BotStore.ts"
import type { BlockResult, ChainData, ChainDataError } from "../chain/ChainData.ts"
import * as Scan from "../chain/Scan.ts"
import { notices } from "../notifications/Notifications.ts"
import * as Alerting from "./Alerting.ts"
import * as Continuity from "./Continuity.ts"
import type { Alert, Both as Stores, Mark } from "./FollowStore.ts"
import { type Block, factsOf, judgingOrder, pendingOf, type Prepared, readsOf, type Window } from "./Ready.ts"
import * as ChainStates from "./ChainStates.ts"
import { DeepReorganisation, type Settings, Unsettled } from "./Settings.ts"

/** What the steps of the followers share: the settings, the stores, the node and the chains' states. */
export interface Shared {
  readonly settings: Settings
  readonly bots: BotStore["Service"]
  /** The chains' progress and the alerts stored with it (a bot's recent ones for its notification limits). */
  readonly store: Stores
  readonly outbox: WebhookStore.Destinations["Service"]
  readonly chain: ChainData["Service"]
  /** Wakes the outbox's delivery loop once a step stored deliveries. */
  readonly wake: Effect.Effect<void>
  /** Every chain's state, changed by the events recorded. */
  readonly chains: ChainStates.Chains
  /** Bots switched off for going over their bounds, by chain: what /health says of them until switched on. */
  readonly paused: Map<number, Map<string, string>>
}

/** Reads the blocks the window needs, up to the cursor. */
export const rebuild = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  cursor: Mark,
  ready: ReadonlyArray<Prepared>,
  traces: boolean
) {
  const { chain } = shared
  const range = Math.max(0, ...ready.map((p) => p.reach))
  if (range === 0) return { at: cursor, traces, range, blocks: [], pending: new Map() } satisfies Window
  const from = Math.max(0, cursor.number - range + 1)
  const numbers = Array.from({ length: cursor.number - from + 1 }, (_, i) => from + i)
  const blocks: Array<Block> = []
  for (const r of yield* chain.blocks(chainId, numbers, { traces }))
    // Every block of the window was processed, so the node has it: one it lacks now (a replica behind) would
    // leave a hole where a multi-transaction rule's match could hide. The step fails and is tried again.
    if (r._tag === "Missing")
      return yield* new Unsettled({
        chainId,
        message: `block ${r.number}, in the window kept before the cursor: ${r.error.message}`
      })
    else blocks.push({ ...r.data, number: r.number })
  if (
    !Continuity.intact(
      blocks.map((b) => b.block),
      cursor
    )
  )
    return yield* new Unsettled({
      chainId,
      message: `the node's blocks before block ${cursor.number + 1} are no longer those processed (a reorganisation under way)`
    })
  // Each bot's matches pending at the cursor are found when it is judged, within its bounds.
  return { at: cursor, traces, range, blocks, pending: new Map() } satisfies Window
})

/** Walks back to the common ancestor and retracts what the orphaned blocks alerted. */
export const rewind = Effect.fnUntraced(function* (shared: Shared, chainId: number, cursor: Mark) {
  const { settings, bots, store, outbox, chain, wake, chains } = shared
  const marks = yield* store.marks(chainId, cursor.number - settings.keep)
  // The last few first: most reorganisations are shallow.
  let ancestor: Mark | undefined
  for (const span of [16, settings.keep]) {
    const kept = marks.filter((m) => m.number > cursor.number - span)
    const onNode = yield* chain.hashes(
      chainId,
      kept.map((m) => m.number)
    )
    const found = Continuity.ancestor(kept, onNode)
    if (found.kind === "lagging")
      return yield* new Unsettled({
        chainId,
        message: `the node answered without block ${found.number} while checking a reorganisation below block ${cursor.number}: waiting for it rather than retracting`
      })
    if (found.kind === "found") ancestor = found.mark
    if (ancestor !== undefined || kept.length === marks.length) break
  }
  if (ancestor === undefined)
    return yield* new DeepReorganisation({
      chainId,
      message: `the chain reorganised deeper than the ${settings.keep} blocks kept below block ${cursor.number}; the follower cannot find where its branch left the node's: re-anchor it with vigil follow reset --chain ${chainId}`
    })
  const orphans = yield* store.orphaned(chainId, ancestor.number)
  const now = yield* Clock.currentTimeMillis
  const deliveries: Array<WebhookStore.Delivery> = []
  for (const alert of orphans) deliveries.push(...(yield* notices(bots, outbox, alert, "retraction", now)))
  const outcome = yield* store.rewind(chainId, cursor, {
    ancestor,
    retract: orphans.map((a) => a.id),
    at: Instant.iso(now),
    deliveries
  })
  if (outcome === "advanced") {
    chains.record(chainId, ChainStates.Event.Rewound({ cursor: ancestor.number, retracted: orphans.length }))
    yield* Effect.logWarning(
      `chain ${chainId} reorganised below block ${cursor.number}: back to ${ancestor.number}, ${orphans.length} alert(s) retracted`
    )
    if (deliveries.length > 0) yield* wake
  }
})

/** Switches off a bot whose rules went over their bounds at `blockNumber`, saying why on the bot. */
const pause = (shared: Shared, chainId: number, p: Prepared, exceeded: "bindings" | "matches", blockNumber: number) =>
  switchOff(
    shared,
    chainId,
    p.bot,
    `${Scan.overBounds(shared.settings.limits, exceeded, blockNumber)}, then switch it on again`,
    blockNumber
  )

/**
 * Switches off a bot, saying why on the bot (and on /health until it is switched on): its rules over their bounds
 * (at `blockNumber`), or its key revoked or expired.
 */
export const switchOff = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  stored: Prepared["bot"],
  reason: string,
  blockNumber?: number
) {
  const { bots, paused, chains } = shared
  const now = yield* Clock.currentTimeMillis
  const { watchingFrom: _, ...bot } = stored
  // Stored before anything else is done for the bot, so a restart does not run it again. Another update meanwhile
  // wins (the next step reads the bot again and judges it afresh).
  yield* bots.update({
    ...bot,
    active: false,
    paused: { reason, ...(blockNumber === undefined ? {} : { blockNumber }), at: Instant.iso(now) },
    revision: bot.revision + 1,
    updated: Instant.iso(now)
  })
  const notes = paused.get(chainId) ?? new Map<string, string>()
  paused.set(chainId, notes)
  const note = `bot ${stored.id}: paused: ${reason}`
  notes.set(stored.id, note)
  chains.record(chainId, ChainStates.Event.Paused({ note }))
  yield* Effect.logWarning(`chain ${chainId}: bot ${stored.id} paused: ${reason}`)
})

/** The alerts of a bot's matches over `blocks` (from `first`), after its recent ones, with their deliveries. */
const alertsOf = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  p: Prepared,
  matches: ReadonlyArray<Scan.Found>,
  blocks: ReadonlyArray<Block>,
  first: number,
  now: number
) {
  const { store } = shared
  if (matches.length === 0) return { alerts: [], deliveries: [] }
  const from = Alerting.since(p, blocks, first)
  const history = from === undefined ? [] : yield* store.recent(p.bot.id, from)
  return Alerting.alertsOf(chainId, p, matches, blocks, history, now, shared.settings.digest)
})

/**
 * Runs one bot over up to `batch` of the blocks it lacks below the cursor, from `next`, storing its alerts
 * and how far it got, without moving the cursor: a bot created (or switched on) before the follower reached
 * its `watchingFrom` misses nothing. `window`: the window kept at the cursor, whose blocks it takes; the window
 * it answers has the older blocks it read added.
 */
export const backfill = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  cursor: Mark,
  p: Prepared,
  next: number,
  traces: boolean,
  window?: Window
) {
  const to = Math.min(cursor.number, next + shared.settings.batch - 1)
  const start = Math.max(0, next - p.reach)
  const { blocks, kept } = yield* blocksFor(shared, chainId, p, start, to, traces, window)
  const done = yield* runOver(shared, chainId, cursor, p, next, to, blocks)
  return { outcome: done, window: kept }
})

/** Runs the bot over `blocks` (from `next` to `to`, with the blocks before that it reaches), storing what it found. */
const runOver = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  cursor: Mark,
  p: Prepared,
  next: number,
  to: number,
  blocks: ReadonlyArray<Block>
) {
  const { settings, store, wake } = shared
  const start = Math.max(0, next - p.reach)
  const began = yield* Clock.currentTimeNanos
  const pace = yield* Pace.make
  const facts = factsOf(blocks, readsOf([p]), pace)
  const limits = Scan.limitsOver(settings.limits, to - next + 1)
  // Pending matches were found over the blocks the bot reaches: as many as those blocks may make.
  const before = yield* pendingOf(p, facts, next - 1, Scan.limitsOver(settings.limits, p.reach), pace)
  if (before.exceeded !== undefined) {
    yield* pause(shared, chainId, p, before.exceeded, next - 1)
    return "advanced" as const
  }
  const judged = yield* Scan.judge(
    p.rules,
    yield* facts(start, to, p.contracts, p.bot.options.topLevelTxBlockRange),
    next,
    before.pending,
    limits,
    pace
  )
  if (judged.exceeded !== undefined) {
    yield* pause(shared, chainId, p, judged.exceeded, to)
    return "advanced" as const
  }
  const now = yield* Clock.currentTimeMillis
  const made = yield* alertsOf(shared, chainId, p, judged.found, blocks, next, now)
  const judging = Number((yield* Clock.currentTimeNanos) - began) / 1e9
  const done = yield* store.advance(chainId, cursor, {
    blocks: [],
    alerts: made.alerts,
    deliveries: made.deliveries,
    keep: settings.keep,
    coverage: [{ botId: p.bot.id, from: p.from!, through: to }]
  })
  if (done.outcome === "advanced") {
    shared.chains.record(chainId, ChainStates.Event.CaughtUp({ alerts: done.stored.length, judging }))
    if (done.stored.length > 0) yield* wake
  }
  return done.outcome
})

/**
 * The blocks `start` to `to` (at or below the cursor) a catch-up needs: from the window kept at the cursor where it
 * has them, the older ones it lacks read from the node and kept in it after (`kept`), so the next catch-up of a bot
 * that reaches as far back finds them there; without a window, all read from the node.
 */
const blocksFor = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  p: Prepared,
  start: number,
  to: number,
  traces: boolean,
  window: Window | undefined
) {
  if (window === undefined || window.traces !== traces)
    return { blocks: yield* readProcessed(shared, chainId, p, start, to, traces), kept: undefined }
  const first = window.blocks[0]?.number ?? window.at.number + 1
  const older = start < first ? yield* readProcessed(shared, chainId, p, start, first - 1, traces) : []
  const all = older.length === 0 ? window.blocks : [...older, ...window.blocks]
  const kept: Window =
    older.length === 0
      ? window
      : { ...window, blocks: all, range: Math.max(window.range, window.at.number - start + 1) }
  return { blocks: all.filter((b) => b.number >= start && b.number <= to), kept }
})

/** Blocks `start` to `to`, already processed, read again from the node: a block it lacks or no longer has waits. */
const readProcessed = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  p: Prepared,
  start: number,
  to: number,
  traces: boolean
) {
  const { store, chain } = shared
  const numbers = Array.from({ length: to - start + 1 }, (_, i) => start + i)
  const kept = new Map((yield* store.marks(chainId, start)).map((m) => [m.number, m.hash]))
  const blocks: Array<Block> = []
  for (const r of yield* chain.blocks(chainId, numbers, { traces })) {
    if (r._tag === "Missing")
      return yield* new Unsettled({
        chainId,
        message: `block ${r.number}, which bot ${p.bot.id} watches from block ${p.from}: ${r.error.message}`
      })
    const known = kept.get(r.number)
    // A block processed on another branch than the node's now: a reorganisation the next step resolves.
    if (known !== undefined && known !== r.data.block.hash)
      return yield* new Unsettled({
        chainId,
        message: `block ${r.number} is no longer the one processed (a reorganisation under way); bot ${p.bot.id} waits`
      })
    blocks.push({ ...r.data, number: r.number })
  }
  return blocks
})

/**
 * The node lacks what the step needs (a block it announced, a head below the blocks processed): the step
 * waits, and the state says why and since when, from the first step that met it.
 */
export const stall = (shared: Shared, chainId: number, reason: string) =>
  Effect.gen(function* () {
    const { chains } = shared
    const now = yield* Clock.currentTimeMillis
    if (chains.get(chainId)?.lastError !== reason) yield* Effect.logWarning(`following chain ${chainId}: ${reason}`)
    chains.record(chainId, ChainStates.Event.Stalled({ reason, at: Instant.iso(now) }))
    return "stalled" as const
  })

/**
 * Follows the chain for the first time: the cursor is set just below the first block a bot watches from (or at
 * the head); what came before is not looked at.
 */
export const begin = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  runnable: ReadonlyArray<Prepared>,
  target: number,
  head: number
) {
  const { settings, store, chain, chains } = shared
  const watched = runnable.flatMap((p) => (p.from === undefined ? [] : [p.from - 1]))
  const [at] = yield* chain.hashes(chainId, [Math.max(0, Math.min(target, ...watched))])
  if (at === undefined) return "idle" as const
  const mark = { number: at.number, hash: at.hash, parentHash: at.parentHash }
  yield* store.advance(chainId, undefined, { blocks: [mark], alerts: [], deliveries: [], keep: settings.keep })
  chains.record(chainId, ChainStates.Event.Begun({ cursor: at.number, head }))
  return "moved" as const
})

/**
 * The next blocks after the cursor (a batch, up to `target`) that link to it: `reorganised` when the first does
 * not follow the cursor; a later one that does not link, or one the node could not give whole (`missing` says
 * why), ends the run there and the next step reads again from it.
 */
export const readFresh = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  cursor: Mark,
  target: number,
  head: number,
  traces: boolean,
  ahead: ReadAhead
) {
  const { settings, chain } = shared
  const { from, to } = Continuity.nextRange(cursor.number, target, 0, settings.batch)!
  const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i)
  const [started, ...later] = ahead.reads
  const taken = started !== undefined && started.from === from && started.to === to && started.traces === traces
  if (taken) ahead.reads = later
  else yield* dropAhead(ahead)
  const results = taken ? yield* Fiber.join(started.fiber) : yield* chain.blocks(chainId, range(from, to), { traces })
  // While these blocks are judged and stored, the next ones (when blocks up to the target remain) are read, two
  // batches ahead, so the node is never idle while a step judges and a read answers. Each read starts now, its
  // requests sent before this step goes on: a fork started later would wait for the step's first pause, and the
  // node would idle while the step judges.
  if (results.every((r) => r._tag !== "Missing"))
    for (let last = ahead.reads.at(-1)?.to ?? to; ahead.reads.length < readsAhead;) {
      const next = Continuity.nextRange(last, target, 0, settings.batch)
      if (next === undefined) break
      ahead.reads.push({
        ...next,
        traces,
        fiber: yield* Effect.forkChild(chain.blocks(chainId, range(next.from, next.to), { traces }), {
          startImmediately: true
        })
      })
      last = next.to
    }
  const read: Array<Block> = []
  let missing: string | undefined
  for (const r of results) {
    if (r._tag === "Missing") {
      missing = `block ${r.number}, at or below the node's head ${head}, could not be read whole: ${r.error.message}`
      break
    }
    read.push({ ...r.data, number: r.number })
  }
  const linked = Continuity.extend(
    cursor.hash,
    read.map((b) => b.block)
  )
  if (linked.kind === "reorganised") return { kind: "reorganised" as const }
  return { kind: "fresh" as const, fresh: read.slice(0, linked.count), missing }
})

/**
 * The blocks after those of a step, read while the step is judged and stored (catching up, the node is read
 * while the bots run): taken by the next step when it asks for that very range, else dropped. What they say is
 * checked as any read is (linked to the cursor, none missing) when the step takes them.
 */
export interface ReadAhead {
  /** The reads started, in the order of their blocks, each range following the one before it. */
  reads: Array<{
    readonly from: number
    readonly to: number
    readonly traces: boolean
    readonly fiber: Fiber.Fiber<ReadonlyArray<BlockResult>, ChainDataError>
  }>
}

/** How many batches a catch-up reads ahead of the step it judges. */
const readsAhead = 2

/** Drops the reads started ahead (the chain moved, the step failed). */
export const dropAhead = (ahead: ReadAhead) =>
  Effect.suspend(() => {
    const started = ahead.reads
    ahead.reads = []
    return Effect.forEach(started, (r) => Fiber.interrupt(r.fiber), { discard: true })
  })

/**
 * Runs every joined bot over the fresh blocks (with the window before them): the alerts and deliveries of their
 * matches, each bot's matches left pending, and the bots not run through the fresh blocks: those paused for going
 * over their bounds, and those past their key's share of the step, which catch up over the blocks they lack in
 * later steps (a key's bots together try at most `bindingsPerStep` bindings per fresh block, so one key's heavy
 * bots delay the others' alerts by that much at most).
 */
export const judgeAll = Effect.fnUntraced(function* (
  shared: Shared,
  chainId: number,
  joined: ReadonlyArray<Prepared>,
  window: Window,
  fresh: ReadonlyArray<Block>,
  cursor: Mark,
  now: number
) {
  const { settings, chains } = shared
  const blocks = [...window.blocks, ...fresh]
  const first = fresh[0]!.number
  const last = fresh.at(-1)!.number
  /** Each bot's alerts and deliveries, by its position in `joined`: given in that order whatever order judged them. */
  const made: Array<
    { readonly alerts: ReadonlyArray<Alert>; readonly deliveries: ReadonlyArray<WebhookStore.Delivery> } | undefined
  > = []
  const pending = new Map<string, ReadonlySet<string>>()
  const notRun = new Set<Prepared>()
  const pace = yield* Pace.make
  const facts = factsOf(blocks, readsOf(joined), pace)
  const limits = Scan.limitsOver(settings.limits, fresh.length)
  const perKey = settings.limits.bindingsPerStep * fresh.length
  /** The bindings each key's bots may still try in this step. */
  const shares = new Map<string, number>()
  for (const at of judgingOrder(joined)) {
    const p = joined[at]!
    yield* Pace.breathe(pace)
    const key = p.bot.keyId
    // A bot without a first watched block has no coverage to catch up from: it is run whatever its key's share.
    const deferrable = p.from !== undefined
    const share = () => (deferrable ? (shares.get(key) ?? perKey) : Infinity)
    const defer = () => {
      notRun.add(p)
      chains.record(chainId, ChainStates.Event.Deferred())
    }
    if (share() <= 0) {
      defer()
      continue
    }
    /** The limits of the bot's next evaluation, and whether they are its key's share rather than its bounds. */
    const next = () => ({
      limits: { ...limits, bindings: Math.min(limits.bindings, share()) },
      byShare: share() < limits.bindings
    })
    const spend = (bindings: number) => {
      if (deferrable) shares.set(key, share() - bindings)
    }
    /** Stops the bot for this step: paused over its bounds, or, past its key's share, waiting for its turn. */
    const stop = (exceeded: "bindings" | "matches", blockNumber: number, byShare: boolean) => {
      if (exceeded === "bindings" && byShare) return Effect.sync(defer)
      notRun.add(p)
      return pause(shared, chainId, p, exceeded, blockNumber)
    }
    // A bot that joined since the window was built: its matches pending at the cursor are found now.
    let before = window.pending.get(p.key)
    if (before === undefined) {
      const bounded = next()
      // Pending matches were found over the blocks the bot reaches: as many as those blocks may make.
      const matches = Scan.limitsOver(settings.limits, p.reach).matches
      const at = yield* pendingOf(p, facts, cursor.number, { ...bounded.limits, matches }, pace)
      spend(at.bindings)
      if (at.exceeded !== undefined) {
        yield* stop(at.exceeded, cursor.number, bounded.byShare)
        continue
      }
      before = at.pending
    }
    const bounded = next()
    const judged = yield* Scan.judge(
      p.rules,
      yield* facts(first - p.reach, last, p.contracts, p.bot.options.topLevelTxBlockRange),
      first,
      before,
      bounded.limits,
      pace
    )
    spend(judged.bindings)
    if (judged.exceeded !== undefined) {
      yield* stop(judged.exceeded, last, bounded.byShare)
      continue
    }
    pending.set(p.key, judged.pending)
    if (judged.found.length === 0) continue
    made[at] = yield* alertsOf(shared, chainId, p, judged.found, blocks, first, now)
  }
  const alerts: Array<Alert> = []
  const deliveries: Array<WebhookStore.Delivery> = []
  for (const m of made) {
    if (m === undefined) continue
    alerts.push(...m.alerts)
    deliveries.push(...m.deliveries)
  }
  return { alerts, deliveries, pending, notRun }
})
