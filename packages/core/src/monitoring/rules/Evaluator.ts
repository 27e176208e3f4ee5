/**
 * The watch-rule evaluator: which transactions (and frames and occurrences) make a checked rule true.
 *
 * Semantics (research §5.4; the variables, slots and atoms are in `Semantics.ts`). Transactions bind in
 * increasing chain order with N, within `blockRange` blocks; frames of one transaction in increasing execution
 * order with M; `#k` occurrences in increasing order with k. A negation reads "there is no binding of its own
 * variables that makes this true" (correlated with everything bound outside). The rule matches for every binding
 * of its transactions outside negations, the lowest of them always bound, under which some binding of the rest
 * makes it true.
 *
 * Two searches share these definitions: `evaluate` (variables in slots, domains built from the constraints,
 * conjuncts checked as soon as their variables are bound) and `evaluateReference` (every assignment of every
 * variable enumerated and tested whole), which a differential test holds the first to.
 */
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"
import { collector, type Wanted } from "./Collect.ts"
import type * as Facts from "./Facts.ts"
import {
  type Env,
  framesWith,
  indexed,
  type IndexKey,
  type Match,
  type Plan,
  plan,
  position,
  type OccurrenceTest,
  type Test,
  unbound,
  type Var
} from "./Semantics.ts"

export { keyOf, type Wanted } from "./Collect.ts"
export { encode as encodeEvidence, Evidence, Json, toJson } from "./Evidence.ts"
export type { Match } from "./Semantics.ts"
export { evaluateReference } from "./Reference.ts"

const hasNegation = (e: Ast.Expr): boolean =>
  e._tag === "Not" || ((e._tag === "And" || e._tag === "Or") && (hasNegation(e.left) || hasNegation(e.right)))

// ---------------------------------------------------------------- the search

/** One variable of a search, with what binding it needs at hand. */
interface Level {
  readonly v: Var
  readonly slot: number
  readonly kind: Var["kind"]
  readonly tx: number
  /** The slot of its transaction, and of the frame its occurrence is in (`itxM`, else -1). */
  readonly txSlot: number
  readonly frameSlot: number
  /** For an occurrence: events (not calls), and which of them it can mean. */
  readonly events: boolean
  readonly means: OccurrenceTest["means"]
  /** The variables it is kept in order with (frames of its transaction, `#k` occurrences of its reference). */
  readonly peers: ReadonlyArray<{ readonly slot: number; readonly earlier: boolean }>
  /** Top-level conjuncts decided once it is bound. */
  readonly checks: ReadonlyArray<Test>
  /** Whether leaving it unbound is pointless (the lowest transaction, or some top-level conjunct is false without it). */
  readonly required: boolean
  /**
   * For a transaction: the index keys (`indexed`) of occurrences it must have (a top-level conjunct is false
   * without them), so only transactions under every key are tried.
   */
  readonly needed: ReadonlyArray<IndexKey>
  /**
   * For an internal frame (`itxM`): the index keys of occurrences the rule needs in that very frame (a top-level
   * conjunct is false without them), so only the frames that emitted or made them are tried.
   */
  readonly neededInFrame: ReadonlyArray<IndexKey>
}

/** What the search needs of a rule beyond its plan, made once per rule. */
interface Program {
  readonly plan: Plan
  /** Every transaction variable. */
  readonly txVars: ReadonlyArray<Var>
  readonly globals: ReadonlyArray<Level>
  /** The level of the last global transaction variable. */
  readonly lastTx: number
  /** {@link footprint}'s answer. */
  readonly footprint: string
}

const programs = new WeakMap<Ast.Expr, Program>()

/**
 * The index keys of the occurrences among `vars` that `within` selects and a top-level conjunct needs bound (none
 * inside a negation, where nothing is required).
 */
const requiredKeys = (
  vars: ReadonlyArray<Var>,
  top: { readonly required: ReadonlyArray<boolean> } | undefined,
  within: (o: Var) => boolean
): ReadonlyArray<IndexKey> =>
  top === undefined
    ? []
    : vars.flatMap((o, j) =>
        o.kind === "occ" && within(o) && top.required[j]! && o.ref!.indexKey !== undefined ? [o.ref!.indexKey] : []
      )

/** The index keys each global transaction must have, as {@link footprint} gives them. */
const footprintOf = (globals: ReadonlyArray<Level>): string => {
  const each: Array<string> = []
  for (const l of globals) {
    if (l.kind !== "tx") continue
    if (l.needed.length === 0) return ""
    each.push(
      l.needed
        .map((k) => `${k.kind}\u0000${k.contract}\u0000${k.name}`)
        .sort()
        .join("\u0001")
    )
  }
  return each.join("\u0002")
}

