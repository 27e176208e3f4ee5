/**
 * The syntax tree of a watch rule: what the parser produces, the printer prints and the checker and evaluator read.
 * Positions (`at`: character offset in the source) are kept for errors; they are not part of a rule's meaning, so
 * `strip` drops them.
 */

/** A frame variable: a top-level transaction `txN`, or one of its frames (`txN.itxM`, `txN.itx*`, `txN.any`). */
export interface FrameRef {
  /** N of `txN`, from 1. */
  readonly tx: number
  /** Absent: the top-level frame. A number M: `itxM`. `*`: any internal frame. `any`: the top-level or any internal frame. */
  readonly itx?: number | "*" | "any"
}

/** A function or event by name (with a signature's parameter types when given), `*`, or `fallback`/`receive`. */
export type Selector =
  { readonly _tag: "Named"; readonly name: string; readonly types?: ReadonlyArray<string> } | { readonly _tag: "Any" }

/** An occurrence of an event (`E`) or a function call (`F`) of a contract, in a frame: `tx1.itx1.Pool.F.swap#2`. */
export interface OccurrenceRef {
  readonly frame: FrameRef
  /** A registered contract's label, or `*` (any address; needs full signatures). */
  readonly contract: string
  readonly kind: "E" | "F"
  readonly selector: Selector
  /** `#k`: the k-th distinct occurrence (ordered); absent: any one. */
  readonly occurrence?: number
}

/** One step into a decoded value: a member (or parameter) by name, a position `$i`, an array index `[i]`. */
export type Accessor =
  | { readonly _tag: "Member"; readonly name: string }
  | { readonly _tag: "Position"; readonly index: number }
  | { readonly _tag: "Index"; readonly index: number }

/** A value read from a transaction. */
export type Value =
  /** A decoded argument of an occurrence (`….F.swap.amountIn`), or of a call's return (`….F.quote.return.$0`). */
  | {
      readonly _tag: "Field"
      readonly at: number
      readonly ref: OccurrenceRef
      readonly returned: boolean
      readonly path: ReadonlyArray<Accessor>
    }
  /** Metadata of an occurrence: `….E.Transfer.@address`, `….F.transfer.@from`. */
  | { readonly _tag: "Meta"; readonly at: number; readonly ref: OccurrenceRef; readonly field: string }
  /**
   * A field of a frame (`tx1.from`, `tx1.itx1.value`, `tx1.riskscore`); with `contract`, of a frame that involves
   * that contract (`tx1.WETH.from`).
   */
  | {
      readonly _tag: "FrameField"
      readonly at: number
      readonly frame: FrameRef
      readonly contract?: string
      readonly field: string
    }

/** A literal or a placeholder on the right of a comparison. */
export type Literal =
  | { readonly _tag: "Number"; readonly at: number; readonly value: bigint }
  | { readonly _tag: "Address"; readonly at: number; readonly value: string }
  | { readonly _tag: "Bool"; readonly at: number; readonly value: boolean }
  | { readonly _tag: "String"; readonly at: number; readonly value: string }
  | { readonly _tag: "Bytes"; readonly at: number; readonly value: string }
  | { readonly _tag: "Placeholder"; readonly at: number; readonly name: string }

/** A comparison's right-hand side: a literal, a placeholder or another value. */
export type Operand = Literal | Value

/** The comparison families, each with the operators it takes. */
export const comparators = {
  uintCompare: [">", ">=", "<", "<=", "==", "!="],
  intCompare: [">", ">=", "<", "<=", "==", "!="],
  addressCompare: ["==", "!="],
  boolCompare: ["==", "!="],
  stringCompare: ["==", "!=", "contains", "startsWith", "endsWith"],
  bytesCompare: ["==", "!=", "startsWith"]
} as const

export type Comparator = keyof typeof comparators
export type Operator = (typeof comparators)[Comparator][number]

