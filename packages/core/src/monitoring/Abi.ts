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
})

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
