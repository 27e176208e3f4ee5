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
import type * as Facts from "./Facts.ts"
import {
  type Env,
  evidence,
  frameOf,
  indexed,
  type IndexKey,
  type Match,
  type Plan,
  plan,
  position,
  type OccurrenceTest,
  type Test,
  txOf,
  unbound,
  type Var
} from "./Semantics.ts"

export { Evidence, Json, toJson } from "./Evidence.ts"
export type { Match } from "./Semantics.ts"

/** The matches found so far, by the positions of their transactions. */
const collector = (p: Plan, facts: Facts.Facts) => {
  const txVars = p.globals.filter((v) => v.kind === "tx")
  const matches = new Map<string, Match>()
  // Transactions introduced inside a negation after every bound one: undecided while the range is still open.
  const forward = [...p.locals.values()].flat().filter((v) => v.kind === "tx")
  const pending = (bound: Readonly<Record<string, number>>): boolean => {
    if (facts.head === undefined || forward.length === 0) return false
    const highest = Math.max(...txVars.filter((v) => bound[v.key] !== undefined).map((v) => v.tx))
    if (!forward.some((v) => v.tx > highest)) return false
    const last = Math.max(...Object.values(bound).map((at) => facts.transactions[at]!.blockNumber))
    return last + facts.blockRange > facts.head
  }
  return {
    anchor: txVars[0],
    /** Records the binding in `env` unless its transactions matched already; false when they had. */
    add: (env: Env): boolean => {
      let key = ""
      for (const v of txVars) key += `${env[v.slot]},`
      if (matches.has(key)) return false
      const transactions: Record<string, number> = {}
      for (const v of txVars) if (env[v.slot] !== unbound) transactions[v.key] = env[v.slot]!
      matches.set(key, { transactions, evidence: evidence(p, env, facts), pending: pending(transactions) })
      return true
    },
    /** The block of the last transaction `env` binds. */
    lastBlock: (env: Env): number => {
      let last = -1
      for (const v of txVars) {
        const at = env[v.slot]!
        if (at !== unbound) last = Math.max(last, facts.transactions[at]!.blockNumber)
      }
      return last
    },
    matches: (): ReadonlyArray<Match> =>
      [...matches.values()]
        .map((m) => [tupleKey(m), m] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, m]) => m)
  }
}

const tupleKey = (m: Match) =>
  Object.entries(m.transactions)
    .map(([k, v]) => `${k}=${String(v).padStart(8, "0")}`)
    .join(",")

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
}

/** What the search needs of a rule beyond its plan, made once per rule. */
interface Program {
  readonly plan: Plan
  /** Every transaction variable. */
  readonly txVars: ReadonlyArray<Var>
  readonly globals: ReadonlyArray<Level>
  /** The level of the last global transaction variable. */
  readonly lastTx: number
}

const programs = new WeakMap<Ast.Expr, Program>()

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
      needed:
        top === undefined || v.kind !== "tx"
          ? []
          : vars.flatMap((o, j) =>
              o.kind === "occ" && o.tx === v.tx && top.required[j]! && o.ref!.indexKey !== undefined
                ? [o.ref!.indexKey]
                : []
            )
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
  const made: Program = {
    plan: p,
    txVars,
    globals: levels(p.globals, { checks, required }),
    lastTx: p.globals.reduce((last, v, i) => (v.kind === "tx" ? i : last), -1)
  }
  programs.set(rule, made)
  return made
}

/**
 * Binds the variables of `levels` in turn (extending `env`), each over the domain the constraints leave it, and
 * calls `visit` on each complete binding until it returns true (then true). Each level's conjuncts are checked as
 * it is bound. With `top`, after a match the rest of the search below the last transaction variable is skipped
 * (it would only find the same transactions again).
 */
