/**
 * The reference search of the evaluator: every assignment of every variable of a rule enumerated and tested whole,
 * slow and plain, which a differential test holds the fast search (`Evaluator.evaluate`) to.
 */
import type * as Ast from "./Ast.ts"
import { collector } from "./Collect.ts"
import type * as Facts from "./Facts.ts"
import { type Env, frameOf, type Match, type Plan, plan, position, txOf, unbound, type Var } from "./Semantics.ts"

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
