/**
 * Operators and operands of the watch-rule language: the operator a comparator takes, literals of each family
 * (addresses, bytes, strings, booleans, exact integers), `${placeholders}` and values read from paths.
 */
import type * as Ast from "./Ast.ts"
import { comparators } from "./Ast.ts"
import { type Cursor, maxPlaceholderLength } from "./Cursor.ts"
import { path, valueOf } from "./Paths.ts"

/** The largest unsigned 256-bit value, and the signed range. */
export const maxUint = (1n << 256n) - 1n
export const minInt = -(1n << 255n)
export const maxInt = (1n << 255n) - 1n

export const op = (c: Cursor, comparator: Ast.Comparator): Ast.Operator => {
  c.ws()
  const opAt = c.p
  const allowed: ReadonlyArray<string> = comparators[comparator]
  const m = /^(>=|<=|==|!=|>|<|contains|startsWith|endsWith)/.exec(c.rest())
  if (m === null || !allowed.includes(m[1]!)) {
    return c.fail(`${comparator} takes ${allowed.join(" ")}${m === null ? c.found() : `, not ${m[1]}`}`, allowed, opAt)
  }
  c.p += m[1]!.length
  return m[1] as Ast.Operator
}

export const operand = (c: Cursor, comparator: Ast.Comparator): Ast.Operand => {
  c.ws()
  const at = c.p
  if (c.peek("${")) {
    c.p += 2
    const name = c.identifier()
    if (name === undefined || !c.peek("}")) c.fail("expected ${name}", ["${name}"], at)
    if (name!.length > maxPlaceholderLength)
      c.fail(`a placeholder name is at most ${maxPlaceholderLength} characters`, [], at + 2)
    c.p++
    return { _tag: "Placeholder", at, name: name! }
  }
  if (c.peek("tx") && /^tx[0-9]/.test(c.rest())) return valueOf(c, path(c))
  switch (comparator) {
    case "boolCompare":
      if (c.eat("true")) return { _tag: "Bool", at, value: true }
      if (c.eat("false")) return { _tag: "Bool", at, value: false }
      return c.fail(`expected true, false, a value or a placeholder${c.found()}`, ["true", "false"])
    case "stringCompare": {
      const text = c.stringLiteral()
      if (text === undefined) c.fail(`expected a string in quotes, a value or a placeholder${c.found()}`, ['"text"'])
      return { _tag: "String", at, value: text! }
    }
    case "addressCompare": {
      const m = /^0[xX][0-9a-fA-F]+/.exec(c.rest())
      if (m === null || m[0].length !== 42) {
        return c.fail("expected an address: 0x and 40 hex digits", ["0x…"], at)
      }
      c.p += 42
      return { _tag: "Address", at, value: m[0].toLowerCase().replace(/^0X/, "0x") }
    }
    case "bytesCompare": {
      const m = /^0[xX]([0-9a-fA-F]*)/.exec(c.rest())
      if (m === null || m[1]!.length % 2 !== 0)
        return c.fail("expected bytes: 0x and an even number of hex digits", ["0x…"], at)
      c.p += m[0].length
      return { _tag: "Bytes", at, value: `0x${m[1]!.toLowerCase()}` }
    }
    case "uintCompare":
    case "intCompare":
      return { _tag: "Number", at, value: number(c, comparator === "intCompare") }
  }
}

/** An exact integer at the cursor (see {@link integer}). */
const number = (c: Cursor, signed: boolean): bigint => {
  const at = c.p
  const negative = signed && c.eat("-")
  if (negative) c.ws()
  const m = /^(0[xX][0-9a-fA-F]+|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?)/.exec(c.rest())
  if (m === null) return c.fail(`expected a number${c.found()}`, ["1000", "1e18"], at)
  c.p += m[0].length
  const read = integer(`${negative ? "-" : ""}${m[1]}`, signed)
  return typeof read === "string" ? c.fail(read, [], at) : read
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
