/**
 * Which occurrences (events and calls of registered contracts) rules can read: those their references name, by
 * kind, contract label and name, `*` standing for any label or any name. Decoding only these gives every rule the
 * same answer as decoding everything (a property test holds the evaluator to that): a rule sees an occurrence only
 * through a reference to it, or, for a frame field of a contract (`tx1.WETH.from`), through whether the transaction
 * involves that contract, which any of its occurrences may tell (so such a field reads every one of its label).
 */
import type * as Ast from "./Ast.ts"

/** What some rules read: everything, or the occurrences under these keys (kind, label, name; `*` for any). */
export interface Reads {
  readonly all: boolean
  readonly keys: ReadonlySet<string>
}

/** Everything: what decoding reads when no rules are given. */
export const everything: Reads = { all: true, keys: new Set() }

const keyOf = (kind: "E" | "F", label: string, name: string) => `${kind}\u0000${label}\u0000${name}`

const isReference = (node: object): node is Ast.OccurrenceRef =>
  "kind" in node && (node.kind === "E" || node.kind === "F") && "selector" in node && "contract" in node

/**
 * The keys a rule's tree reads, found by visiting every node (so a construct added to the language is covered by
 * default): a reference reads its kind, label and name; any other node naming a contract (a frame field of a
 * contract) reads every occurrence of that label, except a native transfer's, which reads only addresses (as does a
 * frame field of any contract, `*`).
 */
const collect = (node: unknown, keys: Set<string>): void => {
  if (Array.isArray(node)) {
    for (const child of node) collect(child, keys)
    return
  }
  if (typeof node !== "object" || node === null) return
  if (isReference(node)) {
    keys.add(keyOf(node.kind, node.contract, node.selector._tag === "Any" ? "*" : node.selector.name))
  } else if (
    "contract" in node &&
    typeof node.contract === "string" &&
    node.contract !== "*" &&
    !("_tag" in node && node._tag === "NativeTransfer")
  ) {
    keys.add(keyOf("E", node.contract, "*"))
    keys.add(keyOf("F", node.contract, "*"))
  }
  for (const child of Object.values(node)) collect(child, keys)
}

const known = new WeakMap<Ast.Expr, Reads>()

/** What `rule` reads, worked out once per rule. */
export const of = (rule: Ast.Expr): Reads => {
  let reads = known.get(rule)
  if (reads === undefined) {
    const keys = new Set<string>()
    collect(rule, keys)
    reads = { all: false, keys }
    known.set(rule, reads)
  }
  return reads
}

/** What any of `rules` reads. */
export const union = (rules: Iterable<Reads>): Reads => {
  const keys = new Set<string>()
  for (const r of rules) {
    if (r.all) return everything
    for (const k of r.keys) keys.add(k)
  }
  return { all: false, keys }
}

/** Whether `reads` covers the occurrence of `kind` named `name` of the contract labelled `label`. */
export const covers = (reads: Reads, kind: "E" | "F", label: string, name: string): boolean =>
  reads.all ||
  reads.keys.has(keyOf(kind, label, name)) ||
  reads.keys.has(keyOf(kind, label, "*")) ||
  reads.keys.has(keyOf(kind, "*", name)) ||
  reads.keys.has(keyOf(kind, "*", "*"))
