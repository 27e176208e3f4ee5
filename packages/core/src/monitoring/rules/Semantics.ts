/**
 * What both rule searches share (research §5.4): a rule's variables and where each belongs, the slots they are
 * bound in, the atoms compiled to functions of those slots, and the evidence of a match.
 *
 * A rule's variables are its transactions `txN`, numbered frames `txN.itxM` and occurrences (references that share
 * frame, contract, E|F, name and `#k` denote one event or call). Each has a slot in an `Env`: the position it is
 * bound to (a transaction's in `facts.transactions`, a frame's index, an occurrence's in its transaction's events
 * or calls) or `unbound`. An atom that needs an unbound variable is false. A variable that occurs only inside a
 * negation belongs to the innermost negation holding all its uses. References through `itx*` or `any` are fresh:
 * the atom holds if some frame or occurrence makes it hold.
 */
import {
  anyOccurrence,
  type Env,
  isEvent,
  isFresh,
  type OccurrenceTest,
  occurrenceTest,
  type Test,
  unbound
} from "./Access.ts"
import type * as Ast from "./Ast.ts"
import { atom } from "./Atoms.ts"
import { isOccurrence } from "./Ast.ts"
import { type Evidence, type Json, toJson } from "./Evidence.ts"
import type * as Facts from "./Facts.ts"
import { occurrence as printOccurrence, print as printRule } from "./Printer.ts"

export {
  type Env,
  framesWith,
  type IndexKey,
  indexed,
  type OccurrenceTest,
  position,
  type Test,
  unbound
} from "./Access.ts"

/** A match: the position (in `facts.transactions`) bound to each transaction variable outside negations. */
export interface Match {
  readonly transactions: Readonly<Record<string, number>>
  /** What made the rule true: one satisfying binding of everything outside negations, and the terms that held. */
  readonly evidence: Evidence
  /**
   * A negation that looks forward (it holds a `txN` after every bound one) cannot be decided until the block
   * range past the last bound transaction has been seen (`facts.head`): until then the match is pending.
   */
  readonly pending: boolean
}

// ---------------------------------------------------------------- variables

/** A variable of a rule. */
export interface Var {
  readonly key: string
  readonly slot: number
  readonly kind: "tx" | "itx" | "occ"
  readonly tx: number
  readonly itx?: number
  readonly ref?: OccurrenceTest
  /** For `#k` occurrences: the key without `#k`, and k. */
  readonly base?: string
  readonly k?: number
}

/** A rule ready to evaluate: its variables, which negation each belongs to, and its terms as functions. */
export interface Plan {
  readonly vars: ReadonlyArray<Var>
  /** The variables outside every negation, in binding order. */
  readonly globals: ReadonlyArray<Var>
  /** Each negation's own variables, in binding order. */
  readonly locals: ReadonlyMap<Ast.Expr, ReadonlyArray<Var>>
  /** The atoms of the rule (not connectives) with their tests, for the evidence. */
  readonly atoms: ReadonlyArray<{ readonly expr: Ast.Expr; readonly test: Test; readonly printed: string }>
  readonly test: (e: Ast.Expr) => Test
  /** The slots each expression reads (what must be bound before it can be decided), by expression. */
  readonly reads: (e: Ast.Expr) => ReadonlySet<number>
  /** The slots an atom is false without: its transaction, numbered frame and bound occurrence, where it has them. */
  readonly requires: (e: Ast.Expr) => ReadonlySet<number>
}

/**
 * The order variables are bound in: by transaction, and within one its transaction variable, then its frames,
 * then its occurrences (each depends on what comes before it), so a transaction without what the rule needs of
 * it is given up before later transactions are tried.
 */
const kindRank = { tx: 0, itx: 1, occ: 2 } as const
const order = (vars: Iterable<Var>): ReadonlyArray<Var> =>
  [...vars].sort(
    (a, b) =>
      a.tx - b.tx ||
      kindRank[a.kind] - kindRank[b.kind] ||
      (a.itx ?? 0) - (b.itx ?? 0) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  )

/** Plans, kept per rule tree (a checked rule is evaluated again and again). */
const plans = new WeakMap<Ast.Expr, Plan>()

/** The plan of a rule, made once per rule tree. */
export const plan = (rule: Ast.Expr): Plan => {
  const known = plans.get(rule)
  if (known !== undefined) return known
  const made = makePlan(rule)
  plans.set(rule, made)
  return made
}