const search = (
  txVars: ReadonlyArray<Var>,
  levels: ReadonlyArray<Level>,
  env: Env,
  facts: Facts.Facts,
  visit: () => boolean,
  top?: { unwind: number }
): boolean => {
  const txs = facts.transactions
  /** Binds level `i` to `at` and searches on; true when the search is over. */
  const bind = (i: number, l: Level, at: number): boolean => {
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
  /** Tries every value of level `i` in turn: unbound first (unless a conjunct needs it bound), then its domain. */
  const tryAll = (i: number, l: Level): boolean => {
    if (!l.required) {
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
      for (const f of tx.frames ?? []) {
        if (f.index < 1) continue
        if (bind(i, l, f.index)) return true
        if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
      }
      return false
    }
    const frame = l.frameSlot === -1 ? undefined : env[l.frameSlot]!
    if (frame === unbound) return false
    const list: ReadonlyArray<Facts.EventOccurrence | Facts.CallOccurrence> = l.events ? tx.events : tx.calls
    const means = l.means
    for (let at = 0; at < list.length; at++) {
      if (!means(list[at]!, frame)) continue
      if (bind(i, l, at)) return true
      if (top !== undefined && top.unwind !== -1 && gaveUp(i)) return false
    }
    return false
  }
  return go(0)
}

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

/** What one evaluation may do: bindings tried (the search's work) and matches found. */
export interface Limits {
  readonly bindings: number
  readonly matches: number
  /** Only matches completing at this block or later count toward `matches` (those before were judged already). */
  readonly fromBlock?: number
}

/** The evaluation in progress: what it may still do (evaluations are synchronous, one at a time). */
const bounds = { bindings: Infinity, matches: Infinity }
const overBounds = new Error("over the evaluation's bounds")

/** The matches of a checked rule over `facts`. */
export const evaluate = (rule: Ast.Expr, facts: Facts.Facts): ReadonlyArray<Match> =>
  evaluateWithin(rule, facts, { bindings: Infinity, matches: Infinity }).matches

/**
 * The matches of a checked rule over `facts`, within `limits`: past them the search stops and says which limit it
 * reached (`exceeded`), with what it had found. The work of a search is the bindings it tries, so a bound on them
 * bounds its time whatever the rule and the blocks.
 */
export const evaluateWithin = (
  rule: Ast.Expr,
  facts: Facts.Facts,
  limits: Limits
): { readonly matches: ReadonlyArray<Match>; readonly exceeded?: "bindings" | "matches" } => {
  const r = program(rule)
  const found = collector(r.plan, facts)
  if (found.anchor === undefined) return { matches: [] }
  const env = new Int32Array(r.plan.vars.length).fill(unbound)
  const top = { unwind: -1 }
  bounds.bindings = limits.bindings
  bounds.matches = limits.matches
  const from = limits.fromBlock
  try {
    search(
      r.txVars,
      r.globals,
      env,
      facts,
      () => {
        if (found.add(env) && (from === undefined || found.lastBlock(env) >= from) && --bounds.matches < 0)
          throw overBounds
        top.unwind = r.lastTx
        return false
      },
      top
    )
    return { matches: found.matches() }
  } catch (e) {
    if (e !== overBounds) throw e
    return { matches: found.matches(), exceeded: bounds.matches < 0 ? "matches" : "bindings" }
  } finally {
    bounds.bindings = Infinity
    bounds.matches = Infinity
  }
}

// ---------------------------------------------------------------- the reference

/** The constraints between bound variables: order, window, scope. True when `env` may stand. */
const consistent = (p: Plan, env: Env, facts: Facts.Facts): boolean => {
  let low = Infinity
  let high = -Infinity
  const txPositions: Array<readonly [number, number]> = []
  for (const v of p.vars) {
    const at = env[v.slot]!
    if (at === unbound) continue
    if (v.kind === "tx") {
      const tx = facts.transactions[at]
      if (tx === undefined) return false
      txPositions.push([v.tx, at])
      low = Math.min(low, tx.blockNumber)
      high = Math.max(high, tx.blockNumber)
      continue
    }
    const tx = txOf(p, env, facts, v.tx)
    if (tx === undefined) return false
    if (v.kind === "itx") {
      if (!(tx.frames ?? []).some((f) => f.index === at && f.index >= 1)) return false
      continue
    }
    const frame = frameOf(p, env, v)
    if (v.itx !== undefined && frame === undefined) return false
    const o = (v.ref!.kind === "E" ? tx.events : tx.calls)[at]
    if (o === undefined || !v.ref!.means(o, frame)) return false
  }
  if (high - low > facts.blockRange) return false
  txPositions.sort((a, b) => a[0] - b[0])
  for (let i = 1; i < txPositions.length; i++) if (txPositions[i]![1] <= txPositions[i - 1]![1]) return false
  // Frames of one transaction, and #k occurrences of one reference, in increasing order.
  const increasing = (
    group: (v: Var) => string | undefined,
    rank: (v: Var) => number,
    pos: (v: Var, at: number) => number
  ) => {
    const groups = new Map<string, Array<readonly [number, number]>>()
    for (const v of p.vars) {
      const g = group(v)
      const at = env[v.slot]!
      if (g === undefined || at === unbound) continue
      groups.set(g, [...(groups.get(g) ?? []), [rank(v), pos(v, at)]])
    }
    for (const list of groups.values()) {
      list.sort((a, b) => a[0] - b[0])
      for (let i = 1; i < list.length; i++) if (list[i]![1] <= list[i - 1]![1]) return false
    }
    return true
  }
  return (
    increasing(
      (v) => (v.kind === "itx" ? `tx${v.tx}` : undefined),
      (v) => v.itx!,
      (_, at) => at
    ) &&
    increasing(
      (v) => (v.kind === "occ" ? v.base : undefined),
      (v) => v.k!,
      (v, at) => {
        const tx = txOf(p, env, facts, v.tx)!
        return position((v.ref!.kind === "E" ? tx.events : tx.calls)[at]!)
      }
    )
  )
}

/**
 * The same matches by brute force: every variable over every index (and unbound), every complete assignment
 * tested against the constraints and the whole rule. Exponential; it exists to keep `evaluate` honest.
 */
export const evaluateReference = (rule: Ast.Expr, facts: Facts.Facts): ReadonlyArray<Match> => {
  const p = plan(rule)
  const found = collector(p, facts)
  if (found.anchor === undefined) return []
  const frames = Math.max(0, ...facts.transactions.map((t) => Math.max(0, ...(t.frames ?? []).map((f) => f.index + 1))))
  const occurrences = Math.max(0, ...facts.transactions.map((t) => Math.max(t.events.length, t.calls.length)))
  const size = (v: Var) => (v.kind === "tx" ? facts.transactions.length : v.kind === "itx" ? frames : occurrences)
  const env = new Int32Array(p.vars.length).fill(unbound)
  const every = (vars: ReadonlyArray<Var>, visit: () => boolean): boolean => {
    const go = (i: number): boolean => {
      if (i === vars.length) return visit()
      const v = vars[i]!
      for (let at = unbound; at < size(v); at++) {
        env[v.slot] = at
        if (go(i + 1)) {
          env[v.slot] = unbound
          return true
        }
      }
      env[v.slot] = unbound
      return false
    }
    return go(0)
  }
  const truth = (e: Ast.Expr): boolean => {
    switch (e._tag) {
      case "Or":
        return truth(e.left) || truth(e.right)
      case "And":
        return truth(e.left) && truth(e.right)
      case "Constant":
        return e.value
      case "Not":
        return !every(p.locals.get(e) ?? [], () => consistent(p, env, facts) && truth(e.expr))
      default:
        return p.test(e)(env, facts)
    }
  }
  every(p.globals, () => {
    if (env[found.anchor!.slot] !== unbound && consistent(p, env, facts) && truth(rule)) found.add(env)
    return false
  })
  return found.matches()
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
