/**
 * The watch-rule checker, run when a bot is created or updated: it types every path against the ABIs of the
 * contracts registered on the bot's chain, substitutes `${placeholders}` from `literalDefs`, enforces the limits
 * and what a `simple` rule may use, and reports every problem with its character offset, a message and "did you
 * mean" candidates. A rule that passes is one the evaluator can run without a runtime type error.
 */
import * as AbiModule from "./Abi.ts"
import type * as Ast from "./Ast.ts"
import { comparators, isOccurrence } from "./Ast.ts"
import { comparatorFamily, familyComparator, familyOf } from "./Families.ts"
import { bindsOutsideNegation, framesNaming, unjoined } from "./Joins.ts"
import { parse } from "./Parser.ts"
import { print } from "./Printer.ts"
import { didYouMean } from "./Suggest.ts"
import {
  advanced,
  begin,
  contractOf,
  limits,
  operand,
  type Options,
  type Problem,
  problem,
  resolve,
  type Scope,
  typeOf,
  useFrame
} from "./Typing.ts"

export { didYouMean } from "./Suggest.ts"
export { type Contract, limits, type Options, type Problem } from "./Typing.ts"

/**
 * A rule that checked: its tree with placeholders substituted and `ruleScope` applied (what is evaluated), the
 * normal form of the expression as written, and what evaluating it needs.
 */
export interface Checked {
  readonly expr: Ast.Expr
  readonly normal: string
  /** Internal frames, call outputs or reentrancy: the chain's RPC must offer `debug_traceBlockByNumber`. */
  readonly needsTraces: boolean
  /** The highest `txN` used: 1 for a single-transaction rule. */
  readonly transactions: number
}

export type Result =
  { readonly ok: true; readonly rule: Checked } | { readonly ok: false; readonly problems: ReadonlyArray<Problem> }

/** A problem of one of a rule's expressions: which (0-based), where in it, what. */
export interface RuleProblem extends Problem {
  readonly expression: number
}

export type RuleResult =
  { readonly ok: true; readonly rule: Checked } | { readonly ok: false; readonly problems: ReadonlyArray<RuleProblem> }

/** Checks one expression's source against `options`: a rule of that one expression. */
export const check = (source: string, options: Options): Result => {
  const result = checkRule([source], options)
  return result.ok ? result : { ok: false, problems: result.problems.map(({ expression: _, ...p }) => p) }
}

/**
 * Checks the expressions of one bot as one rule: they are AND-ed (as FailSafe documents, "equivalent to using the
 * && operator"), so `tx1` in one is `tx1` in every other. Each expression is parsed and typed on its own (its
 * problems are positioned in its own text); `options.ruleScope`, the limits of the whole and the negation check
 * apply to the conjunction.
 */
