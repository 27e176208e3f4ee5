/**
 * Rules over a run of blocks read through ChainData, in windows: the engine of historical analysis and backtests.
 *
 * Blocks are read in chunks; each chunk is evaluated together with the `blockRange` blocks before it, so every
 * match (its transactions at most `blockRange` blocks apart) lies whole in some window, and a negation sees every
 * transaction it could bind. A match is reported once: in the first window where its last transaction is new and
 * no negation's range is still open past the window (it is pending until the next window, or the end, closes it).
 */
import { Effect, Schema } from "effect"
import { Pace } from "../../kernel/index.ts"
import type * as Ast from "../rules/Ast.ts"
import * as Evaluator from "../rules/Evaluator.ts"
import type * as Facts from "../rules/Facts.ts"
import * as Reads from "../rules/Reads.ts"
import { ChainData, type ChainDataError } from "./ChainData.ts"
import { type BlockData, type Contract, fromBlocks } from "./ChainFacts.ts"

/** A checked rule to run, by its index among the bot's rules. */
export interface Rule {
  readonly index: number
  readonly expr: Ast.Expr
  readonly needsTraces: boolean
}

/** A match of one rule. */
export interface Found {
  readonly rule: number
  readonly evidence: Evaluator.Evidence
}

/** What a scan saw. */
export interface Outcome {
  /** Blocks read and evaluated. */
  readonly blocks: number
  /** Blocks the node did not have (each with its reason); the others were evaluated. */
  readonly missing: ReadonlyArray<{ readonly number: number; readonly reason: string; readonly message: string }>
  /** Transactions evaluated. */
  readonly transactions: number
}

/** The options of a scan. */
export interface Options {
  readonly chainId: number
  /** The blocks (each read once, in ascending order, however they are given). */
  readonly blocks: ReadonlyArray<number>
  readonly contracts: ReadonlyArray<Contract>
  readonly rules: ReadonlyArray<Rule>
  /** `options.topLevelTxBlockRange`. */
  readonly blockRange: number
  /** Blocks read per window. Default 100. */
  readonly chunk?: number
  /** What the rules may do in each window (default {@link defaultBounds}); past them the scan fails. */
  readonly bounds?: Bounds
  /** Called with each match as soon as it is certain, in block order per rule. */
  readonly onMatch: (found: Found) => Effect.Effect<void>
}

/** The block of a match's last transaction: where the match completed. */
export const lastBlock = (e: Evaluator.Evidence): number =>
  Math.max(...Object.values(e.transactions).map((t) => t.blockNumber))

/** A match's identity within one rule: the rule and its bound transactions. */
export const keyOf = (rule: number, e: Evaluator.Evidence): string => `${rule}:${Evaluator.keyOf(e.transactions)}`

/**
 * What evaluating a bot's rules in one window may do: the bindings its rules try (together), and the new matches
 * per new block of the window. Every path that evaluates a bot's rules over a chain's blocks (a follower's step, a
 * bot's catch-up, its matches still pending when it starts, a backtest's windows) runs under them.
 */
export interface Bounds {
  readonly bindingsPerStep: number
  readonly matchesPerBlock: number
}

/** 1,000,000 bindings take 30 to 500 ms (more when each is a match: evidence is built for it), in slices. */
export const defaultBounds: Bounds = { bindingsPerStep: 1_000_000, matchesPerBlock: 100 }

/** The limits of one window of `blocks` new blocks. */
export const limitsOver = (bounds: Bounds, blocks: number) => ({
  bindings: bounds.bindingsPerStep,
  matches: bounds.matchesPerBlock * Math.max(1, blocks)
})

/** Why rules went over their bounds at `blockNumber`, and what to do. */
export const overBounds = (bounds: Bounds, exceeded: "bindings" | "matches", blockNumber: number) =>
  exceeded === "bindings"
    ? `its rules tried more than ${bounds.bindingsPerStep} bindings in one step, at block ${blockNumber}: they match too widely (join its transactions on a field, narrow the rule or its topLevelTxBlockRange)`
    : `its rules matched more than ${bounds.matchesPerBlock} times a block, at block ${blockNumber}: narrow the rule`

