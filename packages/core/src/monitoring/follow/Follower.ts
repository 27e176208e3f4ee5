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
 *   step, the next two batches read while one is judged and stored), rebuilding its window (the blocks a multi-transaction rule or a forward negation still reaches) from
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
import { Cause, Clock, Context, Effect, type Fiber, Layer, Queue, Random, Stream } from "effect"
import { ApiKeyStore } from "../../access/index.ts"
import { Outbox, WebhookStore } from "../../delivery/index.ts"
import { Instant } from "../../kernel/index.ts"
import { BotStore } from "../bots/BotStore.ts"
import { ChainData } from "../chain/ChainData.ts"
import { ContractStore } from "../contracts/ContractStore.ts"
import * as ChainStates from "./ChainStates.ts"
import * as Continuity from "./Continuity.ts"
import * as FollowLeases from "./FollowLeases.ts"
import { AlertLog, type Coverage, FollowStore, type Mark } from "./FollowStore.ts"
import { type Block, markOf, type Prepared, preparer, type Window } from "./Ready.ts"
import { type ChainState, DeepReorganisation, defaultSettings, type Settings } from "./Settings.ts"
import * as Steps from "./Steps.ts"
import * as Tenure from "./Tenure.ts"

export { type ChainState, DeepReorganisation, defaultSettings, type Settings, Unsettled } from "./Settings.ts"
export * as ChainStates from "./ChainStates.ts"
export { judgingOrder, type Prepared } from "./Ready.ts"

/** The live followers. */
export class Follower extends Context.Service<
  Follower,
  {
    /** The state of every chain with an active bot: followed here, or in standby while another instance does. */
    readonly status: Effect.Effect<ReadonlyArray<ChainState>>
    /** What each chain's follower counted since the process started (only ever growing), by chain id. */
    readonly counts: Effect.Effect<ReadonlyMap<number, ChainStates.Counts>>
    /** This instance's name as a holder of chains' leases. */
    readonly instance: string
  }
>()("@vigil/core/Follower") {}

/** The followers, for as long as the layer lives. */
export const layer = (
  settings: Settings = defaultSettings
): Layer.Layer<
  Follower,
  never,
  | BotStore
  | ContractStore
  | FollowStore
  | AlertLog
  | FollowLeases.FollowLeases
  | WebhookStore.Destinations
  | Outbox.Outbox
  | ChainData
  | ApiKeyStore.ApiKeyStore
> =>
  Layer.effect(Follower)(
    Effect.gen(function* () {
      const bots = yield* BotStore
      const contracts = yield* ContractStore
      const outbox = yield* WebhookStore.Destinations
      const chain = yield* ChainData
      const chains = ChainStates.make()
      const instance = settings.instance ?? `instance-${(yield* Random.nextInt).toString(36)}`
      const deps: Deps = {
        leases: yield* FollowLeases.FollowLeases,
        instance,
        settings,
        bots,
        store: { ...(yield* FollowStore), ...(yield* AlertLog) },
        outbox,
        chain,
        wake: (yield* Outbox.Outbox).wake,
        chains,
        paused: new Map(),
        prepare: preparer(bots, contracts, outbox, yield* ApiKeyStore.ApiKeyStore)
      }
      const running = new Map<number, Fiber.Fiber<void>>()
      // Bots are re-read at least every second, so a bot switched on is followed soon even with a long poll interval.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.andThen(
            Tenure.supervise(deps, running, (chainId) => follow(deps, chainId)),
            Effect.sleep(Math.min(settings.pollMillis, 1_000))
          )
        )
      )
      return Follower.of({ status: status(deps), counts: Effect.sync(chains.counts), instance })
    })
  )

/** What a chain's follower works with: what its steps share, and the preparer of the chain's bots. */
interface Deps extends Steps.Shared {
  readonly prepare: ReturnType<typeof preparer>
  readonly leases: FollowLeases.FollowLeases["Service"]
  readonly instance: string
}

