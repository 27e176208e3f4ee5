/**
 * How a rule's atoms read the facts: which events or calls a reference can mean, the index of occurrences by
 * contract and name, the fields of transactions, frames and occurrences, and comparisons of decoded values.
 */
import type * as Ast from "./Ast.ts"
import type * as Facts from "./Facts.ts"

/** A binding of every variable of a rule, by slot. */
export type Env = Int32Array

/** The value of a slot whose variable is not bound. */
export const unbound = -1

/** An expression as a function of a binding. */
export type Test = (env: Env, facts: Facts.Facts) => boolean

/** A frame reference that means any frame (`itx*`, `any`): each use may be a different one. */
export const isFresh = (f: Ast.FrameRef) => f.itx === "*" || f.itx === "any"

/** The reference without its `#k`: every occurrence it may mean. */
export const anyOccurrence = ({ occurrence: _, ...rest }: Ast.OccurrenceRef): Ast.OccurrenceRef => rest

export type Occurrence = Facts.EventOccurrence | Facts.CallOccurrence

/** Which events or calls a reference can mean, given the frame bound to its `itxM`. */
export interface OccurrenceTest {
  readonly kind: "E" | "F"
  /** Where in the index of occurrences every occurrence it means is, when it names its contract and event or function. */
  readonly indexKey?: IndexKey
  readonly means: (o: Occurrence, frame: number | undefined) => boolean
}

export const occurrenceTest = (ref: Ast.OccurrenceRef): OccurrenceTest => {
  const contract = intern(ref.contract)
  const name = ref.selector._tag === "Named" ? intern(ref.selector.name) : undefined
  const selector = ref.selector
  const signature =
    selector._tag === "Named" && selector.types !== undefined
      ? `${selector.name}(${selector.types.join(",")})`
      : undefined
  const itx = ref.frame.itx
  const indexKey = contract === "*" || name === undefined ? undefined : { kind: ref.kind, contract, name }
  const keyed = indexKey === undefined ? {} : { indexKey }
  const named = (o: Occurrence) =>
    (contract === "*" || contract === o.contract) &&
    (name === undefined || (name === o.name && (signature === undefined || signature === o.signature)))
  if (ref.kind === "E" && (itx === undefined || itx === "any")) return { kind: "E", ...keyed, means: named }
  if (ref.kind === "E") {
    return {
      kind: "E",
      ...keyed,
      means: (o, frame) => {
        if (!named(o)) return false
        const at = (o as Facts.EventOccurrence).frame
        return at !== undefined && (itx === "*" ? at >= 1 : at === frame)
      }
    }
  }
  return {
    kind: "F",
    ...keyed,
    means: (o, frame) => {
      if (!named(o)) return false
      const at = (o as Facts.CallOccurrence).frame
      return itx === undefined ? at === 0 : itx === "any" ? true : itx === "*" ? at >= 1 : at === frame
    }
  }
}

/**
 * The same text as a string the engine keeps one copy of (property names are), so comparing it with the names of
 * decoded occurrences is mostly a pointer comparison.
 */
export const intern = (text: string): string => Object.keys({ [text]: 0 })[0]!

/** Where an occurrence's transactions are in the index (`indexed`): by E|F, contract and name. */
export interface IndexKey {
  readonly kind: "E" | "F"
  readonly contract: string
  readonly name: string
}

/** Numbers by contract and name, as an index is built. */
type ByOccurrence = Map<string, Map<string, Array<number>>>

/** The list of `o`'s contract and name in `index`, made empty when missing. */
const listOf = (index: ByOccurrence, o: Occurrence): Array<number> => {
  let byName = index.get(o.contract)
  if (byName === undefined) index.set(o.contract, (byName = new Map()))
  let list = byName.get(o.name)
  if (list === undefined) byName.set(o.name, (list = []))
  return list
}

/** Positions of transactions (ascending) by E|F, contract and name. */
type OccurrenceIndex = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<number>>>

const indexes = new WeakMap<
  ReadonlyArray<Facts.Transaction>,
  { readonly length: number; readonly events: OccurrenceIndex; readonly calls: OccurrenceIndex }
>()

