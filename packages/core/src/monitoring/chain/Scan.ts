/**
 * Rules over a run of blocks read through ChainData, in windows: the engine of historical analysis and backtests.
 *
 * Blocks are read in chunks; each chunk is evaluated together with the `blockRange` blocks before it, so every
 * match (its transactions at most `blockRange` blocks apart) lies whole in some window, and a negation sees every
 * transaction it could bind. A match is reported once: in the first window where its last transaction is new and
 * no negation's range is still open past the window (it is pending until the next window, or the end, closes it).
 */
import { Effect } from "effect"
import type * as Ast from "../rules/Ast.ts"
import * as Evaluator from "../rules/Evaluator.ts"
import type * as Facts from "../rules/Facts.ts"
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
  /** Called with each match as soon as it is certain, in block order per rule. */
  readonly onMatch: (found: Found) => Effect.Effect<void>
}

/** The block of a match's last transaction: where the match completed. */
export const lastBlock = (e: Evaluator.Evidence): number =>
  Math.max(...Object.values(e.transactions).map((t) => t.blockNumber))

/** A match's identity within one rule: the rule and its bound transactions. */
export const keyOf = (rule: number, e: Evaluator.Evidence): string =>
  `${rule}:${Object.entries(e.transactions)
    .map(([k, t]) => `${k}=${t.hash}`)
    .join(",")}`

/**
 * One window's verdicts, the step shared by scans and the live follower: the matches of `rules` over `facts`
 * that are new since the window's first fresh block `first` (or were left pending by the last window) and
 * certain now, and those still pending (a negation's range open past the window's head). Within `limits` (all
 * rules together; matches completing before `first` do not count), past which the verdicts stop and `exceeded`
 * says which limit was reached.
 */
export const judge = (
  rules: ReadonlyArray<Rule>,
  facts: Facts.Facts,
  first: number,
  pendingBefore: ReadonlySet<string>,
  limits: Evaluator.Limits = { bindings: Infinity, matches: Infinity }
): {
  readonly found: ReadonlyArray<Found>
  readonly pending: ReadonlySet<string>
  readonly exceeded?: "bindings" | "matches"
} => {
  const found: Array<Found> = []
  const pending = new Set<string>()
  for (const rule of rules) {
    const evaluated = Evaluator.evaluateWithin(rule.expr, facts, {
      bindings: limits.bindings,
      matches: limits.matches - found.length - pending.size,
      fromBlock: first
    })
    if (evaluated.exceeded !== undefined) return { found, pending, exceeded: evaluated.exceeded }
    for (const m of evaluated.matches) {
      const key = keyOf(rule.index, m.evidence)
      // Judged whole in an earlier window, unless that window left it pending.
      if (lastBlock(m.evidence) < first && !pendingBefore.has(key)) continue
      if (m.pending) pending.add(key)
      else found.push({ rule: rule.index, evidence: m.evidence })
    }
  }
  return { found, pending }
}

/** Runs `rules` over `blocks`, reporting each match once through `onMatch`. */
export const scan = (options: Options): Effect.Effect<Outcome, ChainDataError, ChainData> =>
  Effect.gen(function* () {
    const chain = yield* ChainData
    const traces = options.rules.some((r) => r.needsTraces)
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
      const facts = fromBlocks(window, options.contracts, {
        blockRange: options.blockRange,
        ...(final ? {} : { head: numbers.at(-1)! })
      })
      transactions += facts.transactions.length - carried.reduce((n, b) => n + b.block.transactions.length, 0)
      const judged = judge(options.rules, facts, first, pending)
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