/** Rules of a scan went over their bounds: the scan stops there. */
export class OverBounds extends Schema.TaggedError<OverBounds>()("OverBounds", {
  exceeded: Schema.Literals(["bindings", "matches"]),
  blockNumber: Schema.Int,
  message: Schema.String
}) {}

/**
 * Transactions decoded at a time by {@link decode}, between which it lets the process's other work run (a few
 * mainnet-sized blocks: about 20 ms of decoding).
 */
const decodedPerSlice = 500

/**
 * `fromBlocks` a slice of blocks at a time (whole blocks, about {@link decodedPerSlice} transactions), breathing
 * between slices: a window of many large blocks does not hold the process while it is decoded.
 */
export const decode = (
  blocks: ReadonlyArray<BlockData>,
  contracts: ReadonlyArray<Contract>,
  options: Parameters<typeof fromBlocks>[2],
  pace: Pace.Pace
): Effect.Effect<Facts.Facts> =>
  Effect.gen(function* () {
    const transactions: Array<Facts.Transaction> = []
    let facts: Facts.Facts | undefined
    let from = 0
    while (from < blocks.length || facts === undefined) {
      let to = from
      let count = 0
      while (to < blocks.length && (to === from || count < decodedPerSlice))
        count += blocks[to++]!.block.transactions.length
      if (facts !== undefined) yield* Pace.breathe(pace)
      facts = fromBlocks(blocks.slice(from, to), contracts, options)
      if (from === 0 && to >= blocks.length) return facts
      for (const t of facts.transactions) transactions.push(t)
      from = to
    }
    return { ...facts, transactions }
  })

/** What judging rules over a window found, and the bindings it tried. */
export interface Judged {
  readonly found: ReadonlyArray<Found>
  readonly pending: ReadonlySet<string>
  /** The limit that stopped the judging; what was found before it is not to be acted on. */
  readonly exceeded?: "bindings" | "matches"
  readonly bindings: number
}

/** Evaluates each rule in turn within `limits` (all rules together), in slices, keeping what `wanted` says. */
const evaluateAll = Effect.fnUntraced(function* (
  rules: ReadonlyArray<Rule>,
  facts: Facts.Facts,
  wanted: (rule: Rule) => Evaluator.Wanted,
  limits: { readonly bindings: number; readonly matches: number },
  pace: Pace.Pace
): Effect.fn.Return<Judged> {
  const found: Array<Found> = []
  const pending = new Set<string>()
  let bindings = 0
  for (const rule of rules) {
    const evaluation = Evaluator.start(rule.expr, facts, {
      ...wanted(rule),
      bindings: limits.bindings - bindings,
      matches: limits.matches - found.length - pending.size
    })
    yield* Pace.slices(evaluation.run, pace)
    const outcome = evaluation.outcome()
    bindings += outcome.bindings
    if (outcome.exceeded !== undefined) return { found, pending, exceeded: outcome.exceeded, bindings }
    for (const m of outcome.matches) {
      if (m.pending) pending.add(keyOf(rule.index, m.evidence))
      else found.push({ rule: rule.index, evidence: m.evidence })
    }
  }
  return { found, pending, bindings }
})

/**
 * One window's verdicts, the step shared by scans and the live follower: the matches of `rules` over `facts`
 * that are new since the window's first fresh block `first` (or were left pending by the last window) and
 * certain now, and those still pending (a negation's range open past the window's head). Within `limits` (all
 * rules together; matches completing before `first` do not count, nor are they kept), past which the verdicts stop
 * and `exceeded` says which limit was reached. Evaluated in slices, yielding the thread as `pace` says.
 */