/**
 * The positions (in `facts.transactions`, ascending) of the transactions with an event or call of each contract
 * and name: made once per list of transactions, on first use, and shared by every rule evaluated over it, so a
 * rule about one contract visits only the transactions that touch it. A list that has grown since is indexed
 * again (transactions are otherwise taken as immutable, as their types say).
 */
export const indexed = (facts: Facts.Facts, key: IndexKey): ReadonlyArray<number> => {
  let known = indexes.get(facts.transactions)
  if (known === undefined || known.length !== facts.transactions.length) {
    const events: ByOccurrence = new Map()
    const calls: ByOccurrence = new Map()
    const add = (index: ByOccurrence, o: Occurrence, at: number) => {
      const list = listOf(index, o)
      if (list.length === 0 || list[list.length - 1] !== at) list.push(at)
    }
    const txs = facts.transactions
    for (let at = 0; at < txs.length; at++) {
      const tx = txs[at]!
      for (const e of tx.events) add(events, e, at)
      for (const c of tx.calls) add(calls, c, at)
    }
    known = { length: txs.length, events, calls }
    indexes.set(txs, known)
  }
  return (key.kind === "E" ? known.events : known.calls).get(key.contract)?.get(key.name) ?? []
}

/** Frames by contract and name: the frames (`index`, ascending) where an occurrence of each was emitted or made. */
type FrameIndex = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<number>>>

const frameIndexes = new WeakMap<Facts.Transaction, { readonly events: FrameIndex; readonly calls: FrameIndex }>()
const noFrames: ReadonlyArray<number> = []

/**
 * The frames of `tx` (their `index`, ascending, each once) in which an event of `key`'s contract and name was
 * emitted (`E`) or a call of it made (`F`): made once per transaction, on first use, and shared by every rule
 * evaluated over it, so a rule about an internal frame's occurrence binds only the frames that have one.
 */
export const framesWith = (tx: Facts.Transaction, key: IndexKey): ReadonlyArray<number> => {
  let known = frameIndexes.get(tx)
  if (known === undefined) {
    const index = (list: ReadonlyArray<Occurrence>) => {
      const made: ByOccurrence = new Map()
      for (const o of list) {
        if (o.frame === undefined) continue
        const frames = listOf(made, o)
        if (!frames.includes(o.frame)) frames.push(o.frame)
      }
      // A frame's logs may come before and after those of the frames it calls: frames are kept in execution order.
      for (const byName of made.values()) for (const frames of byName.values()) frames.sort((a, b) => a - b)
      return made
    }
    known = { events: index(tx.events), calls: index(tx.calls) }
    frameIndexes.set(tx, known)
  }
  return (key.kind === "E" ? known.events : known.calls).get(key.contract)?.get(key.name) ?? noFrames
}

/** The events or calls of `tx` a reference can mean. */
export const inScope = (
  test: OccurrenceTest,
  tx: Facts.Transaction,
  frame: number | undefined
): ReadonlyArray<Occurrence> => (test.kind === "E" ? tx.events : tx.calls).filter((o) => test.means(o, frame))

export const isEvent = (o: Occurrence): o is Facts.EventOccurrence => "logIndex" in o

/** Where an occurrence stands in its transaction: its log index, or its frame. */
export const position = (o: Occurrence) => (isEvent(o) ? o.logIndex : o.frame)

/** A path into a decoded value, compiled: a member (or `length` of an array), a position, an array index. */
export const accessor = (
  path: ReadonlyArray<Ast.Accessor>
): ((v: Facts.AbiValue | undefined) => Facts.AbiValue | undefined) => {
  const steps = path.map((step): ((v: Facts.AbiValue) => Facts.AbiValue | undefined) => {
    switch (step._tag) {
      case "Index": {
        const i = step.index
        return (v) => (Array.isArray(v) ? (v as ReadonlyArray<Facts.AbiValue>)[i] : undefined)
      }
      case "Position": {
        const i = step.index
        return (v) => (isTuple(v) ? v.values[i] : undefined)
      }
      case "Member": {
        const name = step.name
        let names: ReadonlyArray<string | undefined> = []
        let position = -1
        return (v) => {
          if (isTuple(v)) {
            if (v.names !== names) {
              names = v.names
              position = names.indexOf(name)
            }
            return position === -1 ? undefined : v.values[position]
          }
          return name === "length" && Array.isArray(v) ? BigInt(v.length) : undefined
        }
      }
    }
  })
  if (steps.length === 1) {
    const step = steps[0]!
    return (v) => (v === undefined ? undefined : step(v))
  }
  return (v) => {
    let current = v
    for (const step of steps) {
      if (current === undefined) return undefined
      current = step(current)
    }
    return current
  }
}