/**
 * What a follower keeps between its steps: the window before the cursor, once read; the key last caught up; the
 * blocks after the step's, read while it is judged and stored.
 */
interface Memory {
  window: Window | undefined
  caughtUp: string | undefined
  readonly ahead: Steps.ReadAhead
  /** The joined bots the step's fresh blocks were not run for (paused, or past their key's share). */
  notRun: number
}

/**
 * The state of every chain followed. A step held in the reader's retries has not failed yet: the reader's
 * trouble says so from its first failed attempt. While the node fails (or the follower is halted), how far behind
 * the head it is is not known: no `lag` rather than the last one. Retractions are the chain's as stored, so those of
 * another instance or of a re-anchoring (`vigil follow reset`) count too, where the chain is followed.
 */
const status = ({ chains, chain, store }: Deps) =>
  Effect.gen(function* () {
    const out: Array<ChainState> = []
    for (const state of chains.all()) {
      const trouble =
        state.stalledSince === undefined && state.state !== "standby" ? yield* chain.trouble(state.chainId) : undefined
      const retractions =
        state.state === "standby"
          ? state.retractions
          : yield* Effect.orElseSucceed(store.retracted(state.chainId), () => state.retractions)
      // The head was not read since (a node that lacks a block but answers still gives its head).
      const waiting = trouble !== undefined || state.state === "backing off" || state.state === "halted"
      const { lag: _, ...unknown } = state
      out.push({
        ...(waiting ? unknown : state),
        retractions,
        ...(trouble === undefined
          ? {}
          : {
              lastError: `the node is failing, retrying: ${trouble.message}`,
              stalledSince: Instant.iso(trouble.since)
            })
      })
    }
    return out
  })

/**
 * The chain's bots ready to run now, and whether the node's call traces are read for them; the chain's state
 * says which active bots are not run, and why.
 */
const runnableOf = Effect.fnUntraced(function* (deps: Deps, chainId: number) {
  const { chain, chains } = deps
  const { ready, problems, lapsed, active } = yield* deps.prepare(chainId)
  for (const { bot, reason } of lapsed) yield* Steps.switchOff(deps, chainId, bot, reason)
  const wantsTraces = ready.some((p) => p.rules.some((r) => r.needsTraces))
  const traces = wantsTraces && (yield* chain.tracesAvailable(chainId))
  const runnable = traces ? ready : ready.filter((p) => !p.rules.some((r) => r.needsTraces))
  // A paused bot switched on again is no longer said to be paused.
  const notes = deps.paused.get(chainId)
  for (const p of ready) notes?.delete(p.bot.id)
  const skipped = [
    ...problems,
    ...ready
      .filter((p) => !runnable.includes(p))
      .map((p) => `bot ${p.bot.id}: needs call traces, and the node of chain ${chainId} has none`),
    ...(notes?.values() ?? [])
  ]
  chains.record(chainId, ChainStates.Event.Prepared({ bots: active, skipped }))
  return { runnable, traces }
})

/** The bots that lack blocks at or below `cursor` (switched on before the follower got there, or past their key's share). */
const behindOf = (
  cursor: Mark | undefined,
  coverage: ReadonlyMap<string, Coverage>,
  runnable: ReadonlyArray<Prepared>
) => {
  if (cursor === undefined) return []
  return runnable.flatMap((p) => {
    if (p.from === undefined) return []
    const c = coverage.get(p.bot.id)
    const next = c !== undefined && c.from === p.from ? c.through + 1 : p.from
    return next <= cursor.number ? [{ p, next }] : []
  })
}

/**
 * Runs one bot that lacks blocks below the cursor over a batch of them (the others go on meanwhile), the keys taking
 * turns: `moved` when another process moved the cursor, `done` when a bot was run, `none` when none lacks any.
 */
