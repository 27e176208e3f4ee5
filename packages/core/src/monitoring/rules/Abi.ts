/**
 * Contract ABIs as the monitoring context reads them: the JSON ABI format (functions, events, their inputs and
 * outputs, tuple components), decoded with a Schema so a malformed ABI is refused with the path of its fault, and
 * the canonical signatures (`Transfer(address,address,uint256)`) that tell overloads apart.
 */
import { Schema } from "effect"

/** One parameter: a name (possibly empty), a canonical type, and for tuples their components. */
export interface Parameter {
  readonly name?: string | undefined
  readonly type: string
  readonly indexed?: boolean | undefined
  readonly components?: ReadonlyArray<Parameter> | undefined
}

const solidityType = Schema.String.check(
  Schema.makeFilter((t: string) => /^[a-z][a-z0-9]*(\[[0-9]*\])*$|^tuple(\[[0-9]*\])*$/.test(t) || "not an ABI type")
)

export const Parameter: Schema.Codec<Parameter> = Schema.Struct({
  name: Schema.optional(Schema.String),
  type: solidityType,
  indexed: Schema.optional(Schema.Boolean),
  components: Schema.optional(Schema.Array(Schema.suspend((): Schema.Codec<Parameter> => Parameter)))
}).annotate({ identifier: "AbiParameter" })

/** The ABI entries monitoring uses; constructors, errors and unknown kinds are kept out of the way, not refused. */
export const Item = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("function"),
    name: Schema.String,
    inputs: Schema.Array(Parameter),
    outputs: Schema.optional(Schema.Array(Parameter)),
    stateMutability: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    type: Schema.Literal("event"),
    name: Schema.String,
    inputs: Schema.Array(Parameter),
    anonymous: Schema.optional(Schema.Boolean)
  }),
  Schema.Struct({ type: Schema.Literals(["fallback", "receive"]), stateMutability: Schema.optional(Schema.String) }),
  Schema.Struct({ type: Schema.Literals(["constructor", "error"]) })
])
export type Item = typeof Item.Type

/** A JSON ABI: an array of entries. */
export const Abi = Schema.Array(Item)
export type Abi = typeof Abi.Type

/** A function of an ABI. */
export type FunctionItem = Extract<Item, { readonly type: "function" }>
/** An event of an ABI. */
export type EventItem = Extract<Item, { readonly type: "event" }>

/** Why an elementary type name (no array suffix) is not one of Solidity's, or undefined when it is. */
const elementaryProblem = (base: string): string | undefined => {
  if (["address", "bool", "string", "bytes", "function"].includes(base)) return undefined
  const sized = /^(u?int|bytes)([1-9][0-9]*)?$/.exec(base)
  if (sized !== null) {
    if (sized[2] === undefined) return undefined
    const n = Number(sized[2])
    if (sized[1] === "bytes")
      return n >= 1 && n <= 32 ? undefined : `${base} is not an ABI type: bytesN takes N from 1 to 32`
    return n >= 8 && n <= 256 && n % 8 === 0
      ? undefined
      : `${base} is not an ABI type: ${sized[1]}N takes N from 8 to 256 in steps of 8`
  }
  const fixed = /^u?fixed(?:([1-9][0-9]*)x([0-9]+))?$/.exec(base)
  if (fixed !== null) {
    if (fixed[1] === undefined) return undefined
    const m = Number(fixed[1])
    const n = Number(fixed[2])
    return m >= 8 && m <= 256 && m % 8 === 0 && n <= 80
      ? undefined
      : `${base} is not an ABI type: fixedMxN takes M from 8 to 256 in steps of 8 and N up to 80`
  }
  return `${base} is not an ABI type`
}

/**
 * The deepest a parameter's type may nest, counting each array dimension and each tuple inside another: real
 * contracts use a few; a type thousands deep would only cost work wherever it is read.
 */
export const maxTypeNesting = 16

/**
 * Why a parameter's type is not a valid ABI type (array lengths, tuple components and nesting included), or
 * undefined. `depth` is how deep the parameter sits in the tuples around it.
 */
const parameterProblem = (p: Parameter, depth = 0): string | undefined => {
  const m = /^([a-z][a-z0-9]*)((?:\[[0-9]*\])*)$/.exec(p.type)
  if (m === null) return `${p.type.slice(0, 80)} is not an ABI type`
  const dimensions = m[2]!.split("[").length - 1
  if (depth + dimensions + (m[1] === "tuple" ? 1 : 0) > maxTypeNesting)
    return `${m[1]}${m[2]!.slice(0, 12)}…: nested deeper than ${maxTypeNesting} levels (arrays and tuples)`
  for (const size of m[2]!.matchAll(/\[([0-9]*)\]/g))
    if (size[1] !== "" && !/^[1-9][0-9]{0,5}$/.test(size[1]!))
      return `${p.type}: a fixed array length is a whole number from 1 to 999999`
  if (m[1] === "tuple") {
    if (p.components === undefined || p.components.length === 0) return `${p.type} without its components`
    for (const [i, c] of p.components.entries()) {
      const inner = parameterProblem(c, depth + dimensions + 1)
      if (inner !== undefined) return `component ${i}${c.name ? ` (${c.name})` : ""}: ${inner}`
    }
    return undefined
  }
  if (p.components !== undefined && p.components.length > 0) return `${p.type} has components but is not a tuple`
  return elementaryProblem(m[1]!)
}

/**
 * The first entry of `abi` with a parameter whose type is not a valid ABI type (`uint257`, `bytes33`, a `tuple`
 * without components), named by its position, kind and name; undefined when every type is valid.
 */
export const typeProblem = (abi: Abi): string | undefined => {
  for (const [index, item] of abi.entries()) {
    if (item.type !== "function" && item.type !== "event") continue
    const lists: ReadonlyArray<readonly [string, ReadonlyArray<Parameter>]> = [
      ["input", item.inputs],
      ["output", item.type === "function" ? (item.outputs ?? []) : []]
    ]
    for (const [kind, list] of lists)
      for (const [i, p] of list.entries()) {
        const problem = parameterProblem(p)
        if (problem !== undefined)
          return `entry ${index} (${item.type} ${item.name}), ${kind} ${i}${p.name ? ` (${p.name})` : ""}: ${problem}`
      }
  }
  return undefined
}

/** The canonical type of a parameter: tuples spelt out as `(…)` with their array suffix. */
export const canonicalType = (p: Parameter): string =>
  p.type.startsWith("tuple")
    ? `(${(p.components ?? []).map(canonicalType).join(",")})${p.type.slice("tuple".length)}`
    : p.type

/** The canonical signature of a function or event: `name(type,…)`. */
export const signature = (item: FunctionItem | EventItem): string =>
  `${item.name}(${item.inputs.map(canonicalType).join(",")})`

export const functions = (abi: Abi): ReadonlyArray<FunctionItem> =>
  abi.filter((i): i is FunctionItem => i.type === "function")
export const events = (abi: Abi): ReadonlyArray<EventItem> => abi.filter((i): i is EventItem => i.type === "event")