const isTuple = (v: Facts.AbiValue): v is Facts.Tuple => typeof v === "object" && (v as Facts.Tuple)._tag === "Tuple"

/**
 * Whether two texts are equal ignoring ASCII case (addresses and bytes are hex), without building lower-case
 * copies; from the end, where hex values of one length (left-padded numbers, addresses) usually differ first.
 */
const equalFolded = (a: string, b: string) => {
  if (a.length !== b.length) return false
  for (let i = a.length - 1; i >= 0; i--) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 65 && x <= 90) x += 32
    if (y >= 65 && y <= 90) y += 32
    if (x !== y) return false
  }
  return true
}

/**
 * A comparison, compiled for its family and operator. Integers compare as integers, booleans by equality, text
 * ignoring case except for `stringCompare` (addresses and bytes usually arrive lower-case already); values of
 * different kinds, and tuples or arrays, never compare.
 */
export const comparison = (
  comparator: Ast.Comparator | "count",
  operator: Ast.Operator
): ((a: Facts.AbiValue, b: Facts.AbiValue) => boolean) => {
  const cased = comparator === "stringCompare"
  const same = (a: Facts.AbiValue, b: Facts.AbiValue) =>
    typeof a === "bigint" || typeof a === "boolean"
      ? a === b
      : typeof a === "string" && typeof b === "string" && (a === b || (!cased && equalFolded(a, b)))
  const text = (f: (x: string, y: string) => boolean) => (a: Facts.AbiValue, b: Facts.AbiValue) =>
    typeof a === "string" && typeof b === "string" && (cased ? f(a, b) : f(a.toLowerCase(), b.toLowerCase()))
  switch (operator) {
    case ">":
      return (a, b) => typeof a === "bigint" && typeof b === "bigint" && a > b
    case ">=":
      return (a, b) => typeof a === "bigint" && typeof b === "bigint" && a >= b
    case "<":
      return (a, b) => typeof a === "bigint" && typeof b === "bigint" && a < b
    case "<=":
      return (a, b) => typeof a === "bigint" && typeof b === "bigint" && a <= b
    case "==":
      return same
    case "!=":
      return (a, b) => typeof a === typeof b && typeof a !== "object" && !same(a, b)
    case "contains":
      return text((x, y) => x.includes(y))
    case "startsWith":
      return text((x, y) => x.startsWith(y))
    case "endsWith":
      return text((x, y) => x.endsWith(y))
  }
}

export const labelled = (facts: Facts.Facts, label: string | undefined, address: Facts.AbiValue | undefined) =>
  label === undefined || label === "*" || (facts.labels.get(label)?.has(String(address ?? "")) ?? false)

const involves = (facts: Facts.Facts, tx: Facts.Transaction, label: string) =>
  labelled(facts, label, tx.fields.to) ||
  tx.calls.some((c) => c.contract === label) ||
  tx.events.some((e) => e.contract === label)

export const frameField = (
  facts: Facts.Facts,
  tx: Facts.Transaction,
  fr: Facts.Frame | "top",
  field: string,
  contract?: string
) => {
  if (fr === "top") {
    if (contract !== undefined && contract !== "*" && !involves(facts, tx, contract)) return undefined
    return field === "riskscore" ? tx.riskscore : tx.fields[field]
  }
  if (!labelled(facts, contract, fr.fields.to)) return undefined
  return field === "riskscore" ? fr.riskscore : fr.fields[field]
}

/** An operand compiled: every value it takes under a binding, and when it takes at most one, that one. */
export interface Operand {
  readonly one?: (env: Env, facts: Facts.Facts) => Facts.AbiValue | undefined
  readonly all: (env: Env, facts: Facts.Facts) => ReadonlyArray<Facts.AbiValue>
}

export const single = (one: (env: Env, facts: Facts.Facts) => Facts.AbiValue | undefined): Operand => ({
  one,
  all: (env, facts) => {
    const x = one(env, facts)
    return x === undefined ? [] : [x]
  }
})
