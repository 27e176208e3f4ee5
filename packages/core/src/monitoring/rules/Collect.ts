/**
 * The matches both searches of the evaluator collect: each binding of a rule's transactions once, with its evidence,
 * and only the matches asked for: a match judged in an earlier step is neither kept nor given evidence, so a search
 * that finds many old ones holds none of them.
 */
import type * as Facts from "./Facts.ts"
import { type Env, evidence, type Match, type Plan, unbound } from "./Semantics.ts"

/** Which matches a search keeps; the others are passed over (found, not stored). */
export interface Wanted {
  /** Only matches completing at this block or later are kept and counted (those before were judged already)... */
  readonly fromBlock?: number
  /** ...except those this says to judge again (kept, not counted), by {@link keyOf}'s key. */
  readonly again?: (key: string) => boolean
  /** Only the matches still pending (a forward negation's range open past `facts.head`), each counted. */
  readonly pendingOnly?: boolean
}

/** What the collector made of a binding found by the search. */
export type Added = "counted" | "kept" | "passed"

/** The key of a match among those of its rule: its bound transactions by name and hash (`tx1=0x…,tx2=0x…`). */
export const keyOf = (transactions: Readonly<Record<string, { readonly hash: string }>>): string =>
  Object.entries(transactions)
    .map(([k, t]) => `${k}=${t.hash}`)
    .join(",")

/** The matches found so far, by the positions of their transactions. */
export const collector = (p: Plan, facts: Facts.Facts, wanted: Wanted = {}) => {
  const txVars = p.globals.filter((v) => v.kind === "tx")
  const matches = new Map<string, Match>()
  // Transactions introduced inside a negation after every bound one: undecided while the range is still open.
  const forward = [...p.locals.values()].flat().filter((v) => v.kind === "tx")
  const { fromBlock, again, pendingOnly = false } = wanted
  /** The block of the last transaction `env` binds. */
  const lastBlock = (env: Env): number => {
    let last = -1
    for (const v of txVars) {
      const at = env[v.slot]!
      if (at !== unbound) last = Math.max(last, facts.transactions[at]!.blockNumber)
    }
    return last
  }
  const pending = (env: Env, last: number): boolean => {
    if (facts.head === undefined || forward.length === 0) return false
    let highest = -Infinity
    for (const v of txVars) if (env[v.slot] !== unbound) highest = Math.max(highest, v.tx)
    if (!forward.some((v) => v.tx > highest)) return false
    return last + facts.blockRange > facts.head
  }
  const tupleOf = (env: Env) => {
    let key = ""
    for (const v of txVars) key += `${env[v.slot]},`
    return key
  }
  const hashKey = (env: Env) => {
    const parts: Array<string> = []
    for (const v of txVars) {
      const at = env[v.slot]!
      if (at !== unbound) parts.push(`${v.key}=${facts.transactions[at]!.hash}`)
    }
    return parts.join(",")
  }
  return {
    anchor: txVars[0],
    /** Whether no match this collector keeps can be found (it keeps pending ones only, and none can be). */
    none: pendingOnly && (facts.head === undefined || forward.length === 0),
    /**
     * The lowest block the last transaction of a kept match can be in, when the search may skip every binding whose
     * last transaction is earlier (nothing earlier is judged again).
     */
    lowestLast:
      pendingOnly && facts.head !== undefined
        ? facts.head - facts.blockRange + 1
        : again === undefined
          ? fromBlock
          : undefined,
    /**
     * Records the binding in `env` if it is wanted and its transactions had not matched: `counted` when it counts
     * toward the search's bounds, `kept` when kept without counting, `passed` when not kept.
     */
    add: (env: Env): Added => {
      const last = lastBlock(env)
      const isPending = pending(env, last)
      const old = fromBlock !== undefined && last < fromBlock
      if (pendingOnly ? !isPending : old && (again === undefined || !again(hashKey(env)))) return "passed"
      const key = tupleOf(env)
      if (matches.has(key)) return "passed"
      const transactions: Record<string, number> = {}
      for (const v of txVars) if (env[v.slot] !== unbound) transactions[v.key] = env[v.slot]!
      matches.set(key, { transactions, evidence: evidence(p, env, facts), pending: isPending })
      return old && !pendingOnly ? "kept" : "counted"
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