const program = (rule: Ast.Expr): Program => {
  const known = programs.get(rule)
  if (known !== undefined) return known
  const p = plan(rule)
  const txVars = p.vars.filter((v) => v.kind === "tx")
  const levels = (
    vars: ReadonlyArray<Var>,
    top?: { checks: ReadonlyArray<ReadonlyArray<Test>>; required: ReadonlyArray<boolean> }
  ): ReadonlyArray<Level> =>
    vars.map((v, i) => ({
      v,
      slot: v.slot,
      kind: v.kind,
      tx: v.tx,
      txSlot: txVars.find((t) => t.tx === v.tx)!.slot,
      frameSlot:
        v.kind === "occ" && v.itx !== undefined
          ? p.vars.find((f) => f.kind === "itx" && f.tx === v.tx && f.itx === v.itx)!.slot
          : -1,
      events: v.ref?.kind === "E",
      means: v.ref?.means ?? (() => false),
      peers: (v.kind === "itx"
        ? p.vars.filter((o) => o !== v && o.kind === "itx" && o.tx === v.tx).map((o) => [o, o.itx! < v.itx!] as const)
        : v.kind === "occ" && v.base !== undefined
          ? p.vars.filter((o) => o !== v && o.base === v.base).map((o) => [o, o.k! < v.k!] as const)
          : []
      ).map(([o, earlier]) => ({ slot: o.slot, earlier })),
      checks: top?.checks[i] ?? [],
      required: top?.required[i] ?? false,
      needed: v.kind === "tx" ? requiredKeys(vars, top, (o) => o.tx === v.tx) : [],
      neededInFrame: v.kind === "itx" ? requiredKeys(vars, top, (o) => o.tx === v.tx && o.itx === v.itx) : []
    }))
  const compile = (e: Ast.Expr): Test => {
    switch (e._tag) {
      case "Or": {
        const [l, r] = [compile(e.left), compile(e.right)]
        return (env, facts) => l(env, facts) || r(env, facts)
      }
      case "And": {
        const [l, r] = [compile(e.left), compile(e.right)]
        return (env, facts) => l(env, facts) && r(env, facts)
      }
      case "Constant": {
        const value = e.value
        return () => value
      }
      case "Not": {
        const locals = levels(p.locals.get(e) ?? [])
        const body = compile(e.expr)
        return (env, facts) => !search(txVars, locals, env, facts, () => body(env, facts))
      }
      default:
        return p.test(e)
    }
  }
  const level = new Map(p.globals.map((v, i) => [v.slot, i]))
  const checks: Array<Array<Test>> = p.globals.map(() => [])
  const required = p.globals.map((_, i) => i === 0)
  const split = (e: Ast.Expr) => {
    if (e._tag === "And") {
      split(e.left)
      split(e.right)
      return
    }
    // A negation's own variables are held in order and range by the bound ones of their kind, so a conjunct
    // holding one is decided only once every variable is bound.
    const needs = hasNegation(e) ? p.globals.map((g) => g.slot) : [...p.reads(e)]
    if (e._tag !== "Or" && e._tag !== "Not" && e._tag !== "Constant")
      for (const slot of p.requires(e)) required[level.get(slot)!] = true
    checks[Math.max(0, ...needs.map((slot) => level.get(slot) ?? 0))]?.push(compile(e))
  }
  split(rule)
  const globals = levels(p.globals, { checks, required })
  const made: Program = {
    plan: p,
    txVars,
    globals,
    lastTx: p.globals.reduce((last, v, i) => (v.kind === "tx" ? i : last), -1),
    footprint: footprintOf(globals)
  }
  programs.set(rule, made)
  return made
}

/**
 * The top-level search's state beyond its bindings: where it unwinds to after a match, and, for an evaluation run in
 * slices, the bindings left in this slice and the path to take again when it resumes.
 */
interface Top {
  unwind: number
  /** Top-level bindings this slice may still try; past them the search stops at a {@link pause}. */
  slice: number
  /** The values of levels 0..k to bind again, in turn, before the search goes on (the path of the last pause). */
  resume: Array<number> | undefined
  /** The lowest position the last transaction variable may take (earlier ones complete no match that is kept). */
  lowestLast: number
}

/** Thrown when a slice is used up: the search resumes at `top.resume` in the next slice. */
const pause = new Error("the evaluation's slice is used up")