/** The variables an expression reads, each with the negations around the read. */
const variables = (rule: Ast.Expr, visit: (v: Omit<Var, "slot">, stack: ReadonlyArray<Ast.Expr>) => void) => {
  const frame = (f: Ast.FrameRef, stack: ReadonlyArray<Ast.Expr>) => {
    visit({ key: `tx${f.tx}`, kind: "tx", tx: f.tx }, stack)
    if (typeof f.itx === "number") visit({ key: `tx${f.tx}.itx${f.itx}`, kind: "itx", tx: f.tx, itx: f.itx }, stack)
  }
  const ref = (r: Ast.OccurrenceRef, stack: ReadonlyArray<Ast.Expr>) => {
    frame(r.frame, stack)
    if (isFresh(r.frame)) return
    visit(
      {
        key: printOccurrence(r),
        kind: "occ",
        tx: r.frame.tx,
        ...(typeof r.frame.itx === "number" ? { itx: r.frame.itx } : {}),
        ref: occurrenceTest(r),
        ...(r.occurrence === undefined ? {} : { base: printOccurrence(anyOccurrence(r)), k: r.occurrence })
      },
      stack
    )
  }
  const value = (v: Ast.Operand, stack: ReadonlyArray<Ast.Expr>) => {
    if (v._tag === "Field" || v._tag === "Meta") ref(v.ref, stack)
    else if (v._tag === "FrameField") frame(v.frame, stack)
  }
  const walk = (e: Ast.Expr, stack: ReadonlyArray<Ast.Expr>): void => {
    switch (e._tag) {
      case "Or":
      case "And":
        walk(e.left, stack)
        walk(e.right, stack)
        return
      case "Not":
        walk(e.expr, [...stack, e])
        return
      case "Constant":
        return
      case "Emitted":
      case "Invoked":
      case "Reentrant":
      case "Count":
        ref(e.ref, stack)
        if (e._tag === "Count") value(e.right, stack)
        return
      case "Reverted":
        if (isOccurrence(e.target)) ref(e.target, stack)
        else frame(e.target, stack)
        return
      case "Created":
      case "NativeTransfer":
        frame(e.frame, stack)
        return
      case "InGroup":
        value(e.value, stack)
        return
      case "Compare":
        value(e.left, stack)
        value(e.right, stack)
        return
      case "Sum":
        value(e.value, stack)
        value(e.right, stack)
    }
  }
  walk(rule, [])
}

const makePlan = (rule: Ast.Expr): Plan => {
  const vars = new Map<string, Var>()
  const uses = new Map<string, Array<ReadonlyArray<Ast.Expr>>>()
  variables(rule, (v, stack) => {
    if (!vars.has(v.key)) vars.set(v.key, { ...v, slot: vars.size })
    const list = uses.get(v.key) ?? []
    list.push(stack)
    uses.set(v.key, list)
  })
  const locals = new Map<Ast.Expr, Array<Var>>()
  const globals: Array<Var> = []
  for (const [key, stacks] of uses) {
    // The innermost negation that holds every use.
    let common = stacks[0]!
    for (const s of stacks) {
      let i = 0
      while (i < common.length && i < s.length && common[i] === s[i]) i++
      common = common.slice(0, i)
    }
    const owner = common.at(-1)
    if (owner === undefined) globals.push(vars.get(key)!)
    else locals.set(owner, [...(locals.get(owner) ?? []), vars.get(key)!])
  }
  const slotOf = (key: string) => vars.get(key)!.slot
  const tests = new Map<Ast.Expr, Test>()
  const atoms: Array<{ expr: Ast.Expr; test: Test; printed: string }> = []
  const collect = (e: Ast.Expr) => {
    if (e._tag === "And" || e._tag === "Or") {
      collect(e.left)
      collect(e.right)
    } else if (e._tag === "Not") collect(e.expr)
    else if (e._tag !== "Constant") {
      const test = atom(e, slotOf)
      tests.set(e, test)
      atoms.push({ expr: e, test, printed: printRule(e) })
    }
  }
  collect(rule)
  const reads = new Map<Ast.Expr, ReadonlySet<number>>()
  return {
    vars: [...vars.values()],
    globals: order(globals),
    locals: new Map([...locals].map(([n, vs]) => [n, order(vs)])),
    atoms: atoms.filter((a) => !under(rule, a.expr)),
    test: (e) => tests.get(e)!,
    requires: (e) => required(e, slotOf),
    reads: (e) => {
      let known = reads.get(e)
      if (known === undefined) {
        const slots = new Set<number>()
        variables(e, (v) => slots.add(slotOf(v.key)))
        known = slots
        reads.set(e, known)
      }
      return known
    }
  }
}

