/**
 * What a whole rule binds and joins, read off its tree: the frames that name a contract (for `ruleScope`), the
 * transactions left unjoined to the first, and whether any transaction is bound outside a negation.
 */
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"
import { plan } from "./Semantics.ts"

/** The frames (txN or txN.itxM) whose references name `label`, for `ruleScope`. */
export const framesNaming = (e: Ast.Expr, label: string): ReadonlyArray<Ast.FrameRef> => {
  const found = new Map<string, Ast.FrameRef>()
  const add = (f: Ast.FrameRef, contract: string | undefined) => {
    if (contract === label && (f.itx === undefined || typeof f.itx === "number")) found.set(`${f.tx}.${f.itx ?? ""}`, f)
  }
  const value = (v: Ast.Operand) => {
    if (v._tag === "Field" || v._tag === "Meta") add(v.ref.frame, v.ref.contract)
    else if (v._tag === "FrameField") add(v.frame, v.contract)
  }
  const walk = (x: Ast.Expr): void => {
    switch (x._tag) {
      case "Or":
      case "And":
        walk(x.left)
        walk(x.right)
        return
      case "Not":
        walk(x.expr)
        return
      case "Emitted":
      case "Invoked":
      case "Reentrant":
        add(x.ref.frame, x.ref.contract)
        return
      case "Count":
        add(x.ref.frame, x.ref.contract)
        value(x.right)
        return
      case "Reverted":
        if (isOccurrence(x.target)) add(x.target.frame, x.target.contract)
        return
      case "NativeTransfer":
        add(x.frame, x.contract)
        return
      case "InGroup":
        value(x.value)
        return
      case "Compare":
        value(x.left)
        value(x.right)
        return
      case "Sum":
        value(x.value)
        value(x.right)
        return
      default:
        return
    }
  }
  walk(e)
  return [...found.values()]
}

/** The transaction a value is read from. */
const txOfValue = (v: Ast.Operand): number | undefined =>
  v._tag === "Field" || v._tag === "Meta" ? v.ref.frame.tx : v._tag === "FrameField" ? v.frame.tx : undefined

/**
 * The pairs of transactions an expression certainly joins by an equality between them, as `a-b` (a < b): from
 * `==` comparisons of values of two transactions, through `&&`, and through `||` only when both sides join them.
 */
const joins = (e: Ast.Expr): ReadonlySet<string> => {
  switch (e._tag) {
    case "And":
      return new Set([...joins(e.left), ...joins(e.right)])
    case "Or": {
      const right = joins(e.right)
      return new Set([...joins(e.left)].filter((j) => right.has(j)))
    }
    case "Compare": {
      const [a, b] = [txOfValue(e.left), txOfValue(e.right)]
      return e.operator === "==" && a !== undefined && b !== undefined && a !== b
        ? new Set([`${Math.min(a, b)}-${Math.max(a, b)}`])
        : new Set()
    }
    default:
      return new Set()
  }
}

/** The positively bound transactions `expr` leaves unjoined to the first of them (`txs[0]`), if any. */
export const unjoined = (expr: Ast.Expr): { readonly first: number; readonly loose: ReadonlyArray<number> } => {
  // The rule's variables outside every negation, as the evaluator binds them.
  const txs = plan(expr)
    .globals.filter((v) => v.kind === "tx")
    .map((v) => v.tx)
    .sort((a, b) => a - b)
  if (txs.length < 2) return { first: txs[0] ?? 1, loose: [] }
  const pairs = [...joins(expr)].map((j) => j.split("-").map(Number) as [number, number])
  const reached = new Set([txs[0]!])
  for (let grew = true; grew;) {
    grew = false
    for (const [a, b] of pairs)
      if (reached.has(a) !== reached.has(b)) {
        reached.add(a)
        reached.add(b)
        grew = true
      }
  }
  return { first: txs[0]!, loose: txs.filter((t) => !reached.has(t)) }
}

/** True when some `txN` occurs outside every negation (a match needs a transaction to be about). */
export const bindsOutsideNegation = (e: Ast.Expr): boolean => {
  switch (e._tag) {
    case "Or":
    case "And":
      return bindsOutsideNegation(e.left) || bindsOutsideNegation(e.right)
    case "Not":
    case "Constant":
      return false
    default:
      return true
  }
}