export const checkRule = (sources: ReadonlyArray<string>, options: Options): RuleResult => {
  const problems: Array<RuleProblem> = []
  const parts: Array<Checked> = []
  for (const [expression, source] of sources.entries()) {
    const result = checkPart(source, options)
    if (result.ok) parts.push(result.rule)
    else problems.push(...result.problems.map((p) => ({ expression, ...p })))
  }
  // Only when every expression checked: then parts and expressions are numbered alike.
  if (options.refuseUnfed === true && problems.length === 0)
    for (const [expression, part] of parts.entries())
      for (const u of unfed(part.expr)) problems.push({ expression, offset: u.at, message: u.message, candidates: [] })
  if (problems.length > 0 || parts.length === 0) return { ok: false, problems }
  const byLabel = new Map(options.contracts.map((c) => [c.label, c]))
  const problem = (message: string, candidates: ReadonlyArray<string> = []) => {
    problems.push({ expression: 0, offset: 0, message, candidates })
  }
  let expr = parts.map((p) => p.expr).reduce((left, right): Ast.Expr => ({ _tag: "And", at: 0, left, right }))
  const normal = parts.length === 1 ? parts[0]!.normal : print(expr)
  const scope = options.ruleScope
  if (scope !== undefined && options.refuseUnfed === true) problem(`options.ruleScope ${noGroups}`)
  else if (scope !== undefined) {
    if (!byLabel.has(scope.contractName)) {
      problem(
        `options.ruleScope.contractName ${scope.contractName} is not a contract on this chain`,
        didYouMean(scope.contractName, byLabel.keys())
      )
    } else {
      const frames = framesNaming(expr, scope.contractName)
      if (frames.length === 0)
        problem(
          `options.ruleScope names ${scope.contractName}, which no transaction or numbered frame of the rule references`
        )
      for (const frame of frames) {
        const inGroup: Ast.Expr = {
          _tag: "InGroup",
          at: 0,
          value: { _tag: "FrameField", at: 0, frame, field: "from" },
          group: scope.groupId
        }
        expr = { _tag: "And", at: 0, left: expr, right: scope.member ? inGroup : { _tag: "Not", at: 0, expr: inGroup } }
      }
    }
  }
  const { first, loose } =
    options.requireJoin === true && problems.length === 0 ? unjoined(expr) : { first: 1, loose: [] }
  if (loose.length > 0) {
    const names = loose.map((t) => `tx${t}`).join(", ")
    problem(
      `${names} ${loose.length === 1 ? "is" : "are"} not joined to tx${first} by any equality: every combination of matching transactions in the window would be a match (it grows as their product); join them on a field, e.g. system.addressCompare(tx${loose[0]}.from, ==, tx${first}.from), or watch one transaction`
    )
  }
  if (problems.length === 0 && !bindsOutsideNegation(expr)) {
    problem(
      sources.length === 1
        ? "every transaction of this rule is inside a negation: it says what must not happen, but not about which transaction, so it could never match"
        : "every transaction of these expressions is inside a negation: together they say what must not happen, but not about which transaction, so they could never match"
    )
  }
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    rule: {
      expr,
      normal,
      needsTraces: parts.some((p) => p.needsTraces),
      transactions: Math.max(...parts.map((p) => p.transactions))
    }
  }
}

const noGroups =
  "needs address groups, which this server does not keep yet: membership would never hold and its negation always would"

/** The parts of `e` that no data of this server feeds yet (see `Options.refuseUnfed`), with their offsets. */
const unfed = (e: Ast.Expr): ReadonlyArray<{ readonly at: number; readonly message: string }> => {
  const value = (v: Ast.Operand) =>
    v._tag === "FrameField" && v.field === "riskscore"
      ? [
          {
            at: v.at,
            message:
              "riskscore is not looked up for transactions yet: this comparison would never hold (screen the address with POST /api/v3/intel instead)"
          }
        ]
      : []
  switch (e._tag) {
    case "Or":
    case "And":
      return [...unfed(e.left), ...unfed(e.right)]
    case "Not":
      return unfed(e.expr)
    case "InGroup":
      return [{ at: e.at, message: `inGroup(…, "${e.group}") ${noGroups}` }]
    case "Compare":
      return [...value(e.left), ...value(e.right)]
    case "Count":
      return value(e.right)
    case "Sum":
      return [...value(e.value), ...value(e.right)]
    default:
      return []
  }
}

/** Checks one expression's text on its own: syntax, types, literals and per-expression limits. */
const checkPart = (source: string, options: Options): Result => {
  if (source.length > limits.maxLength) {
    return {
      ok: false,
      problems: [{ offset: limits.maxLength, message: `longer than ${limits.maxLength} characters`, candidates: [] }]
    }
  }
  const parsed = parse(source)
  if (!parsed.ok) {
    return {
      ok: false,
      problems: [{ offset: parsed.error.offset, message: parsed.error.message, candidates: [...parsed.error.expected] }]
    }
  }
  const scope = begin(source, options)
  const expr = visit(scope, parsed.expr)
  const normal = print(expr)
  for (const [tx, used] of scope.frames) {
    if (used.size > limits.maxFramesPerTransaction)
      problem(scope, 0, `tx${tx} uses more than ${limits.maxFramesPerTransaction} internal frames`)
  }
  if (scope.problems.length > 0) return { ok: false, problems: scope.problems.sort((a, b) => a.offset - b.offset) }
  return {
    ok: true,
    rule: { expr, normal, needsTraces: scope.needsTraces, transactions: Math.max(1, ...scope.frames.keys()) }
  }
}