/**
 * Binds the variables of `levels` in turn (extending `env`), each over the domain the constraints leave it, and
 * calls `visit` on each complete binding until it returns true (then true). Each level's conjuncts are checked as
 * it is bound. With `top`, after a match the rest of the search below the last transaction variable is skipped
 * (it would only find the same transactions again), and the search stops at a slice's end and resumes where it
 * stopped: the values of every variable in one slice are tried in the same order as in one go.
 */
const search = (
  txVars: ReadonlyArray<Var>,
  levels: ReadonlyArray<Level>,
  env: Env,
  facts: Facts.Facts,
  visit: () => boolean,
  top?: Top,
  lastTx = -1
): boolean => {
  const txs = facts.transactions
  /** Binds level `i` to `at` and searches on; true when the search is over. */
  const bind = (i: number, l: Level, at: number): boolean => {
    // Resuming: a binding on the path the last slice took, tried and checked then.
    if (top?.resume !== undefined) {
      env[l.slot] = at
      return go(i + 1)
    }
    if (top !== undefined && --top.slice < 0) {
      const path: Array<number> = []
      for (let j = 0; j < i; j++) path.push(env[levels[j]!.slot]!)
      path.push(at)
      top.resume = path
      throw pause
    }
    if (--bounds.bindings < 0) throw overBounds
    env[l.slot] = at
    if (at !== unbound && l.peers.length > 0 && !admissible(env, facts, l, at)) return false
    const checks = l.checks
    for (let k = 0; k < checks.length; k++) if (!checks[k]!(env, facts)) return false
    return go(i + 1)
  }
  /** After a match, the levels below the last transaction give up; true when level `i` gives up. */
  const gaveUp = (i: number) => {
    if (top === undefined || top.unwind === -1) return false
    if (top.unwind < i) return true
    top.unwind = -1
    return false
  }
  const go = (i: number): boolean => {
    if (i === levels.length) return visit()
    const l = levels[i]!
    const stop = tryAll(i, l)
    env[l.slot] = unbound
    return stop
  }
  /**
   * Tries every value of level `i` in turn: unbound first (unless a conjunct needs it bound), then its domain. When
   * resuming, the values before the one the last slice stopped at were tried already.
   */
  const tryAll = (i: number, l: Level): boolean => {
    let from: number | undefined
    if (top?.resume !== undefined) {
      from = top.resume[i]!
      if (i === top.resume.length - 1) top.resume = undefined
    }
    if (!l.required && (from === undefined || from === unbound)) {
      from = undefined
      if (bind(i, l, unbound)) return true
      if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
    }
    if (l.kind === "tx") {
      // After the bound transactions of lower N, before those of higher N, within the block range of them all.
      let after = -1
      let before = txs.length
      let low = Infinity
      let high = -Infinity
      for (const t of txVars) {
        const at = env[t.slot]!
        if (at === unbound || t.slot === l.slot) continue
        if (t.tx < l.tx) after = Math.max(after, at)
        else before = Math.min(before, at)
        const block = txs[at]!.blockNumber
        low = Math.min(low, block)
        high = Math.max(high, block)
      }
      // The last transaction of a kept match is at the lowest position the evaluation keeps, or later.
      if (i === lastTx && top !== undefined && l.required) after = Math.max(after, top.lowestLast - 1)
      // Resuming: from the position the last slice stopped at.
      if (from !== undefined) after = Math.max(after, from - 1)
      // With occurrences the rule needs of this transaction, only the transactions that have them (the fewest
      // of them, from the index); otherwise every position in the range.
      let candidates: ReadonlyArray<number> | undefined
      for (const key of l.needed) {
        const list = indexed(facts, key)
        if (candidates === undefined || list.length < candidates.length) candidates = list
      }
      let k = after + 1
      if (candidates !== undefined) {
        let hi = candidates.length
        k = 0
        while (k < hi) {
          const mid = (k + hi) >>> 1
          if (candidates[mid]! <= after) k = mid + 1
          else hi = mid
        }
      }
      for (; ; k++) {
        const at = candidates === undefined ? k : candidates[k]
        if (at === undefined || at >= before) break
        if (low !== Infinity) {
          const block = txs[at]!.blockNumber
          if (block < high - facts.blockRange) continue
          if (block > low + facts.blockRange) break
        }
        if (bind(i, l, at)) return true
        if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
      }
      return false
    }
    const bound = env[l.txSlot]!
    if (bound === unbound) return false
    const tx = txs[bound]!
    if (l.kind === "itx") {
      const frames = tx.frames ?? []
      // With occurrences the rule needs in this frame, only the frames that have them (the fewest of them, in
      // execution order): a frame without one completes no match. Otherwise, or when the transaction has only a
      // few frames (looking them up would cost more than trying them), every internal frame.
      const needs = frames.length > fewFrames ? l.neededInFrame : noKeys
      let candidates: ReadonlyArray<number> | undefined
      for (let n = 0; n < needs.length; n++) {
        const list = framesWith(tx, needs[n]!)
        if (candidates === undefined || list.length < candidates.length) candidates = list
      }
      const count = candidates === undefined ? frames.length : candidates.length
      for (let k = 0; k < count; k++) {
        const at = candidates === undefined ? frames[k]!.index : candidates[k]!
        // Frames are numbered by their place in execution order: an occurrence's frame is one of the transaction's.
        if (at < 1 || (candidates !== undefined && frames[at]?.index !== at)) continue
        if (from !== undefined) {
          if (at !== from) continue
          from = undefined
        } else if (candidates !== undefined && needs.length > 1) {
          let lacks = false
          for (let n = 0; n < needs.length && !lacks; n++) lacks = !framesWith(tx, needs[n]!).includes(at)
          if (lacks) continue
        }
        if (bind(i, l, at)) return true
        if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
      }
      return false
    }
    const frame = l.frameSlot === -1 ? undefined : env[l.frameSlot]!
    if (frame === unbound) return false
    const list: ReadonlyArray<Facts.EventOccurrence | Facts.CallOccurrence> = l.events ? tx.events : tx.calls
    const means = l.means
    for (let at = from ?? 0; at < list.length; at++) {
      if (!means(list[at]!, frame)) continue
      if (bind(i, l, at)) return true
      if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
    }
    return false
  }
  return go(0)
}

