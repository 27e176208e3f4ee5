/**
 * The evidence of a match as stored and shown: which transactions, frames and occurrences the rule was bound to,
 * their decoded arguments, and the terms that held. One Schema, read by the stores and the HTTP API alike.
 */
import { Schema } from "effect"
import type * as Facts from "./Facts.ts"

/**
 * A decoded value as JSON: integers as decimal strings, tuples as objects by component name (`$i` unnamed), arrays
 * as arrays. An array inside an array is typed `ReadonlyArray<unknown>`: the document's schema then has no array
 * that contains itself, which common client generators cannot type (see docs/decisions.md).
 */
export type Json = string | boolean | JsonTuple | ReadonlyArray<string | boolean | JsonTuple | ReadonlyArray<unknown>>

/** A tuple (or struct) as an object by component name. */
export interface JsonTuple {
  readonly [name: string]: Json
}

const JsonTuple: Schema.Codec<JsonTuple> = Schema.Record(
  Schema.String,
  Schema.suspend((): Schema.Codec<Json> => Json)
).annotate({
  identifier: "AbiTuple",
  description: "A tuple or struct: its components by name ($0, $1… when unnamed)"
})

/** {@link Json} as a Schema. */
export const Json: Schema.Codec<Json> = Schema.Union([
  Schema.String,
  Schema.Boolean,
  JsonTuple,
  Schema.Array(
    Schema.Union([
      Schema.String,
      Schema.Boolean,
      JsonTuple,
      Schema.Array(Schema.Unknown).annotate({ description: "An array of arrays: each an AbiValue" })
    ])
  ).annotate({ description: "An array: its elements, each an AbiValue" })
]).annotate({
  identifier: "AbiValue",
  description:
    "A decoded ABI value: integers as decimal strings, addresses and bytes as 0x hex, booleans, tuples as objects by component name, arrays"
})

const Int = Schema.Int

/** What made a rule true: one satisfying binding of everything outside negations, and the terms that held. */
export const Evidence = Schema.Struct({
  transactions: Schema.Record(
    Schema.String,
    Schema.Struct({ hash: Schema.String, blockNumber: Int, txIndex: Int })
  ).annotate({ description: "The bound transactions by the rule's names (tx1, …)" }),
  frames: Schema.Record(
    Schema.String,
    Schema.Struct({
      index: Int,
      from: Schema.optionalKey(Json),
      to: Schema.optionalKey(Json),
      type: Schema.optionalKey(Json)
    })
  ).annotate({ description: "The bound call frames by the rule's names (tx1.itx2, …): index and from, to, type" }),
  occurrences: Schema.Record(
    Schema.String,
    Schema.Struct({
      contract: Schema.String,
      name: Schema.String,
      signature: Schema.String,
      args: Json,
      logIndex: Schema.optionalKey(Int),
      frame: Schema.optionalKey(Int),
      reverted: Schema.optionalKey(Schema.Boolean)
    })
  ).annotate({
    description: "The bound events (logIndex) and calls (frame, reverted) with their decoded arguments, by reference"
  }),
  held: Schema.Array(Schema.String).annotate({
    description: "The terms of the rule (in its normal form) that were true under this binding"
  })
}).annotate({ identifier: "Evidence" })

/** The evidence of a match. */
export interface Evidence extends Schema.Schema.Type<typeof Evidence> {}

/** A decoded value as JSON. */
export const toJson = (v: Facts.AbiValue): Json =>
  typeof v === "bigint"
    ? v.toString()
    : typeof v === "boolean" || typeof v === "string"
      ? v
      : Array.isArray(v)
        ? v.map(toJson)
        : Object.fromEntries(
            (v as Facts.Tuple).values.map((x, i) => [(v as Facts.Tuple).names[i] || `$${i}`, toJson(x)])
          )
