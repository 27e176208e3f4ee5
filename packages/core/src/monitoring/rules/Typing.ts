/**
 * The typing half of the rule checker: what a rule may name (the contracts of the chain, their events and
 * functions, the fields of transactions and frames), the type of every value it reads, and the literal a
 * `${placeholder}` stands for. Each function reports what is wrong into the `Scope` of the expression being checked
 * and answers undefined, so one pass finds every problem.
 */
import * as AbiModule from "./Abi.ts"
import type * as Ast from "./Ast.ts"
import { frameFields } from "./Ast.ts"
import * as Literals from "./Literals.ts"
import { value as printValue } from "./Printer.ts"
import { type Family, familyComparator, familyOf, frameFieldType, parametersOf, txFieldType } from "./Families.ts"
import { didYouMean } from "./Suggest.ts"

/** A contract registered on the bot's chain, by the label rules use. */
export interface Contract {
  readonly label: string
  readonly address: string
  readonly abi: AbiModule.Abi
}

/** The limits of one rule (FailSafe's for transactions and frames). */
export const limits = { maxTransactions: 3, maxFramesPerTransaction: 3, maxLength: 4_096, maxCalls: 32 } as const

export interface Options {
  readonly contracts: ReadonlyArray<Contract>
  readonly literalDefs?: Literals.Definitions
  /** `simple`: only what a form can build (tx1, events and calls, comparisons, `&&`); default `advanced`. */
  readonly watchRuleType?: "simple" | "advanced"
  /**
   * `options.ruleScope`: every transaction or numbered frame that references `contractName` must (member true) or
   * must not (member false) have its `from` in the address group `groupId`: the top-level sender for a `txN`
   * reference, the calling contract for a `txN.itxM` one.
   */
  readonly ruleScope?: { readonly contractName: string; readonly groupId: string; readonly member: boolean }
  /**
   * Refuse a rule whose transactions (those bound outside negations) are not all joined by equalities between
   * them (`system.addressCompare(tx2.from, ==, tx1.from)`): with nothing joining them, every combination of
   * matching transactions in the window is a match, which grows as the product of their numbers. What a bot
   * asks for when it is created or its rules change.
   */
  readonly requireJoin?: boolean
  /**
   * Refuse what no data of this server feeds yet: `inGroup` and `options.ruleScope` (no address groups are kept, so
   * membership never holds and its negation always does) and `riskscore` (no score is looked up for a transaction,
   * so a comparison of it never holds). A rule using them would be silently wrong; what a bot asks for when it is
   * created or its rules change.
   */
  readonly refuseUnfed?: boolean
}

/** One problem of a rule: where (character offset), what, and names that were probably meant. */
export interface Problem {
  readonly offset: number
  readonly message: string
  readonly candidates: ReadonlyArray<string>
}

/** What checking one expression has found so far: its problems, the frames it uses, what it needs. */
export interface Scope {
  readonly source: string
  readonly options: Options
  readonly byLabel: ReadonlyMap<string, Contract>
  readonly simple: boolean
  readonly problems: Array<Problem>
  /** The numbered frames used, by transaction. */
  readonly frames: Map<number, Set<number>>
  calls: number
  needsTraces: boolean
}

export const begin = (source: string, options: Options): Scope => ({
  source,
  options,
  byLabel: new Map(options.contracts.map((c) => [c.label, c])),
  simple: options.watchRuleType === "simple",
  problems: [],
  frames: new Map(),
  calls: 0,
  needsTraces: false
})

export const problem = (scope: Scope, offset: number, message: string, candidates: ReadonlyArray<string> = []) => {
  scope.problems.push({ offset, message, candidates })
}

/** Reports `what` when the rule is a simple one. */
export const advanced = (scope: Scope, offset: number, what: string) => {
  if (scope.simple)
    problem(
      scope,
      offset,
      `${what} is an advanced construct; a simple rule has tx1, events, calls, comparisons and && only (set watchRuleType to advanced)`
    )
}

/** Records a frame's use against the limits (and that a frame inside a transaction needs traces). */
export const useFrame = (scope: Scope, f: Ast.FrameRef, offset: number) => {
  if (f.tx > limits.maxTransactions)
    problem(
      scope,
      offset,
      `tx${f.tx}: at most ${limits.maxTransactions} transactions (tx1…tx${limits.maxTransactions})`
    )
  const used = scope.frames.get(f.tx) ?? new Set<number>()
  scope.frames.set(f.tx, used)
  if (typeof f.itx === "number") {
    if (f.itx > limits.maxFramesPerTransaction)
      problem(scope, offset, `itx${f.itx}: at most ${limits.maxFramesPerTransaction} internal frames per transaction`)
    used.add(f.itx)
  }
  if (f.itx !== undefined) {
    scope.needsTraces = true
    advanced(scope, offset, `an internal frame (tx${f.tx}.${f.itx === "any" ? "any" : `itx${f.itx}`})`)
  }
  if (f.tx !== 1) advanced(scope, offset, `tx${f.tx}`)
}

