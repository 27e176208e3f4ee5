/**
 * The watch-rule parser: source text → {@link Ast.Expr}, or the first syntax error with its character offset and
 * what was expected there. A recursive descent over characters (paths such as `tx1.itx*.Pool.F.swap#2.$0` are read
 * segment by segment, so no separate tokenizer is needed). Pure and total: it never throws.
 *
 * Precedence, loosest first: `,` (AND between whole expressions, as between the strings of `expressions[]`),
 * `||`, `&&`, `!`. `system.noMatches(E)` is `!(E)`.
 */
import type * as Ast from "./Ast.ts"
import { comparators, fieldNames, metaFields } from "./Ast.ts"

/** A syntax error: where, what is wrong, and what would have been accepted there. */
export interface SyntaxError {
  readonly offset: number
  readonly message: string
  readonly expected: ReadonlyArray<string>
}

/** The parse of one expression. */
export type Parsed =
  { readonly ok: true; readonly expr: Ast.Expr } | { readonly ok: false; readonly error: SyntaxError }

/** The most `(`/`!` nesting a rule may have; deeper is refused rather than risking the stack. */
export const maxNesting = 64

/** The largest unsigned 256-bit value, and the signed range. */
export const maxUint = (1n << 256n) - 1n
export const minInt = -(1n << 255n)
export const maxInt = (1n << 255n) - 1n

class Failure {
  constructor(readonly error: SyntaxError) {}
}

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

/** A path as read, before the calling construct says which shape it needs. */
interface PathParts {
  readonly at: number
  readonly frame: Ast.FrameRef
  readonly contract?: string
  readonly occurrence?: Omit<Ast.OccurrenceRef, "frame" | "contract">
  readonly returned: boolean
  readonly accessors: ReadonlyArray<Ast.Accessor>
  readonly meta?: string | undefined
  readonly field?: string
}