/** A rule expression. */
export type Expr =
  | { readonly _tag: "Or"; readonly at: number; readonly left: Expr; readonly right: Expr }
  | { readonly _tag: "And"; readonly at: number; readonly left: Expr; readonly right: Expr }
  /** `!E`, also spelt `system.noMatches(E)`. */
  | { readonly _tag: "Not"; readonly at: number; readonly expr: Expr }
  | { readonly _tag: "Constant"; readonly at: number; readonly value: boolean }
  | { readonly _tag: "Emitted"; readonly at: number; readonly ref: OccurrenceRef }
  | { readonly _tag: "Invoked"; readonly at: number; readonly ref: OccurrenceRef }
  | { readonly _tag: "Reentrant"; readonly at: number; readonly ref: OccurrenceRef }
  /** `reverted(CallRef)` or `reverted(FrameRef)`. */
  | { readonly _tag: "Reverted"; readonly at: number; readonly target: OccurrenceRef | FrameRef }
  | { readonly _tag: "Created"; readonly at: number; readonly frame: FrameRef }
  | { readonly _tag: "NativeTransfer"; readonly at: number; readonly frame: FrameRef; readonly contract?: string }
  | { readonly _tag: "InGroup"; readonly at: number; readonly value: Value; readonly group: string }
  | {
      readonly _tag: "Compare"
      readonly at: number
      readonly comparator: Comparator
      readonly left: Value
      readonly operator: Operator
      readonly right: Operand
    }
  | {
      readonly _tag: "Count"
      readonly at: number
      readonly ref: OccurrenceRef
      readonly operator: Operator
      readonly right: Operand
    }
  | {
      readonly _tag: "Sum"
      readonly at: number
      readonly value: Value & { readonly _tag: "Field" }
      readonly operator: Operator
      readonly right: Operand
    }

/** True when `target` of a `Reverted` is an occurrence (not a bare frame). */
export const isOccurrence = (target: OccurrenceRef | FrameRef): target is OccurrenceRef => "kind" in target

/** The fields of a top-level transaction (`tx1.from`). */
export const txFields = [
  "from",
  "to",
  "value",
  "hash",
  "nonce",
  "input",
  "status",
  "gasPrice",
  "gasLimit",
  "gasUsed",
  "maxFeePerGas",
  "maxPriorityFeePerGas",
  "blockNumber",
  "txIndex",
  "timestamp"
] as const

/** The fields of an internal frame (`tx1.itx1.value`). */
export const frameFields = [
  "from",
  "to",
  "value",
  "type",
  "gas",
  "gasUsed",
  "input",
  "output",
  "error",
  "depth",
  "selector"
] as const

/** Every name that may follow a frame as a field (both lists and `riskscore`). */
export const fieldNames: ReadonlySet<string> = new Set<string>([...txFields, ...frameFields, "riskscore"])

/** The metadata of an occurrence, after `.@`. */
export const metaFields = ["address", "logIndex", ...frameFields] as const

/** Words a contract label may not be (they mean something else in a path). */
export const reservedWords: ReadonlySet<string> = new Set([
  "system",
  "any",
  "E",
  "F",
  "true",
  "false",
  "contains",
  "startsWith",
  "endsWith",
  "return",
  ...fieldNames
])

/** True when `word` may be a contract label: an identifier, not reserved, not `txN`/`itxN`. */
export const isLabel = (word: string): boolean =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(word) && !reservedWords.has(word) && !/^i?tx\d+$/.test(word)

/** The expression without positions (bigints as text), for comparing and for golden files. */
export const strip = (e: unknown): unknown =>
  typeof e === "bigint"
    ? `${e}n`
    : Array.isArray(e)
      ? e.map(strip)
      : typeof e === "object" && e !== null
        ? Object.fromEntries(
            Object.entries(e)
              .filter(([k]) => k !== "at")
              .map(([k, v]) => [k, strip(v)])
          )
        : e