/** Where `needle` first stands at or after `offset` in the source, plus `skip`; `offset` when it does not. */
const within = (scope: Scope, offset: number, needle: string, skip: number) => {
  const i = scope.source.indexOf(needle, offset)
  return i === -1 ? offset : i + skip
}

export const contractOf = (scope: Scope, label: string, offset: number): Contract | undefined => {
  const c = scope.byLabel.get(label)
  if (c === undefined) {
    problem(
      scope,
      offset,
      `no contract labelled ${label} on this chain${scope.byLabel.size === 0 ? " (none is registered)" : ""}`,
      didYouMean(label, scope.byLabel.keys())
    )
  }
  return c
}

/** The parameters an occurrence's fields are read from, or undefined after reporting why there are none. */
export const resolve = (
  scope: Scope,
  ref: Ast.OccurrenceRef,
  offset: number,
  returned = false
): ReadonlyArray<AbiModule.Parameter> | undefined => {
  useFrame(scope, ref.frame, offset)
  if (ref.occurrence !== undefined) advanced(scope, offset, `#${ref.occurrence}`)
  const what = ref.kind === "E" ? "event" : "function"
  if (ref.contract === "*") {
    if (ref.selector._tag !== "Named" || ref.selector.types === undefined) {
      problem(
        scope,
        offset,
        `a * contract needs the full ${what} signature, e.g. ${ref.kind === "E" ? "E.Transfer(address,address,uint256)" : "F.transfer(address,uint256)"}`
      )
      return undefined
    }
    if (returned) {
      problem(
        scope,
        offset,
        "a * contract's signature does not give the return types; register the contract to read .return"
      )
      return undefined
    }
    return parametersOf(ref.selector.types)
  }
  const contract = contractOf(scope, ref.contract, within(scope, offset, `.${ref.contract}.${ref.kind}.`, 1))
  if (contract === undefined) return undefined
  if (ref.selector._tag === "Any") return []
  const { name, types } = ref.selector
  // Problems of the name point at it, not at the start of the call.
  offset = within(scope, offset, `.${ref.kind}.${name}`, 3)
  if (ref.kind === "F" && (name === "fallback" || name === "receive") && contract.abi.some((i) => i.type === name)) {
    return []
  }
  const items: ReadonlyArray<AbiModule.FunctionItem | AbiModule.EventItem> =
    ref.kind === "E" ? AbiModule.events(contract.abi) : AbiModule.functions(contract.abi)
  const named = items.filter((i) => i.name === name)
  if (named.length === 0) {
    problem(
      scope,
      offset,
      `${contract.label} has no ${what} ${name}`,
      didYouMean(
        name,
        items.map((i) => i.name)
      )
    )
    return undefined
  }
  const chosen =
    types === undefined ? named : named.filter((i) => AbiModule.signature(i) === `${name}(${types.join(",")})`)
  if (chosen.length === 0) {
    problem(
      scope,
      offset,
      `${contract.label} has no ${what} ${name}(${types!.join(",")})`,
      named.map(AbiModule.signature)
    )
    return undefined
  }
  if (chosen.length > 1) {
    problem(
      scope,
      offset,
      `${contract.label}.${ref.kind}.${name} is overloaded: give its signature`,
      chosen.map(AbiModule.signature)
    )
    return undefined
  }
  const item = chosen[0]!
  if (returned) return item.type === "function" ? (item.outputs ?? []) : []
  return item.inputs
}