/** Up to how many frames a transaction's internal frames are all tried, rather than looked up by occurrence. */
const fewFrames = 8
const noKeys: ReadonlyArray<IndexKey> = []

/** Whether binding frame or `#k` variable `l` to `at` keeps it in order with the bound variables of its kind. */
const admissible = (env: Env, facts: Facts.Facts, l: Level, at: number): boolean => {
  const tx = facts.transactions[env[l.txSlot]!]!
  const list = l.events ? tx.events : tx.calls
  const pos = (i: number) => (l.kind === "itx" ? i : position(list[i]!))
  const mine = pos(at)
  for (const peer of l.peers) {
    const theirs = env[peer.slot]!
    if (theirs === unbound) continue
    if (peer.earlier ? pos(theirs) >= mine : pos(theirs) <= mine) return false
  }
  return true
}

/** What one evaluation may do (bindings tried: the search's work; matches counted) and which matches it keeps. */
export interface Limits extends Wanted {
  readonly bindings: number
  readonly matches: number
}

/** What an evaluation found: the matches it keeps, which limit stopped it if one did, and the bindings it tried. */
export interface Outcome {
  readonly matches: ReadonlyArray<Match>
  readonly exceeded?: "bindings" | "matches"
  readonly bindings: number
}

/**
 * An evaluation under way, run in slices so that a long one need not hold the process: each `run` tries up to
 * `slice` more bindings of the rule's transactions and frames and stops, to go on at the next `run` exactly where
 * it stopped. The outcome is the same however it is sliced.
 */
export interface Evaluation {
  /** Goes on for up to `slice` more top-level bindings; true once the evaluation is over. */
  readonly run: (slice: number) => boolean
  /** The outcome so far; final once `run` said the evaluation is over. */
  readonly outcome: () => Outcome
}

/**
 * The bounds of the evaluation running now (evaluations run synchronously, a slice at a time; each slice sets them
 * from its evaluation's and gives back what is left).
 */
const bounds = { bindings: Infinity, matches: Infinity }
const overBounds = new Error("over the evaluation's bounds")

/**
 * Starts evaluating a checked rule over `facts` within `limits`: past them the search stops and says which limit
 * it reached (`exceeded`), with what it had kept. The work of a search is the bindings it tries, so a bound on them
 * bounds its time whatever the rule and the blocks; matches not kept (judged in an earlier step) are passed over
 * without evidence, so memory is bounded by the matches counted.
 */