const catchUp = Effect.fnUntraced(function* (
  deps: Deps,
  chainId: number,
  runnable: ReadonlyArray<Prepared>,
  traces: boolean,
  memory: Memory
) {
  const [cursor, coverage] = yield* Effect.all([deps.store.cursor(chainId), deps.store.coverage(chainId)], {
    concurrency: 2
  })
  const behind = behindOf(cursor, coverage, runnable)
  if (behind.length === 0) return "none" as const
  // The first bot of the next key after the one caught up last, in key order.
  const keys = [...new Set(behind.map((b) => b.p.bot.keyId))].sort()
  const turn = keys.find((k) => memory.caughtUp === undefined || k > memory.caughtUp) ?? keys[0]!
  memory.caughtUp = turn
  const { p, next } = behind.find((b) => b.p.bot.keyId === turn)!
  // The window kept before the cursor holds the blocks it reaches, unless the chain moved since it was kept.
  const window = memory.window?.at.hash === cursor!.hash ? memory.window : undefined
  const done = yield* Steps.backfill(deps, chainId, cursor!, p, next, traces, window)
  if (done.outcome === "moved") return "moved" as const
  if (done.window !== undefined) memory.window = done.window
  return "done" as const
})

/**
 * One step of a chain: the fresh blocks for the bots that have every block below them, then one bot that lacks
 * some caught up over a batch of them, so a catch-up holds back the others' alerts by one bot's work at most.
 * `idle` when there was nothing to do.
 */
const step = Effect.fnUntraced(function* (deps: Deps, chainId: number, memory: Memory) {
  const { settings, chain, store, chains } = deps
  const { runnable, traces } = yield* runnableOf(deps, chainId)
  if (runnable.length === 0) return "idle" as const
  const head = yield* chain.head(chainId)
  const cursor = yield* store.cursor(chainId)
  const coverage = yield* store.coverage(chainId)
  const target = head - (settings.confirmations[chainId] ?? settings.defaultConfirmations)
  chains.record(
    chainId,
    ChainStates.Event.HeadRead({ head, ...(cursor === undefined ? {} : { cursor: cursor.number }) })
  )
  if (cursor !== undefined && head < cursor.number)
    return yield* Steps.stall(
      deps,
      chainId,
      `the node's head ${head} is below block ${cursor.number}, already processed: a node behind (a lagging replica, a resync); waiting for it`
    )
  const behind = new Set(behindOf(cursor, coverage, runnable).map((b) => b.p))
  // A bot that reaches further back than the window kept (one just switched on) is caught up instead, which reads
  // the older blocks: the others' fresh blocks do not wait for them (when there are others).
  const held =
    cursor !== undefined && memory.window?.at.hash === cursor.hash && memory.window.traces === traces
      ? memory.window.range
      : Infinity
  const current = runnable.filter((p) => !behind.has(p))
  const near = current.filter((p) => p.reach <= held || p.from === undefined)
  const joined = near.length > 0 ? near : current
  memory.notRun = 0
  const live =
    joined.length === 0
      ? ("idle" as const)
      : yield* forward(deps, chainId, memory, { cursor, target, head, joined, runnable, traces })
  if (live === "stalled") return live
  if (live === "changed") return "moved" as const
  // Every bot was run through the cursor, before the step and over its blocks: none lacks any, nothing to read.
  const caught =
    cursor !== undefined && behind.size === 0 && joined.length === runnable.length && memory.notRun === 0
      ? ("none" as const)
      : yield* catchUp(deps, chainId, runnable, traces, memory)
  if (caught === "moved") {
    memory.window = undefined
    yield* Steps.dropAhead(memory.ahead)
    return "moved" as const
  }
  return caught === "done" || live === "more" ? ("moved" as const) : ("idle" as const)
})

/**
 * The fresh blocks for the joined bots: `more` when blocks up to the target remain, `idle` when none did,
 * `stalled` when the node lacks what is needed, `changed` when the chain reorganised or another process moved it.
 */