/** Types every call of an expression, substituting placeholders, and counts its calls. */
const visit = (scope: Scope, e: Ast.Expr): Ast.Expr => {
  switch (e._tag) {
    case "Or":
      advanced(scope, e.at, "||")
      return { ...e, left: visit(scope, e.left), right: visit(scope, e.right) }
    case "And":
      return { ...e, left: visit(scope, e.left), right: visit(scope, e.right) }
    case "Not":
      advanced(scope, e.at, "negation (! or noMatches)")
      return { ...e, expr: visit(scope, e.expr) }
    case "Constant":
      advanced(scope, e.at, String(e.value))
      return e
  }
  if (++scope.calls === limits.maxCalls + 1)
    problem(scope, e.at, `more than ${limits.maxCalls} calls in one expression`)
  switch (e._tag) {
    case "Emitted":
    case "Invoked":
      resolve(scope, e.ref, e.at)
      return e
    case "Reentrant":
      advanced(scope, e.at, "reentrant")
      scope.needsTraces = true
      resolve(scope, e.ref, e.at)
      return e
    case "Reverted":
      advanced(scope, e.at, "reverted")
      if (isOccurrence(e.target)) resolve(scope, e.target, e.at)
      else useFrame(scope, e.target, e.at)
      return e
    case "Created":
      advanced(scope, e.at, "created")
      useFrame(scope, e.frame, e.at)
      return e
    case "NativeTransfer":
      advanced(scope, e.at, "nativeTransfer")
      useFrame(scope, e.frame, e.at)
      if (e.contract !== undefined && e.contract !== "*") contractOf(scope, e.contract, e.at)
      return e
    case "InGroup": {
      advanced(scope, e.at, "inGroup")
      const type = typeOf(scope, e.value)
      if (type !== undefined && familyOf(type.type) !== "address")
        problem(scope, e.value.at, `inGroup takes an address, not ${type.type}`)
      return e
    }
    case "Count": {
      advanced(scope, e.at, "countCompare")
      resolve(scope, e.ref, e.at)
      const right = operand(scope, e.right, "uint", "countCompare")
      return right === undefined ? e : { ...e, right }
    }
    case "Sum": {
      advanced(scope, e.at, "sumCompare")
      const type = typeOf(scope, e.value)
      if (type !== undefined && familyOf(type.type) !== "uint")
        problem(scope, e.value.at, `sumCompare adds unsigned integers, not ${type.type}`)
      const right = operand(scope, e.right, "uint", "sumCompare")
      return right === undefined ? e : { ...e, right }
    }
    case "Compare": {
      const family = comparatorFamily[e.comparator]
      const type = typeOf(scope, e.left)
      if (type !== undefined) {
        const actual = familyOf(type.type)
        if (actual !== family) {
          problem(
            scope,
            e.left.at,
            `${e.comparator} compares ${family} values; this is ${AbiModule.canonicalType(type)}`,
            actual === undefined ? [] : [familyComparator(actual)]
          )
        }
      }
      if (!(comparators[e.comparator] as ReadonlyArray<string>).includes(e.operator))
        problem(scope, e.at, `${e.comparator} does not take ${e.operator}`)
      const right = operand(scope, e.right, family, e.comparator)
      return right === undefined ? e : { ...e, right }
    }
  }
}