export const start = (rule: Ast.Expr, facts: Facts.Facts, limits: Limits): Evaluation => {
  const r = program(rule)
  const found = collector(r.plan, facts, limits)
  // A finite count, so what was tried can be told whatever the limit.
  const allowed = Math.min(limits.bindings, Number.MAX_SAFE_INTEGER)
  let left = { bindings: allowed, matches: limits.matches }
  let exceeded: "bindings" | "matches" | undefined
  let over = found.anchor === undefined || found.none
  const env = new Int32Array(r.plan.vars.length).fill(unbound)
  const top: Top = { unwind: -1, slice: 0, resume: undefined, lowestLast: 0 }
  if (!over && found.lowestLast !== undefined) {
    // Transactions are in chain order: the first at the lowest block a kept match may complete in.
    const txs = facts.transactions
    let lo = 0
    let hi = txs.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (txs[mid]!.blockNumber < found.lowestLast) lo = mid + 1
      else hi = mid
    }
    top.lowestLast = lo
  }
  const visit = () => {
    if (found.add(env) === "counted" && --bounds.matches < 0) throw overBounds
    top.unwind = r.lastTx
    return false
  }
  return {
    run: (slice) => {
      if (over) return true
      bounds.bindings = left.bindings
      bounds.matches = left.matches
      top.slice = slice
      top.unwind = -1
      try {
        search(r.txVars, r.globals, env, facts, visit, top, r.lastTx)
        over = true
      } catch (e) {
        if (e === overBounds) {
          over = true
          exceeded = bounds.matches < 0 ? "matches" : "bindings"
        } else if (e !== pause) throw e
      } finally {
        left = { bindings: bounds.bindings, matches: bounds.matches }
        bounds.bindings = Infinity
        bounds.matches = Infinity
        env.fill(unbound)
      }
      return over
    },
    outcome: () => ({
      matches: found.matches(),
      ...(exceeded === undefined ? {} : { exceeded }),
      bindings: Math.min(allowed, allowed - left.bindings)
    })
  }
}

/**
 * Whether a match of `rule` can be left pending: a negation binds a transaction of its own, which may come after
 * every one the match binds.
 */
export const looksForward = (rule: Ast.Expr): boolean =>
  [...program(rule).plan.locals.values()].some((vars) => vars.some((v) => v.kind === "tx"))

/**
 * Which transactions a rule's search visits, as text: for each of its transactions in turn (`\u0002` between them),
 * the index keys (E|F, contract and name, `\u0000` between them; `\u0001` between keys) of the occurrences it must
 * have; "" when one of them may be any transaction. Rules with the same footprint visit the same transactions of a
 * window; evaluated one after another, the second finds them in the processor's caches.
 */
export const footprint = (rule: Ast.Expr): string => program(rule).footprint

/** The matches of a checked rule over `facts`. */
export const evaluate = (rule: Ast.Expr, facts: Facts.Facts): ReadonlyArray<Match> =>
  evaluateWithin(rule, facts, { bindings: Infinity, matches: Infinity }).matches

/** {@link start}'s evaluation run in one go. */
export const evaluateWithin = (rule: Ast.Expr, facts: Facts.Facts, limits: Limits): Outcome => {
  const evaluation = start(rule, facts, limits)
  evaluation.run(Infinity)
  return evaluation.outcome()
}

/**
 * Why `rule` cannot be evaluated over `facts`, or undefined when it can: a rule that reads internal frames, call
 * outputs or reentrancy needs traces, and a transaction without them would otherwise answer "no match".
 */
export const notEvaluable = (rule: Ast.Expr, facts: Facts.Facts): string | undefined => {
  const needs = needsTraces(rule)
  if (needs === undefined) return undefined
  const missing = facts.transactions.find((t) => t.frames === undefined)
  return missing === undefined
    ? undefined
    : `the rule uses ${needs}, which needs call traces (debug_traceBlockByNumber), and transaction ${missing.hash} of block ${missing.blockNumber} has none`
}

const needsTraces = (e: Ast.Expr): string | undefined => {
  const frame = (f: Ast.FrameRef) =>
    f.itx === undefined ? undefined : `internal frames (tx${f.tx}.${typeof f.itx === "number" ? `itx${f.itx}` : f.itx})`
  const value = (v: Ast.Operand): string | undefined =>
    v._tag === "Field"
      ? v.returned
        ? "a call's return value"
        : frame(v.ref.frame)
      : v._tag === "Meta"
        ? frame(v.ref.frame)
        : v._tag === "FrameField"
          ? frame(v.frame)
          : undefined
  switch (e._tag) {
    case "Or":
    case "And":
      return needsTraces(e.left) ?? needsTraces(e.right)
    case "Not":
      return needsTraces(e.expr)
    case "Constant":
      return undefined
    case "Reentrant":
      return "reentrancy"
    case "Emitted":
    case "Invoked":
      return frame(e.ref.frame)
    case "Count":
      return frame(e.ref.frame) ?? value(e.right)
    case "Reverted":
      return isOccurrence(e.target) ? frame(e.target.frame) : frame(e.target)
    case "Created":
    case "NativeTransfer":
      return frame(e.frame)
    case "InGroup":
      return value(e.value)
    case "Compare":
      return value(e.left) ?? value(e.right)
    case "Sum":
      return value(e.value) ?? value(e.right)
  }
}
