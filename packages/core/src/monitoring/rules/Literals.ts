/**
 * `options.literalDefs`: the values `${name}` placeholders stand for. JSON numbers are read from the raw JSON text
 * (lossless-json keeps each number's digits), so `1e+27` is exactly 10^27 and a 30-digit integer is not rounded
 * through a double; strings, booleans and numbers are kept as they came and typed where they are used.
 */
import { Effect, Schema } from "effect"
import { isLosslessNumber, isSafeNumber, parse as parseLossless, stringify as stringifyLossless } from "lossless-json"
import { maxPlaceholderLength } from "./Cursor.ts"
import { integer } from "./Operands.ts"

/** A defined literal as the JSON gave it: a number's text, a string, or a boolean. */
export type Definition =
  | { readonly _tag: "Number"; readonly text: string }
  | { readonly _tag: "Text"; readonly value: string }
  | { readonly _tag: "Bool"; readonly value: boolean }

/** Placeholder definitions by name. */
export type Definitions = ReadonlyMap<string, Definition>

/** `literalDefs` that are not an object of numbers, strings and booleans under placeholder names: what is wrong. */
export class InvalidLiteralDefs extends Schema.TaggedError<InvalidLiteralDefs>()("InvalidLiteralDefs", {
  message: Schema.String
}) {}

const invalid = (message: string) => Effect.fail(new InvalidLiteralDefs({ message }))

const definition = (name: string, value: unknown): Definition | string => {
  if (isLosslessNumber(value)) return { _tag: "Number", text: value.value }
  if (typeof value === "number") return { _tag: "Number", text: String(value) }
  if (typeof value === "string") return { _tag: "Text", value }
  if (typeof value === "boolean") return { _tag: "Bool", value }
  return `literalDefs.${name} must be a number, a string or a boolean`
}

/** Definitions from the raw JSON text of a `literalDefs` object; none when there is no text. */
export const fromJson = (text: string | undefined): Effect.Effect<Definitions, InvalidLiteralDefs> => {
  if (text === undefined) return Effect.succeed(new Map())
  let parsed: unknown
  try {
    parsed = parseLossless(text)
  } catch (e) {
    return invalid(`literalDefs is not valid JSON: ${(e as Error).message}`)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return invalid("literalDefs must be a JSON object")
  return fromEntries(Object.entries(parsed))
}

/**
 * Definitions from already-parsed values. A JS number is taken by its decimal text, which is exact only up to
 * 2^53: prefer {@link fromJson} (or numeric strings) for large values.
 */
export const fromEntries = (
  entries: Iterable<readonly [string, unknown]>
): Effect.Effect<Definitions, InvalidLiteralDefs> => {
  const out = new Map<string, Definition>()
  for (const [name, value] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      return invalid(`literalDefs key ${JSON.stringify(name.slice(0, 80))} is not a name`)
    if (name.length > maxPlaceholderLength)
      return invalid(`literalDefs key ${name.slice(0, 20)}… is longer than ${maxPlaceholderLength} characters`)
    const d = definition(name, value)
    if (typeof d === "string") return invalid(d)
    out.set(name, d)
  }
  return Effect.succeed(out)
}

/**
 * The definition as an integer: a JSON number, or a string of decimal digits (`"1000"`, `"1e+27"`); a `0x` string is
 * an address or bytes, never a number. The value, or why it is not one.
 */
export const asInteger = (d: Definition, signed: boolean): bigint | string =>
  d._tag === "Number"
    ? integer(d.text, signed)
    : d._tag === "Bool"
      ? "a boolean"
      : /^\s*-?0[xX]/.test(d.value)
        ? `${JSON.stringify(d.value)}, hex text (an address or bytes), not a number`
        : integer(d.value.trim(), signed)

/**
 * The JSON text of `options.literalDefs` inside a request body's text, its numbers' digits kept (what a host stores
 * so `1e+27` stays exactly 10^27); undefined when the body has none or is not JSON.
 */
export const textIn = (body: string): string | undefined => {
  let parsed: unknown
  try {
    parsed = parseLossless(body)
  } catch {
    return undefined
  }
  const options = typeof parsed === "object" && parsed !== null ? (parsed as { options?: unknown }).options : undefined
  const defs =
    typeof options === "object" && options !== null ? (options as { literalDefs?: unknown }).literalDefs : undefined
  return defs === undefined ? undefined : stringifyLossless(defs)
}

/**
 * Stored literal definitions as a JSON value to show: a number a double carries exactly stays a number, any other
 * (`1e+27`, 30 digits) is its exact decimal text, so what is shown is what is compared.
 */
export const shown = (text: string): Readonly<Record<string, number | string | boolean>> => {
  let parsed: unknown
  try {
    parsed = parseLossless(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : digits))
  } catch {
    return {}
  }
  // Stored definitions were checked when they came in: an object of numbers, strings and booleans.
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {}
  return Object.fromEntries(
    Object.entries(parsed).filter(
      (e): e is [string, number | string | boolean] =>
        typeof e[1] === "number" || typeof e[1] === "string" || typeof e[1] === "boolean"
    )
  )
}