/**
 * The variables without which an atom is false (an atom that needs an unbound variable is false): those of its
 * references, except the occurrence a count or sum counts over (a count may be zero).
 */
const required = (e: Ast.Expr, slotOf: (key: string) => number): ReadonlySet<number> => {
  const slots = new Set<number>()
  const frame = (f: Ast.FrameRef) => {
    slots.add(slotOf(`tx${f.tx}`))
    if (typeof f.itx === "number") slots.add(slotOf(`tx${f.tx}.itx${f.itx}`))
  }
  const ref = (r: Ast.OccurrenceRef) => {
    frame(r.frame)
    if (!isFresh(r.frame)) slots.add(slotOf(printOccurrence(r)))
  }
  const value = (v: Ast.Operand) => {
    if (v._tag === "Field" || v._tag === "Meta") ref(v.ref)
    else if (v._tag === "FrameField") frame(v.frame)
  }
  switch (e._tag) {
    case "Emitted":
    case "Invoked":
    case "Reentrant":
      ref(e.ref)
      break
    case "Reverted":
      if (isOccurrence(e.target)) ref(e.target)
      else frame(e.target)
      break
    case "Created":
    case "NativeTransfer":
      frame(e.frame)
      break
    case "InGroup":
      value(e.value)
      break
    case "Compare":
      value(e.left)
      value(e.right)
      break
    case "Count":
      frame(e.ref.frame)
      value(e.right)
      break
    case "Sum":
      frame(e.value.ref.frame)
      value(e.right)
      break
    default:
  }
  return slots
}

/** Whether `target` sits under a negation of `e`. */
const under = (e: Ast.Expr, target: Ast.Expr, negated = false): boolean =>
  e === target
    ? negated
    : e._tag === "And" || e._tag === "Or"
      ? under(e.left, target, negated) || under(e.right, target, negated)
      : e._tag === "Not" && under(e.expr, target, true)

// ---------------------------------------------------------------- constraints and evidence

/** The transaction bound to a variable's `txN`. */
export const txOf = (p: Plan, env: Env, facts: Facts.Facts, tx: number): Facts.Transaction | undefined => {
  const v = p.vars.find((x) => x.kind === "tx" && x.tx === tx)
  const at = v === undefined ? unbound : env[v.slot]!
  return at === unbound ? undefined : facts.transactions[at]
}

/** The frame index bound to `txN.itxM`, when bound. */
export const frameOf = (p: Plan, env: Env, v: Var): number | undefined => {
  if (v.itx === undefined) return undefined
  const f = p.vars.find((x) => x.kind === "itx" && x.tx === v.tx && x.itx === v.itx)
  const at = f === undefined ? unbound : env[f.slot]!
  return at === unbound ? undefined : at
}

/** What made a binding a match: what its global variables are bound to, and the terms that held. */
export const evidence = (p: Plan, env: Env, facts: Facts.Facts): Evidence => {
  const txs: Record<string, { hash: string; blockNumber: number; txIndex: number }> = {}
  const frames: Record<string, { index: number; from?: Json; to?: Json; type?: Json }> = {}
  const occurrences: Record<string, Evidence["occurrences"][string]> = {}
  for (const v of p.globals) {
    const at = env[v.slot]!
    if (at === unbound) continue
    const tx = txOf(p, env, facts, v.tx)!
    if (v.kind === "tx") txs[v.key] = { hash: tx.hash, blockNumber: tx.blockNumber, txIndex: tx.txIndex }
    else if (v.kind === "itx") {
      const f = tx.frames?.find((x) => x.index === at)
      frames[v.key] = {
        index: at,
        ...(f?.fields.from === undefined ? {} : { from: toJson(f.fields.from) }),
        ...(f?.fields.to === undefined ? {} : { to: toJson(f.fields.to) }),
        ...(f?.fields.type === undefined ? {} : { type: toJson(f.fields.type) })
      }
    } else {
      const o = (v.ref!.kind === "E" ? tx.events : tx.calls)[at]!
      occurrences[v.key] = isEvent(o)
        ? { contract: o.contract, name: o.name, signature: o.signature, args: toJson(o.args), logIndex: o.logIndex }
        : {
            contract: o.contract,
            name: o.name,
            signature: o.signature,
            args: toJson(o.args),
            frame: o.frame,
            reverted: o.reverted
          }
    }
  }
  return {
    transactions: txs,
    frames,
    occurrences,
    held: p.atoms.filter((a) => a.test(env, facts)).map((a) => a.printed)
  }
}