export const judge = (
  rules: ReadonlyArray<Rule>,
  facts: Facts.Facts,
  first: number,
  pendingBefore: ReadonlySet<string>,
  limits: { readonly bindings: number; readonly matches: number },
  pace: Pace.Pace
): Effect.Effect<Judged> =>
  evaluateAll(
    rules,
    facts,
    (rule) => ({
      fromBlock: first,
      ...(pendingBefore.size === 0 ? {} : { again: (key: string) => pendingBefore.has(`${rule.index}:${key}`) })
    }),
    limits,
    pace
  )

/**
 * The matches of `rules` still pending at `facts.head` (a forward negation's range open past it), as `judge` keys
 * them, within `limits` (each pending match counts). Rules without a forward negation have none, found at once.
 */
export const pendingAt = (
  rules: ReadonlyArray<Rule>,
  facts: Facts.Facts,
  limits: { readonly bindings: number; readonly matches: number },
  pace: Pace.Pace
): Effect.Effect<Judged> => evaluateAll(rules, facts, () => ({ pendingOnly: true }), limits, pace)

/** Runs `rules` over `blocks`, reporting each match once through `onMatch`. */
export const scan = (options: Options): Effect.Effect<Outcome, ChainDataError | OverBounds, ChainData> =>
  Effect.gen(function* () {
    const chain = yield* ChainData
    const bounds = options.bounds ?? defaultBounds
    const pace = yield* Pace.make
    const traces = options.rules.some((r) => r.needsTraces)
    const reads = Reads.union(options.rules.map((r) => Reads.of(r.expr)))
    const chunk = Math.max(1, options.chunk ?? 100)
    const blocks = [...new Set(options.blocks)].sort((a, b) => a - b)
    const missing: Array<{ number: number; reason: string; message: string }> = []
    /** The data of the blocks before the current chunk that a match or negation may still reach. */
    let carried: ReadonlyArray<BlockData & { readonly number: number }> = []
    /** Matches reported, and those left pending by the last window (its negation's range was still open). */
    const reported = new Set<string>()
    let pending: ReadonlySet<string> = new Set<string>()
    let evaluated = 0
    let transactions = 0
    for (let start = 0; start < blocks.length; start += chunk) {
      const numbers = blocks.slice(start, start + chunk)
      const results = yield* chain.blocks(options.chainId, numbers, { traces })
      const fresh: Array<BlockData & { readonly number: number }> = []
      for (const r of results) {
        if (r._tag === "Found") fresh.push({ ...r.data, number: r.number })
        else missing.push({ number: r.number, reason: r.error.reason, message: r.error.message })
      }
      evaluated += fresh.length
      const first = numbers[0]!
      const final = start + chunk >= blocks.length
      const window = [...carried, ...fresh]
      const facts = yield* decode(
        window,
        options.contracts,
        { blockRange: options.blockRange, reads, ...(final ? {} : { head: numbers.at(-1)! }) },
        pace
      )
      transactions += facts.transactions.length - carried.reduce((n, b) => n + b.block.transactions.length, 0)
      const judged = yield* judge(options.rules, facts, first, pending, limitsOver(bounds, fresh.length), pace)
      if (judged.exceeded !== undefined)
        return yield* new OverBounds({
          exceeded: judged.exceeded,
          blockNumber: first,
          message:
            judged.exceeded === "bindings"
              ? `the rules tried more than ${bounds.bindingsPerStep} bindings over blocks ${first} to ${numbers.at(-1)!}, one window: they match too widely; join their transactions on a field, or narrow the rules or their block range`
              : `the rules matched more than ${bounds.matchesPerBlock} times a block over blocks ${first} to ${numbers.at(-1)!}: narrow the rules`
        })
      for (const f of judged.found) {
        const key = keyOf(f.rule, f.evidence)
        if (reported.has(key)) continue
        reported.add(key)
        yield* options.onMatch(f)
      }
      pending = judged.pending
      const last = numbers.at(-1)!
      carried = window.filter((b) => b.number >= last - options.blockRange)
    }
    return { blocks: evaluated, missing, transactions }
  })