const forward = Effect.fnUntraced(function* (
  deps: Deps,
  chainId: number,
  memory: Memory,
  {
    cursor,
    target,
    head,
    joined,
    runnable,
    traces
  }: {
    readonly cursor: Mark | undefined
    readonly target: number
    readonly head: number
    readonly joined: ReadonlyArray<Prepared>
    readonly runnable: ReadonlyArray<Prepared>
    readonly traces: boolean
  }
) {
  const { chain } = deps
  if (cursor !== undefined && target <= cursor.number) {
    // Nothing new: check that the cursor's block is still the chain's (a reorganisation at the same height).
    // A node without the cursor's block is behind (a lagging replica, a node syncing): it is waited for,
    // not taken for a reorganisation.
    const [onNode] = yield* chain.hashes(chainId, [cursor.number])
    if (Continuity.atCursor(cursor, onNode) !== "reorganised") return "idle" as const
    memory.window = undefined
    yield* Steps.dropAhead(memory.ahead)
    yield* Steps.rewind(deps, chainId, cursor)
    return "changed" as const
  }
  if (target < 0) return "idle" as const
  if (cursor === undefined) {
    const begun = yield* Steps.begin(deps, chainId, runnable, target, head)
    return begun === "moved" ? ("more" as const) : begun
  }
  const read = yield* Steps.readFresh(deps, chainId, cursor, target, head, traces, memory.ahead)
  if (read.kind === "reorganised") {
    memory.window = undefined
    yield* Steps.dropAhead(memory.ahead)
    yield* Steps.rewind(deps, chainId, cursor)
    return "changed" as const
  }
  const { fresh, missing } = read
  if (fresh.length === 0) return missing === undefined ? ("idle" as const) : yield* Steps.stall(deps, chainId, missing)
  return yield* advance(deps, chainId, memory, { cursor, fresh, joined, runnable, traces, head, target })
})

/**
 * Runs the joined bots over fresh blocks linked to the cursor (with the window before them) and stores their
 * alerts with the new cursor in one transaction: `moved` when another process took the step meanwhile, else
 * `moved` too while blocks up to the target remain, else `idle`.
 */
const advance = Effect.fnUntraced(function* (
  deps: Deps,
  chainId: number,
  memory: Memory,
  {
    cursor,
    fresh,
    joined,
    runnable,
    traces,
    head,
    target
  }: {
    readonly cursor: Mark
    readonly fresh: ReadonlyArray<Block>
    readonly joined: ReadonlyArray<Prepared>
    /** Every bot run on the chain, joined or catching up: the window keeps what it holds of what they reach. */
    readonly runnable: ReadonlyArray<Prepared>
    readonly traces: boolean
    readonly head: number
    readonly target: number
  }
) {
  const { settings, store, chains, wake } = deps
  const needed = Math.max(0, ...joined.map((p) => p.reach))
  let window = memory.window
  // Read again after a restart or a failed step (and for a bot reaching further back, joined then).
  if (window === undefined || window.at.hash !== cursor.hash || window.traces !== traces || window.range < needed)
    window = yield* Steps.rebuild(deps, chainId, cursor, joined, traces)
  // Kept as far back as every bot run on the chain reaches (catch-ups included), of what the window holds.
  const range = Math.max(needed, Math.min(Math.max(0, ...runnable.map((p) => p.reach)), window.range))
  const blocks = [...window.blocks, ...fresh]
  const last = fresh.at(-1)!
  const now = yield* Clock.currentTimeMillis
  const began = yield* Clock.currentTimeNanos
  const judged = yield* Steps.judgeAll(deps, chainId, joined, window, fresh, cursor, now)
  const judging = Number((yield* Clock.currentTimeNanos) - began) / 1e9
  const done = yield* store.advance(chainId, cursor, {
    blocks: fresh.map(markOf),
    alerts: judged.alerts,
    deliveries: judged.deliveries,
    keep: settings.keep,
    coverage: joined.flatMap((p) =>
      p.from === undefined || judged.notRun.has(p) ? [] : [{ botId: p.bot.id, from: p.from, through: last.number }]
    )
  })
  if (done.outcome === "moved") {
    // Another process took this step: start again from where it left the chain.
    memory.window = undefined
    yield* Steps.dropAhead(memory.ahead)
    return "changed" as const
  }
  memory.notRun = judged.notRun.size
  memory.window = {
    at: markOf(last),
    traces,
    range,
    blocks: range === 0 ? [] : blocks.filter((b) => b.number > last.number - range),
    pending: judged.pending
  }
  chains.record(
    chainId,
    ChainStates.Event.Advanced({
      cursor: last.number,
      head,
      blocks: fresh.length,
      alerts: done.stored.length,
      at: Instant.iso(now),
      catchingUp: last.number < target,
      judging
    })
  )
  if (done.stored.length > 0) yield* wake
  return last.number < target ? ("more" as const) : ("idle" as const)
})

