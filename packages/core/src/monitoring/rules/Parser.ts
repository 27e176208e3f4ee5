/**
 * The watch-rule parser: source text → {@link Ast.Expr}, or the first syntax error with its character offset and
 * what was expected there. A recursive descent over characters (paths such as `tx1.itx*.Pool.F.swap#2.$0` are read
 * segment by segment, so no separate tokenizer is needed). Pure and total: it never throws.
 *
 * Precedence, loosest first: `,` (AND between whole expressions, as between the strings of `expressions[]`),
 * `||`, `&&`, `!`. `system.noMatches(E)` is `!(E)`.
 */
import type * as Ast from "./Ast.ts"
import { comparators } from "./Ast.ts"
import { Cursor, Failure, type SyntaxError } from "./Cursor.ts"
import { op, operand } from "./Operands.ts"
import { occurrence, path, valueOf } from "./Paths.ts"

export { maxNesting, type SyntaxError } from "./Cursor.ts"
export { integer, maxInt, maxUint, minInt } from "./Operands.ts"

/** The parse of one expression. */
export type Parsed =
  { readonly ok: true; readonly expr: Ast.Expr } | { readonly ok: false; readonly error: SyntaxError }

const predicates = [
  "emitted",
  "invoked",
  "reverted",
  "reentrant",
  "created",
  "nativeTransfer",
  "noMatches",
  "inGroup",
  ...Object.keys(comparators),
  "countCompare",
  "sumCompare"
]

const numericOperators = comparators.uintCompare

/** Parses one watch-rule expression. */
export const parse = (source: string): Parsed => {
  const c = new Cursor(source)
  try {
    const expr = rule(c)
    c.ws()
    if (c.p < source.length) c.fail(`expected '&&', '||', ',' or the end${c.found()}`, ["&&", "||", ","])
    return { ok: true, expr }
  } catch (e) {
    if (e instanceof Failure) return { ok: false, error: e.error }
    throw e
  }
}

const rule = (c: Cursor): Ast.Expr => {
  let left = or(c)
  while (c.eat(",")) {
    const at = c.p
    left = { _tag: "And", at, left, right: or(c) }
  }
  return left
}

const or = (c: Cursor): Ast.Expr => {
  let left = and(c)
  for (;;) {
    c.ws()
    const at = c.p
    if (!c.eat("||")) return left
    left = { _tag: "Or", at, left, right: and(c) }
  }
}

const and = (c: Cursor): Ast.Expr => {
  let left = not(c)
  for (;;) {
    c.ws()
    const at = c.p
    if (!c.eat("&&")) return left
    left = { _tag: "And", at, left, right: not(c) }
  }
}

const not = (c: Cursor): Ast.Expr => {
  c.ws()
  const at = c.p
  if (c.peek("!") && !c.peek("!=")) {
    c.p++
    return c.nested(() => ({ _tag: "Not", at, expr: not(c) }), at)
  }
  return primary(c)
}

const primary = (c: Cursor): Ast.Expr => {
  c.ws()
  const at = c.p
  if (c.eat("(")) {
    const e = c.nested(() => rule(c), at)
    c.expect(")")
    return e
  }
  if (c.eat("true")) return { _tag: "Constant", at, value: true }
  if (c.eat("false")) return { _tag: "Constant", at, value: false }
  if (!c.eat("system.")) {
    return c.fail(`expected system.<function>, '(', '!', true or false${c.found()}`, ["system.", "(", "!"])
  }
  const nameAt = c.p
  const name = c.identifier()
  if (name === undefined || !predicates.includes(name)) {
    return c.fail(
      `unknown function system.${name ?? c.source.slice(nameAt, nameAt + 12)}`,
      predicates.map((f) => `system.${f}`),
      nameAt
    )
  }
  c.expect("(")
  const e = call(c, name, at)
  c.expect(")")
  return e
}

const call = (c: Cursor, name: string, at: number): Ast.Expr => {
  switch (name) {
    case "noMatches":
      return c.nested(() => ({ _tag: "Not", at, expr: rule(c) }), at)
    case "emitted":
      return { _tag: "Emitted", at, ref: occurrence(c, path(c), "E") }
    case "invoked":
      return { _tag: "Invoked", at, ref: occurrence(c, path(c), "F") }
    case "reentrant":
      return { _tag: "Reentrant", at, ref: occurrence(c, path(c), "F") }
    case "reverted": {
      const parts = path(c)
      if (parts.occurrence !== undefined) return { _tag: "Reverted", at, target: occurrence(c, parts, "F") }
      if (parts.contract !== undefined || parts.field !== undefined) {
        return c.fail("reverted takes a call (txN….Label.F.name) or a frame (txN, txN.itxM)", [], parts.at)
      }
      return { _tag: "Reverted", at, target: parts.frame }
    }
    case "created": {
      const parts = path(c)
      if (parts.contract !== undefined || parts.field !== undefined)
        c.fail("created takes a frame (txN.itxM)", [], parts.at)
      return { _tag: "Created", at, frame: parts.frame }
    }
    case "nativeTransfer": {
      const parts = path(c)
      if (parts.occurrence !== undefined || parts.field !== undefined)
        c.fail("nativeTransfer takes a frame, optionally with a contract label (txN.itxM.Label)", [], parts.at)
      return {
        _tag: "NativeTransfer",
        at,
        frame: parts.frame,
        ...(parts.contract === undefined ? {} : { contract: parts.contract })
      }
    }
    case "inGroup": {
      const value = valueOf(c, path(c))
      c.expect(",")
      c.ws()
      const groupAt = c.p
      const group = c.stringLiteral()
      if (group === undefined) c.fail(`expected a group name in quotes${c.found()}`, ['"group"'], groupAt)
      return { _tag: "InGroup", at, value, group: group! }
    }
    case "countCompare": {
      const parts = path(c)
      const ref =
        parts.occurrence === undefined
          ? c.fail("countCompare counts occurrences: txN….Label.E.name or .F.name", [], parts.at)
          : occurrence(c, parts, parts.occurrence.kind)
      c.expect(",")
      const operator = op(c, "uintCompare")
      c.expect(",")
      return { _tag: "Count", at, ref, operator, right: operand(c, "uintCompare") }
    }
    case "sumCompare": {
      const value = valueOf(c, path(c))
      if (value._tag !== "Field") c.fail("sumCompare adds up a decoded argument (….E.name.param)", [], value.at)
      c.expect(",")
      const operator = op(c, "uintCompare")
      c.expect(",")
      return {
        _tag: "Sum",
        at,
        value: value as Ast.Value & { readonly _tag: "Field" },
        operator,
        right: operand(c, "uintCompare")
      }
    }
    default: {
      const comparator = name as Ast.Comparator
      const left = valueOf(c, path(c))
      c.expect(",")
      const operator = op(c, comparator)
      c.expect(",")
      return { _tag: "Compare", at, comparator, left, operator, right: operand(c, comparator) }
    }
  }
}

// ---------------------------------------------------------------- paths

/** The operators every numeric comparison takes (also `countCompare` and `sumCompare`). */
export const numericOps: ReadonlyArray<Ast.Operator> = numericOperators