/** Parses one watch-rule expression. */
export const parse = (source: string): Parsed => {
  let p = 0
  let depth = 0

  const fail = (message: string, expected: ReadonlyArray<string> = [], offset = p): never => {
    throw new Failure({ offset, message, expected })
  }
  const ws = () => {
    while (p < source.length && /\s/.test(source[p]!)) p++
  }
  const peek = (text: string) => source.startsWith(text, p)
  const eat = (text: string) => {
    ws()
    if (!peek(text)) return false
    p += text.length
    return true
  }
  const expect = (text: string, what = `'${text}'`) => {
    if (!eat(text)) fail(`expected ${what}${found()}`, [text])
  }
  const found = () => {
    ws()
    return p >= source.length ? ", found the end" : `, found '${source.slice(p, p + 12).split(/\s/)[0]}'`
  }
  const identifier = (): string | undefined => {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(p))
    if (m === null) return undefined
    p += m[0].length
    return m[0]
  }
  const digits = (): number | undefined => {
    const m = /^[0-9]+/.exec(source.slice(p))
    if (m === null) return undefined
    p += m[0].length
    return Number(m[0])
  }

  // ---------------------------------------------------------------- expressions
  const rule = (): Ast.Expr => {
    let left = or()
    while (eat(",")) {
      const at = p
      left = { _tag: "And", at, left, right: or() }
    }
    return left
  }
  const or = (): Ast.Expr => {
    let left = and()
    for (;;) {
      ws()
      const at = p
      if (!eat("||")) return left
      left = { _tag: "Or", at, left, right: and() }
    }
  }
  const and = (): Ast.Expr => {
    let left = not()
    for (;;) {
      ws()
      const at = p
      if (!eat("&&")) return left
      left = { _tag: "And", at, left, right: not() }
    }
  }
  const nested = <A>(f: () => A, at: number): A => {
    if (++depth > maxNesting) fail(`nested deeper than ${maxNesting} levels`, [], at)
    const a = f()
    depth--
    return a
  }
  const not = (): Ast.Expr => {
    ws()
    const at = p
    if (peek("!") && !peek("!=")) {
      p++
      return nested(() => ({ _tag: "Not", at, expr: not() }), at)
    }
    return primary()
  }
  const primary = (): Ast.Expr => {
    ws()
    const at = p
    if (eat("(")) {
      const e = nested(rule, at)
      expect(")")
      return e
    }
    if (eat("true")) return { _tag: "Constant", at, value: true }
    if (eat("false")) return { _tag: "Constant", at, value: false }
    if (!eat("system.")) {
      return fail(`expected system.<function>, '(', '!', true or false${found()}`, ["system.", "(", "!"])
    }
    const nameAt = p
    const name = identifier()
    if (name === undefined || !predicates.includes(name)) {
      return fail(
        `unknown function system.${name ?? source.slice(nameAt, nameAt + 12)}`,
        predicates.map((f) => `system.${f}`),
        nameAt
      )
    }
    expect("(")
    const e = call(name, at)
    expect(")")
    return e
  }

  const call = (name: string, at: number): Ast.Expr => {
    switch (name) {
      case "noMatches":
        return nested(() => ({ _tag: "Not", at, expr: rule() }), at)
      case "emitted":
        return { _tag: "Emitted", at, ref: occurrence(path(), "E") }
      case "invoked":
        return { _tag: "Invoked", at, ref: occurrence(path(), "F") }
      case "reentrant":
        return { _tag: "Reentrant", at, ref: occurrence(path(), "F") }
      case "reverted": {
        const parts = path()
        if (parts.occurrence !== undefined) return { _tag: "Reverted", at, target: occurrence(parts, "F") }
        if (parts.contract !== undefined || parts.field !== undefined) {
          return fail("reverted takes a call (txN….Label.F.name) or a frame (txN, txN.itxM)", [], parts.at)
        }
        return { _tag: "Reverted", at, target: parts.frame }
      }
      case "created": {
        const parts = path()
        if (parts.contract !== undefined || parts.field !== undefined)
          fail("created takes a frame (txN.itxM)", [], parts.at)
        return { _tag: "Created", at, frame: parts.frame }
      }
      case "nativeTransfer": {
        const parts = path()
        if (parts.occurrence !== undefined || parts.field !== undefined)
          fail("nativeTransfer takes a frame, optionally with a contract label (txN.itxM.Label)", [], parts.at)
        return {
          _tag: "NativeTransfer",
          at,
          frame: parts.frame,
          ...(parts.contract === undefined ? {} : { contract: parts.contract })
        }
      }
      case "inGroup": {
        const value = valueOf(path())
        expect(",")
        ws()
        const groupAt = p
        const group = stringLiteral()
        if (group === undefined) fail(`expected a group name in quotes${found()}`, ['"group"'], groupAt)
        return { _tag: "InGroup", at, value, group: group! }
      }
      case "countCompare": {
        const parts = path()
        const ref =
          parts.occurrence === undefined
            ? fail("countCompare counts occurrences: txN….Label.E.name or .F.name", [], parts.at)
            : occurrence(parts, parts.occurrence.kind)
        expect(",")
        const operator = op("uintCompare")
        expect(",")
        return { _tag: "Count", at, ref, operator, right: operand("uintCompare") }
      }
      case "sumCompare": {
        const value = valueOf(path())
        if (value._tag !== "Field") fail("sumCompare adds up a decoded argument (….E.name.param)", [], value.at)
        expect(",")
        const operator = op("uintCompare")
        expect(",")
        return {
          _tag: "Sum",
          at,
          value: value as Ast.Value & { readonly _tag: "Field" },
          operator,
          right: operand("uintCompare")
        }
      }
      default: {
        const comparator = name as Ast.Comparator
        const left = valueOf(path())
        expect(",")
        const operator = op(comparator)
        expect(",")
        return { _tag: "Compare", at, comparator, left, operator, right: operand(comparator) }
      }
    }
  }

  // ---------------------------------------------------------------- paths
  const path = (): PathParts => {
    ws()
    const at = p
    if (!eat("tx")) return fail(`expected a path starting with txN${found()}`, ["tx1"])
    const tx = digits()
    if (tx === undefined || tx < 1) return fail("expected the transaction number after tx (tx1, tx2, …)", ["tx1"])
    let frame: Ast.FrameRef = { tx }
    if (peek(".itx")) {
      p += 4
      if (eat("*")) frame = { tx, itx: "*" }
      else {
        const itx = digits()
        if (itx === undefined || itx < 1)
          fail("expected the frame number after itx (itx1, itx2, …) or itx*", ["itx1", "itx*"])
        frame = { tx, itx: itx! }
      }
    } else if (/^\.any(?![A-Za-z0-9_])/.test(source.slice(p))) {
      p += 4
      frame = { tx, itx: "any" }
    }
    if (!peek(".")) return { at, frame, returned: false, accessors: [] }
    p++
    const wordAt = p
    const word = eat("*") ? "*" : identifier()
    if (word === undefined) return fail("expected a contract label or a field after '.'", ["Label", "from"], wordAt)
    if (word !== "*" && fieldNames.has(word) && !peek("."))
      return { at, frame, field: word, returned: false, accessors: [] }
    const contract = word
    if (!peek(".")) return { at, frame, contract, returned: false, accessors: [] }
    p++
    const kindAt = p
    const next = identifier()
    if (next === "E" || next === "F") {
      if (!peek(".")) fail(`expected '.' and a ${next === "E" ? "event" : "function"} name after .${next}`, ["."])
      p++
      const selector = selectorOf(next)
      let occurrenceIndex: number | undefined
      if (peek("#")) {
        p++
        occurrenceIndex = digits()
        if (occurrenceIndex === undefined || occurrenceIndex < 1)
          fail("expected an occurrence number after # (#1, #2, …)", ["#1"])
      }
      const occ = {
        kind: next,
        selector,
        ...(occurrenceIndex === undefined ? {} : { occurrence: occurrenceIndex })
      } as const
      let returned = false
      const accessors: Array<Ast.Accessor> = []
      for (;;) {
        if (peek("[")) {
          p++
          const index = digits()
          if (index === undefined) fail("expected an array index", ["0"])
          if (!peek("]")) fail("expected ']'", ["]"])
          p++
          accessors.push({ _tag: "Index", index: index! })
          continue
        }
        if (!peek(".")) break
        p++
        if (peek("@")) {
          p++
          const metaAt = p
          const meta = identifier()
          if (meta === undefined || !(metaFields as ReadonlyArray<string>).includes(meta)) {
            fail(
              `unknown occurrence metadata @${meta ?? ""}`,
              metaFields.map((m) => `@${m}`),
              metaAt
            )
          }
          if (accessors.length > 0 || returned) fail("@ metadata belongs to the occurrence itself", [], metaAt)
          return { at, frame, contract, occurrence: occ, returned: false, accessors: [], meta: meta! }
        }
        if (peek("$")) {
          p++
          const index = digits()
          if (index === undefined) fail("expected a position after $ ($0, $1, …)", ["$0"])
          accessors.push({ _tag: "Position", index: index! })
          continue
        }
        const memberAt = p
        const member = identifier()
        if (member === undefined) fail("expected a parameter or member name", [], memberAt)
        if (member === "return" && next === "F" && accessors.length === 0 && !returned) {
          returned = true
          continue
        }
        accessors.push({ _tag: "Member", name: member! })
      }
      return { at, frame, contract, occurrence: occ, returned, accessors }
    }
    if (next !== undefined && fieldNames.has(next) && !peek("."))
      return { at, frame, contract, field: next, returned: false, accessors: [] }
    return fail(`expected E (an event), F (a function) or a field after ${contract}`, ["E", "F", ...fieldNames], kindAt)
  }

  const selectorOf = (kind: "E" | "F"): Ast.Selector => {
    if (eat("*")) return { _tag: "Any" }
    const nameAt = p
    const name = identifier()
    if (name === undefined) return fail(`expected ${kind === "E" ? "an event" : "a function"} name or *`, ["*"], nameAt)
    if (!peek("(")) return { _tag: "Named", name }
    p++
    const types: Array<string> = []
    ws()
    if (eat(")")) return { _tag: "Named", name, types }
    for (;;) {
      ws()
      types.push(solidityType())
      if (eat(")")) return { _tag: "Named", name, types }
      expect(",", "',' or ')'")
    }
  }

  /** A canonical ABI type: `uint256`, `address[]`, `(uint256,address)[2]`. */
  const solidityType = (): string => {
    const typeAt = p
    let text: string
    if (peek("(")) {
      p++
      const inner: Array<string> = []
      ws()
      if (!eat(")")) {
        for (;;) {
          ws()
          inner.push(solidityType())
          if (eat(")")) break
          expect(",", "',' or ')'")
        }
      }
      text = `(${inner.join(",")})`
    } else {
      const m = /^[a-z][a-z0-9]*/.exec(source.slice(p))
      if (m === null) return fail("expected an ABI type (uint256, address, bytes32, …)", ["uint256", "address"], typeAt)
      p += m[0].length
      text = m[0]
    }
    for (;;) {
      const m = /^\[[0-9]*\]/.exec(source.slice(p))
      if (m === null) return text
      p += m[0].length
      text += m[0]
    }
  }

  const occurrence = (parts: PathParts, kind: "E" | "F"): Ast.OccurrenceRef => {
    const o = parts.occurrence
    if (
      o === undefined ||
      o.kind !== kind ||
      parts.accessors.length > 0 ||
      parts.returned ||
      parts.meta !== undefined
    ) {
      return fail(
        kind === "E" ? "expected an event: txN….Label.E.name" : "expected a function call: txN….Label.F.name",
        [],
        parts.at
      )
    }
    return { frame: parts.frame, contract: parts.contract!, ...o }
  }

  const valueOf = (parts: PathParts): Ast.Value => {
    if (parts.meta !== undefined) {
      return {
        _tag: "Meta",
        at: parts.at,
        ref: occurrence({ ...parts, meta: undefined }, parts.occurrence!.kind),
        field: parts.meta
      }
    }
    if (parts.occurrence !== undefined) {
      if (parts.accessors.length === 0 && !parts.returned) {
        return fail("expected a parameter after the event or function (….E.Transfer.value) or .@metadata", [], parts.at)
      }
      const ref = occurrence({ ...parts, accessors: [], returned: false }, parts.occurrence.kind)
      return { _tag: "Field", at: parts.at, ref, returned: parts.returned, path: parts.accessors }
    }
    if (parts.field !== undefined) {
      return {
        _tag: "FrameField",
        at: parts.at,
        frame: parts.frame,
        ...(parts.contract === undefined ? {} : { contract: parts.contract }),
        field: parts.field
      }
    }
    return fail(
      "expected a value: a field (tx1.from), a parameter (….E.Transfer.value) or metadata (….@address)",
      [],
      parts.at
    )
  }

  // ---------------------------------------------------------------- operators and operands
  const op = (comparator: Ast.Comparator): Ast.Operator => {
    ws()
    const opAt = p
    const allowed: ReadonlyArray<string> = comparators[comparator]
    const m = /^(>=|<=|==|!=|>|<|contains|startsWith|endsWith)/.exec(source.slice(p))
    if (m === null || !allowed.includes(m[1]!)) {
      return fail(`${comparator} takes ${allowed.join(" ")}${m === null ? found() : `, not ${m[1]}`}`, allowed, opAt)
    }
    p += m[1]!.length
    return m[1] as Ast.Operator
  }

  const stringLiteral = (): string | undefined => {
    const quote = source[p]
    if (quote !== '"' && quote !== "'") return undefined
    const start = p
    p++
    let text = ""
    while (p < source.length && source[p] !== quote) {
      if (source[p] === "\\") {
        const next = source[p + 1]
        if (next !== '"' && next !== "'" && next !== "\\")
          fail("only \\\", \\' and \\\\ may be escaped in a string", [], p)
        text += next
        p += 2
      } else text += source[p++]
    }
    if (p >= source.length) fail("unterminated string", [quote], start)
    p++
    return text
  }

  const operand = (comparator: Ast.Comparator): Ast.Operand => {
    ws()
    const at = p
    if (peek("${")) {
      p += 2
      const name = identifier()
      if (name === undefined || !peek("}")) fail("expected ${name}", ["${name}"], at)
      p++
      return { _tag: "Placeholder", at, name: name! }
    }
    if (peek("tx") && /^tx[0-9]/.test(source.slice(p))) return valueOf(path())
    switch (comparator) {
      case "boolCompare":
        if (eat("true")) return { _tag: "Bool", at, value: true }
        if (eat("false")) return { _tag: "Bool", at, value: false }
        return fail(`expected true, false, a value or a placeholder${found()}`, ["true", "false"])
      case "stringCompare": {
        const text = stringLiteral()
        if (text === undefined) fail(`expected a string in quotes, a value or a placeholder${found()}`, ['"text"'])
        return { _tag: "String", at, value: text! }
      }
      case "addressCompare": {
        const m = /^0[xX][0-9a-fA-F]+/.exec(source.slice(p))
        if (m === null || m[0].length !== 42) {
          return fail("expected an address: 0x and 40 hex digits", ["0x…"], at)
        }
        p += 42
        return { _tag: "Address", at, value: m[0].toLowerCase().replace(/^0X/, "0x") }
      }
      case "bytesCompare": {
        const m = /^0[xX]([0-9a-fA-F]*)/.exec(source.slice(p))
        if (m === null || m[1]!.length % 2 !== 0)
          return fail("expected bytes: 0x and an even number of hex digits", ["0x…"], at)
        p += m[0].length
        return { _tag: "Bytes", at, value: `0x${m[1]!.toLowerCase()}` }
      }
      case "uintCompare":
      case "intCompare":
        return { _tag: "Number", at, value: number(comparator === "intCompare") }
    }
  }

  /** An exact integer at the cursor (see {@link integer}). */
  const number = (signed: boolean): bigint => {
    const at = p
    const negative = signed && eat("-")
    if (negative) ws()
    const m = /^(0[xX][0-9a-fA-F]+|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?)/.exec(source.slice(p))
    if (m === null) return fail(`expected a number${found()}`, ["1000", "1e18"], at)
    p += m[0].length
    const read = integer(`${negative ? "-" : ""}${m[1]}`, signed)
    return typeof read === "string" ? fail(read, [], at) : read
  }

  try {
    const expr = rule()
    ws()
    if (p < source.length) fail(`expected '&&', '||', ',' or the end${found()}`, ["&&", "||", ","])
    return { ok: true, expr }
  } catch (e) {
    if (e instanceof Failure) return { ok: false, error: e.error }
    throw e
  }
}