/** Backoff after `failures` failures in a row: doubling from the poll interval, up to the longest wait. */
const backoff = (settings: Settings, failures: number) =>
  Math.min(settings.maxBackoffMillis, settings.pollMillis * 2 ** Math.min(failures, 16))

/** Listens to the chain's new heads, nudging its follower at each; retried while it fails, unless not configured. */
const listen = (deps: Deps, chainId: number, nudge: Queue.Queue<void>) =>
  Effect.gen(function* () {
    const { chain, chains } = deps
    let failures = 0
    while (true) {
      const ended = yield* Effect.scoped(
        Effect.gen(function* () {
          const heads = yield* chain.newHeads(chainId)
          failures = 0
          chains.record(chainId, ChainStates.Event.Subscribed())
          yield* Stream.runForEach(heads, () => Queue.offer(nudge, undefined))
          return "the node ended the subscription"
        })
      ).pipe(Effect.catch((e) => Effect.succeed(e.reason === "NotConfigured" ? undefined : e.message)))
      if (ended === undefined) return
      failures++
      chains.record(chainId, ChainStates.Event.Unsubscribed({ error: ended }))
      if (failures === 1) yield* Effect.logWarning(`new heads of chain ${chainId}: ${ended}`)
      yield* Effect.sleep(backoff(deps.settings, failures))
    }
  })

/**
 * Follows one chain until interrupted: steps at once while there is work, else at the next poll or new head.
 */
const follow = (deps: Deps, chainId: number) =>
  Effect.gen(function* () {
    const { chains } = deps
    const memory: Memory = { window: undefined, caughtUp: undefined, ahead: { reads: [] }, notRun: 0 }
    const nudge = yield* Queue.sliding<void>(1)
    yield* Effect.forkChild(listen(deps, chainId, nudge))
    let failures = 0
    while (true) {
      const outcome = yield* step(deps, chainId, memory).pipe(
        Effect.map((o) => {
          failures = 0
          if (o === "stalled") return "idle" as const
          // A step that went through ends the trouble: its error is no longer the state.
          chains.record(chainId, ChainStates.Event.Stepped())
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
            yield* Steps.dropAhead(memory.ahead)
            const now = yield* Clock.currentTimeMillis
            chains.record(
              chainId,
              ChainStates.Event.Failed({
                message,
                halted: squashed instanceof DeepReorganisation,
                at: Instant.iso(now)
              })
            )
            if (failures === 1) yield* Effect.logWarning(`following chain ${chainId}: ${message}`)
            return "failed" as const
          })
        })
      )
      if (outcome === "moved") continue
      if (outcome === "failed") yield* Effect.sleep(backoff(deps.settings, failures))
      else yield* Effect.raceFirst(Effect.sleep(deps.settings.pollMillis), Queue.take(nudge))
    }
  })