/** The type of a value, or undefined after reporting why it has none. */
export const typeOf = (scope: Scope, v: Ast.Value): AbiModule.Parameter | undefined => {
  switch (v._tag) {
    case "FrameField": {
      useFrame(scope, v.frame, v.at)
      if (v.contract !== undefined && v.contract !== "*") contractOf(scope, v.contract, v.at)
      const table: Record<string, string> = v.frame.itx === undefined ? txFieldType : frameFieldType
      const type = table[v.field]
      if (type === undefined) {
        problem(
          scope,
          v.at,
          `${v.field} is not a field of ${v.frame.itx === undefined ? "a transaction" : "an internal frame"}`,
          didYouMean(v.field, Object.keys(table))
        )
        return undefined
      }
      if (v.field === "riskscore") advanced(scope, v.at, "riskscore")
      return { type }
    }
    case "Meta": {
      if (resolve(scope, v.ref, v.at) === undefined) return undefined
      if (v.ref.kind === "E") {
        if (v.field === "address") return { type: "address" }
        if (v.field === "logIndex") return { type: "uint32" }
        problem(scope, v.at, `@${v.field} is not metadata of an event (@address, @logIndex)`, ["@address", "@logIndex"])
        return undefined
      }
      const type = (frameFieldType as Record<string, string>)[v.field]
      if (type === undefined || v.field === "riskscore") {
        problem(
          scope,
          v.at,
          `@${v.field} is not metadata of a call`,
          frameFields.map((f) => `@${f}`)
        )
        return undefined
      }
      return { type }
    }
    case "Field": {
      if (v.returned) scope.needsTraces = true
      const params = resolve(scope, v.ref, v.at, v.returned)
      if (params === undefined) return undefined
      if (v.ref.selector._tag === "Any" && v.ref.contract !== "*") {
        problem(scope, v.at, "a parameter of any event or function (*) has no type; name the event or function")
        return undefined
      }
      let current: AbiModule.Parameter | undefined
      let level: ReadonlyArray<AbiModule.Parameter> = params
      for (const step of v.path) {
        if (current !== undefined && /\[[0-9]*\]$/.test(current.type)) {
          const element = { ...current, type: current.type.replace(/\[[0-9]*\]$/, "") }
          if (step._tag === "Index") {
            current = element
            level = element.components ?? []
            continue
          }
          if (step._tag === "Member" && step.name === "length") {
            current = { type: "uint256" }
            level = []
            continue
          }
          problem(
            scope,
            v.at,
            `${current.name ?? "the value"} is an array (${AbiModule.canonicalType(current)}): index it with [i] or read .length`
          )
          return undefined
        }
        if (current !== undefined && !current.type.startsWith("tuple")) {
          problem(scope, v.at, `${current.name ?? "the value"} is a ${current.type}, with nothing inside to read`)
          return undefined
        }
        if (step._tag === "Index") {
          problem(scope, v.at, `[${step.index}] indexes an array, and this is not one`)
          return undefined
        }
        const next = step._tag === "Position" ? level[step.index] : level.find((p) => p.name === step.name)
        if (next === undefined) {
          problem(
            scope,
            v.at,
            step._tag === "Position"
              ? `there is no position $${step.index} (${level.length} ${level.length === 1 ? "value" : "values"})`
              : `no parameter or member ${step.name}`,
            step._tag === "Member"
              ? didYouMean(
                  step.name,
                  level.flatMap((p) => (p.name ? [p.name] : []))
                )
              : []
          )
          return undefined
        }
        current = next
        level = next.components ?? []
      }
      return current
    }
  }
}

/** The operand with its placeholder substituted by the literal the comparison needs, or undefined. */
export const operand = (scope: Scope, o: Ast.Operand, family: Family, comparator: string): Ast.Operand | undefined => {
  if (o._tag === "Placeholder") {
    const d = scope.options.literalDefs?.get(o.name)
    if (d === undefined) {
      problem(
        scope,
        o.at,
        `\${${o.name}} is not defined in options.literalDefs`,
        didYouMean(o.name, scope.options.literalDefs?.keys() ?? [])
      )
      return undefined
    }
    const wrong = (what: string) => {
      problem(scope, o.at, `\${${o.name}} is ${what}, not what ${comparator} compares (${family})`)
      return undefined
    }
    switch (family) {
      case "uint":
      case "int": {
        const value = Literals.asInteger(d, family === "int")
        return typeof value === "string" ? wrong(value) : { _tag: "Number", at: o.at, value }
      }
      case "address":
        return d._tag === "Text" && /^0[xX][0-9a-fA-F]{40}$/.test(d.value)
          ? { _tag: "Address", at: o.at, value: `0x${d.value.slice(2).toLowerCase()}` }
          : wrong("not an address")
      case "bool":
        return d._tag === "Bool" ? { _tag: "Bool", at: o.at, value: d.value } : wrong("not a boolean")
      case "string":
        return d._tag === "Text" ? { _tag: "String", at: o.at, value: d.value } : wrong("not a string")
      case "bytes":
        return d._tag === "Text" && /^0[xX]([0-9a-fA-F]{2})*$/.test(d.value)
          ? { _tag: "Bytes", at: o.at, value: `0x${d.value.slice(2).toLowerCase()}` }
          : wrong("not hex bytes")
    }
  }
  if (o._tag === "Number" || o._tag === "Address" || o._tag === "Bool" || o._tag === "String" || o._tag === "Bytes")
    return o
  const type = typeOf(scope, o)
  if (type === undefined) return undefined
  const other = familyOf(type.type)
  if (other !== family) {
    problem(
      scope,
      o.at,
      `${printValue(o)} is ${AbiModule.canonicalType(type)}, not comparable by ${comparator}`,
      other === undefined ? [] : [familyComparator(other)]
    )
    return undefined
  }
  return o
}