/** Decimal digits of the largest int256/uint256 magnitude (2^256 - 1 has 78). */
const maxDigits = 78

/**
 * The exact integer a number's text denotes: decimal with `_` separators, a fraction and exponent that together
 * make a whole number (`1.5e18`, `1e+27`), or hex; never through a double. The reason as text when it is not a
 * whole number within uint256 (or int256 when `signed`).
 *
 * Work is linear in the text whatever its exponent: the digits are trimmed and the magnitude (significant digits
 * plus exponent) compared with 78 digits before any arithmetic, so `1e-1000000000` or `1e999999999999` is refused
 * at once instead of computing 10^1000000000.
 */
export const integer = (text: string, signed = false): bigint | string => {
  const negative = text.startsWith("-")
  const body = negative ? text.slice(1) : text
  if (negative && !signed) return `${text} is negative`
  const range = `${text} is outside the ${signed ? "int256" : "uint256"} range`
  let value: bigint
  if (/^0[xX][0-9a-fA-F]+$/.test(body)) {
    const hex = body.slice(2).replace(/^0+/, "")
    if (hex.length > 64) return range
    value = hex === "" ? 0n : BigInt(`0x${hex}`)
  } else {
    const m = /^([0-9][0-9_]*)(?:\.([0-9_]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(body)
    if (m === null || m[1]!.endsWith("_")) return `${text} is not a number`
    const fraction = (m[2] ?? "").replace(/_/g, "")
    const all = m[1]!.replace(/_/g, "") + fraction
    const significant = all.replace(/^0+/, "").replace(/0+$/, "")
    if (significant === "") value = 0n
    else {
      const trailing = all.length - all.replace(/0+$/, "").length
      // The exponent as written may be any length: past 15 digits it is beyond every bound below.
      const written = m[3] ?? "0"
      const huge = written.replace(/^[+-]?0*/, "").length > 15
      const exponent = huge
        ? written.startsWith("-")
          ? -Infinity
          : Infinity
        : Number(written) - fraction.length + trailing
      if (exponent < 0) return `${text} is not a whole number`
      if (significant.length + exponent > maxDigits) return range
      value = BigInt(significant) * 10n ** BigInt(exponent)
    }
  }
  if (negative) value = -value
  return (signed ? value < minInt || value > maxInt : value > maxUint) ? range : value
}

/** The operators every numeric comparison takes (also `countCompare` and `sumCompare`). */
export const numericOps: ReadonlyArray<Ast.Operator> = numericOperators
