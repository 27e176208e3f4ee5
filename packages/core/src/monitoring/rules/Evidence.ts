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

const encodeBySchema = Schema.encodeSync(Schema.fromJsonString(Evidence))

/** Own properties of a plain object (not an array), or undefined. */
const recordOf = (v: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v)

/** A record's values each made plain by `each`, keys in the record's order; undefined if any is not. */
const plainRecord = (v: unknown, each: (x: unknown) => unknown): Record<string, unknown> | undefined => {
  const r = recordOf(v)
  if (r === undefined) return undefined
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(r)) {
    // Assigning it would set the prototype instead: left to the Schema.
    if (k === "__proto__") return undefined
    const x = each(r[k])
    if (x === undefined) return undefined
    out[k] = x
  }
  return out
}

/** A {@link Json} value as the Schema writes it (arrays of arrays are left to the Schema); undefined if not plain. */
const plainJson = (v: unknown): unknown => {
  if (typeof v === "string" || typeof v === "boolean") return v
  if (!Array.isArray(v)) return plainRecord(v, plainJson)
  const out: Array<unknown> = []
  for (const x of v) {
    const y = Array.isArray(x) ? undefined : plainJson(x)
    if (y === undefined) return undefined
    out.push(y)
  }
  return out
}

/** Each struct's fields in the Schema's order, optional ones only when present; undefined where it is not plain. */
const plainEvidence = (e: unknown): unknown => {
  const r = recordOf(e)
  if (r === undefined) return undefined
  const transactions = plainRecord(r.transactions, (t) => {
    const x = recordOf(t)
    return x !== undefined && typeof x.hash === "string" && isInt(x.blockNumber) && isInt(x.txIndex)
      ? { hash: x.hash, blockNumber: x.blockNumber, txIndex: x.txIndex }
      : undefined
  })
  const frames = plainRecord(r.frames, (f) => {
    const x = recordOf(f)
    if (x === undefined || !isInt(x.index)) return undefined
    const out: Record<string, unknown> = { index: x.index }
    for (const k of ["from", "to", "type"] as const) {
      if (!Object.hasOwn(x, k)) continue
      const j = plainJson(x[k])
      if (j === undefined) return undefined
      out[k] = j
    }
    return out
  })
  const occurrences = plainRecord(r.occurrences, (o) => {
    const x = recordOf(o)
    if (x === undefined || typeof x.contract !== "string" || typeof x.name !== "string") return undefined
    if (typeof x.signature !== "string") return undefined
    const args = plainJson(x.args)
    if (args === undefined) return undefined
    const out: Record<string, unknown> = { contract: x.contract, name: x.name, signature: x.signature, args }
    if (Object.hasOwn(x, "logIndex")) {
      if (!isInt(x.logIndex)) return undefined
      out.logIndex = x.logIndex
    }
    if (Object.hasOwn(x, "frame")) {
      if (!isInt(x.frame)) return undefined
      out.frame = x.frame
    }
    if (Object.hasOwn(x, "reverted")) {
      if (typeof x.reverted !== "boolean") return undefined
      out.reverted = x.reverted
    }
    return out
  })
  if (transactions === undefined || frames === undefined || occurrences === undefined) return undefined
  const held = r.held
  if (!Array.isArray(held)) return undefined
  for (let i = 0; i < held.length; i++) if (typeof held[i] !== "string") return undefined
  return { transactions, frames, occurrences, held: held.slice() }
}

/**
 * Evidence as its JSON text, exactly as `Schema.encodeSync(Schema.fromJsonString(Evidence))` writes it: by plain
 * code where the value is plainly evidence (a follower stores one per alert, and the Schema's walk took most of
 * storing them), else by the Schema, which then refuses what is wrong in its own words.
 */
export const encode = (e: Evidence): string => {
  const plain = plainEvidence(e)
  return plain === undefined ? encodeBySchema(e) : JSON.stringify(plain)
}
