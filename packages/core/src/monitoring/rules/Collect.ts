/** The matches both searches of the evaluator collect: each binding of a rule's transactions once, with its evidence. */
import type * as Facts from "./Facts.ts"
import { type Env, evidence, type Match, type Plan, unbound } from "./Semantics.ts"

/** The matches found so far, by the positions of their transactions. */
export const collector = (p: Plan, facts: Facts.Facts) => {
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
