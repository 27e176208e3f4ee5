/**
 * The watch-rule checker, run when a bot is created or updated: it types every path against the ABIs of the
 * contracts registered on the bot's chain, substitutes `${placeholders}` from `literalDefs`, enforces the limits
 * and what a `simple` rule may use, and reports every problem with its character offset, a message and "did you
 * mean" candidates. A rule that passes is one the evaluator can run without a runtime type error.
 */
import * as AbiModule from "./Abi.ts"
import type * as Ast from "./Ast.ts"
import { comparators, frameFields, isOccurrence, type txFields } from "./Ast.ts"
import * as Literals from "./Literals.ts"
import { parse } from "./Parser.ts"
import { print, value as printValue } from "./Printer.ts"
import { plan } from "./Semantics.ts"

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
}

/** One problem of a rule: where (character offset), what, and names that were probably meant. */
export interface Problem {
  readonly offset: number
  readonly message: string
  readonly candidates: ReadonlyArray<string>
}

/**
 * A rule that checked: its tree with placeholders substituted and `ruleScope` applied (what is evaluated), the
 * normal form of the expression as written, and what evaluating it needs.
 */
export interface Checked {
  readonly expr: Ast.Expr
  readonly normal: string
  /** Internal frames, call outputs or reentrancy: the chain's RPC must offer `debug_traceBlockByNumber`. */
  readonly needsTraces: boolean
  /** The highest `txN` used: 1 for a single-transaction rule. */
  readonly transactions: number
}

/** The frames (txN or txN.itxM) whose references name `label`, for `ruleScope`. */
const framesNaming = (e: Ast.Expr, label: string): ReadonlyArray<Ast.FrameRef> => {
  const found = new Map<string, Ast.FrameRef>()
  const add = (f: Ast.FrameRef, contract: string | undefined) => {
    if (contract === label && (f.itx === undefined || typeof f.itx === "number")) found.set(`${f.tx}.${f.itx ?? ""}`, f)
  }
  const value = (v: Ast.Operand) => {
    if (v._tag === "Field" || v._tag === "Meta") add(v.ref.frame, v.ref.contract)
    else if (v._tag === "FrameField") add(v.frame, v.contract)
  }
  const walk = (x: Ast.Expr): void => {
    switch (x._tag) {
      case "Or":
      case "And":
        walk(x.left)
        walk(x.right)
        return
      case "Not":
        walk(x.expr)
        return
      case "Emitted":
      case "Invoked":
      case "Reentrant":
        add(x.ref.frame, x.ref.contract)
        return
      case "Count":
        add(x.ref.frame, x.ref.contract)
        value(x.right)
        return
      case "Reverted":
        if (isOccurrence(x.target)) add(x.target.frame, x.target.contract)
        return
      case "NativeTransfer":
        add(x.frame, x.contract)
        return
      case "InGroup":
        value(x.value)
        return
      case "Compare":
        value(x.left)
        value(x.right)
        return
      case "Sum":
        value(x.value)
        value(x.right)
        return
      default:
        return
    }
  }
  walk(e)
  return [...found.values()]
}

export type Result =
  { readonly ok: true; readonly rule: Checked } | { readonly ok: false; readonly problems: ReadonlyArray<Problem> }

type Family = "uint" | "int" | "address" | "bool" | "string" | "bytes"

const familyOf = (type: string): Family | undefined =>
  /^uint\d*$/.test(type)
    ? "uint"
    : /^int\d*$/.test(type)
      ? "int"
      : type === "address"
        ? "address"
        : type === "bool"
          ? "bool"
          : type === "string"
            ? "string"
            : /^bytes\d*$/.test(type)
              ? "bytes"
              : undefined

const comparatorFamily: { readonly [C in Ast.Comparator]: Family } = {
  uintCompare: "uint",
  intCompare: "int",
  addressCompare: "address",
  boolCompare: "bool",
  stringCompare: "string",
  bytesCompare: "bytes"
}

const familyComparator = (family: Family): Ast.Comparator =>
  (Object.keys(comparatorFamily) as Array<Ast.Comparator>).find((c) => comparatorFamily[c] === family)!

/** The ABI types of the fields of a top-level transaction and of a frame. */
const txFieldType: { readonly [F in (typeof txFields)[number] | "riskscore"]: string } = {
  from: "address",
  to: "address",
  value: "uint256",
  hash: "bytes32",
  nonce: "uint64",
  input: "bytes",
  status: "bool",
  gasPrice: "uint256",
  gasLimit: "uint64",
  gasUsed: "uint64",
  maxFeePerGas: "uint256",
  maxPriorityFeePerGas: "uint256",
  blockNumber: "uint64",
  txIndex: "uint32",
  timestamp: "uint64",
  riskscore: "uint8"
}
const frameFieldType: { readonly [F in (typeof frameFields)[number] | "riskscore"]: string } = {
  from: "address",
  to: "address",
  value: "uint256",
  type: "string",
  gas: "uint64",
  gasUsed: "uint64",
  input: "bytes",
  output: "bytes",
  error: "string",
  depth: "uint32",
  selector: "bytes4",
  riskscore: "uint8"
}

/** Names close to `name` among `names`: the same but for case, one the prefix of the other, or a few edits apart. */
export const didYouMean = (name: string, names: Iterable<string>): ReadonlyArray<string> => {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i)
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]!
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const kept = row[j]!
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
        previous = kept
      }
    }
    return row[b.length]!
  }
  const limit = Math.max(2, Math.floor(name.length / 3))
  return [...new Set(names)]
    .map((n) => {
      const a = n.toLowerCase()
      const b = name.toLowerCase()
      return { n, d: a === b ? 0 : a.startsWith(b) || b.startsWith(a) ? 1 : distance(name, n) }
    })
    .filter((c) => c.d <= limit)
    .sort((a, b) => a.d - b.d || (a.n < b.n ? -1 : 1))
    .slice(0, 3)
    .map((c) => c.n)
}

/** A parameter list read from type texts (a `*` contract's signature): positions only, no names. */
const parametersOf = (types: ReadonlyArray<string>): ReadonlyArray<AbiModule.Parameter> => {
  const one = (text: string): AbiModule.Parameter => {
    if (!text.startsWith("(")) return { type: text }
    let depth = 0
    let end = 0
    for (let i = 0; i < text.length; i++) {
      if (text[i] === "(") depth++
      else if (text[i] === ")" && --depth === 0) {
        end = i
        break
      }
    }
    const inner: Array<string> = []
    let start = 1
    depth = 0
    for (let i = 1; i < end; i++) {
      if (text[i] === "(") depth++
      else if (text[i] === ")") depth--
      else if (text[i] === "," && depth === 0) {
        inner.push(text.slice(start, i))
        start = i + 1
      }
    }
    if (end > 1) inner.push(text.slice(start, end))
    return { type: `tuple${text.slice(end + 1)}`, components: inner.map(one) }
  }
  return types.map(one)
}

/** The transaction a value is read from. */
const txOfValue = (v: Ast.Operand): number | undefined =>
  v._tag === "Field" || v._tag === "Meta" ? v.ref.frame.tx : v._tag === "FrameField" ? v.frame.tx : undefined

/**
 * The pairs of transactions an expression certainly joins by an equality between them, as `a-b` (a < b): from
 * `==` comparisons of values of two transactions, through `&&`, and through `||` only when both sides join them.
 */
const joins = (e: Ast.Expr): ReadonlySet<string> => {
  switch (e._tag) {
    case "And":
      return new Set([...joins(e.left), ...joins(e.right)])
    case "Or": {
      const right = joins(e.right)
      return new Set([...joins(e.left)].filter((j) => right.has(j)))
    }
    case "Compare": {
      const [a, b] = [txOfValue(e.left), txOfValue(e.right)]
      return e.operator === "==" && a !== undefined && b !== undefined && a !== b
        ? new Set([`${Math.min(a, b)}-${Math.max(a, b)}`])
        : new Set()
    }
    default:
      return new Set()
  }
}

/** The positively bound transactions `expr` leaves unjoined to the first of them (`txs[0]`), if any. */
const unjoined = (expr: Ast.Expr): { readonly first: number; readonly loose: ReadonlyArray<number> } => {
  // The rule's variables outside every negation, as the evaluator binds them.
  const txs = plan(expr)
    .globals.filter((v) => v.kind === "tx")
    .map((v) => v.tx)
    .sort((a, b) => a - b)
  if (txs.length < 2) return { first: txs[0] ?? 1, loose: [] }
  const pairs = [...joins(expr)].map((j) => j.split("-").map(Number) as [number, number])
  const reached = new Set([txs[0]!])
  for (let grew = true; grew;) {
    grew = false
    for (const [a, b] of pairs)
      if (reached.has(a) !== reached.has(b)) {
        reached.add(a)
        reached.add(b)
        grew = true
      }
  }
  return { first: txs[0]!, loose: txs.filter((t) => !reached.has(t)) }
}

/** True when some `txN` occurs outside every negation (a match needs a transaction to be about). */
const bindsOutsideNegation = (e: Ast.Expr): boolean => {
  switch (e._tag) {
    case "Or":
    case "And":
      return bindsOutsideNegation(e.left) || bindsOutsideNegation(e.right)
    case "Not":
    case "Constant":
      return false
    default:
      return true
  }
}

/** A problem of one of a rule's expressions: which (0-based), where in it, what. */
export interface RuleProblem extends Problem {
  readonly expression: number
}

export type RuleResult =
  { readonly ok: true; readonly rule: Checked } | { readonly ok: false; readonly problems: ReadonlyArray<RuleProblem> }

/** Checks one expression's source against `options`: a rule of that one expression. */
export const check = (source: string, options: Options): Result => {
  const result = checkRule([source], options)
  return result.ok ? result : { ok: false, problems: result.problems.map(({ expression: _, ...p }) => p) }
}

/**
 * Checks the expressions of one bot as one rule: they are AND-ed (as FailSafe documents, "equivalent to using the
 * && operator"), so `tx1` in one is `tx1` in every other. Each expression is parsed and typed on its own (its
 * problems are positioned in its own text); `options.ruleScope`, the limits of the whole and the negation check
 * apply to the conjunction.
 */
export const checkRule = (sources: ReadonlyArray<string>, options: Options): RuleResult => {
  const problems: Array<RuleProblem> = []
  const parts: Array<Checked> = []
  for (const [expression, source] of sources.entries()) {
    const result = checkPart(source, options)
    if (result.ok) parts.push(result.rule)
    else problems.push(...result.problems.map((p) => ({ expression, ...p })))
  }
  if (problems.length > 0 || parts.length === 0) return { ok: false, problems }
  const byLabel = new Map(options.contracts.map((c) => [c.label, c]))
  const problem = (message: string, candidates: ReadonlyArray<string> = []) => {
    problems.push({ expression: 0, offset: 0, message, candidates })
  }
  let expr = parts.map((p) => p.expr).reduce((left, right): Ast.Expr => ({ _tag: "And", at: 0, left, right }))
  const normal = parts.length === 1 ? parts[0]!.normal : print(expr)
  const scope = options.ruleScope
  if (scope !== undefined) {
    if (!byLabel.has(scope.contractName)) {
      problem(
        `options.ruleScope.contractName ${scope.contractName} is not a contract on this chain`,
        didYouMean(scope.contractName, byLabel.keys())
      )
    } else {
      const frames = framesNaming(expr, scope.contractName)
      if (frames.length === 0)
        problem(
          `options.ruleScope names ${scope.contractName}, which no transaction or numbered frame of the rule references`
        )
      for (const frame of frames) {
        const inGroup: Ast.Expr = {
          _tag: "InGroup",
          at: 0,
          value: { _tag: "FrameField", at: 0, frame, field: "from" },
          group: scope.groupId
        }
        expr = { _tag: "And", at: 0, left: expr, right: scope.member ? inGroup : { _tag: "Not", at: 0, expr: inGroup } }
      }
    }
  }
  const { first, loose } =
    options.requireJoin === true && problems.length === 0 ? unjoined(expr) : { first: 1, loose: [] }
  if (loose.length > 0) {
    const names = loose.map((t) => `tx${t}`).join(", ")
    problem(
      `${names} ${loose.length === 1 ? "is" : "are"} not joined to tx${first} by any equality: every combination of matching transactions in the window would be a match (it grows as their product); join them on a field, e.g. system.addressCompare(tx${loose[0]}.from, ==, tx${first}.from), or watch one transaction`
    )
  }
  if (problems.length === 0 && !bindsOutsideNegation(expr)) {
    problem(
      sources.length === 1
        ? "every transaction of this rule is inside a negation: it says what must not happen, but not about which transaction, so it could never match"
        : "every transaction of these expressions is inside a negation: together they say what must not happen, but not about which transaction, so they could never match"
    )
  }
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    rule: {
      expr,
      normal,
      needsTraces: parts.some((p) => p.needsTraces),
      transactions: Math.max(...parts.map((p) => p.transactions))
    }
  }
}

/** Checks one expression's text on its own: syntax, types, literals and per-expression limits. */
const checkPart = (source: string, options: Options): Result => {
  if (source.length > limits.maxLength) {
    return {
      ok: false,
      problems: [{ offset: limits.maxLength, message: `longer than ${limits.maxLength} characters`, candidates: [] }]
    }
  }
  const parsed = parse(source)
  if (!parsed.ok) {
    return {
      ok: false,
      problems: [{ offset: parsed.error.offset, message: parsed.error.message, candidates: [...parsed.error.expected] }]
    }
  }
  const problems: Array<Problem> = []
  const problem = (offset: number, message: string, candidates: ReadonlyArray<string> = []) => {
    problems.push({ offset, message, candidates })
  }
  const byLabel = new Map(options.contracts.map((c) => [c.label, c]))
  const simple = options.watchRuleType === "simple"
  let calls = 0
  let needsTraces = false
  const frames = new Map<number, Set<number>>()

  const advanced = (offset: number, what: string) => {
    if (simple)
      problem(
        offset,
        `${what} is an advanced construct; a simple rule has tx1, events, calls, comparisons and && only (set watchRuleType to advanced)`
      )
  }
  const useFrame = (f: Ast.FrameRef, offset: number) => {
    if (f.tx > limits.maxTransactions)
      problem(offset, `tx${f.tx}: at most ${limits.maxTransactions} transactions (tx1…tx${limits.maxTransactions})`)
    const used = frames.get(f.tx) ?? new Set<number>()
    frames.set(f.tx, used)
    if (typeof f.itx === "number") {
      if (f.itx > limits.maxFramesPerTransaction)
        problem(offset, `itx${f.itx}: at most ${limits.maxFramesPerTransaction} internal frames per transaction`)
      used.add(f.itx)
    }
    if (f.itx !== undefined) {
      needsTraces = true
      advanced(offset, `an internal frame (tx${f.tx}.${f.itx === "any" ? "any" : `itx${f.itx}`})`)
    }
    if (f.tx !== 1) advanced(offset, `tx${f.tx}`)
  }
  /** Where `needle` first stands at or after `offset` in the source, plus `skip`; `offset` when it does not. */
  const within = (offset: number, needle: string, skip: number) => {
    const i = source.indexOf(needle, offset)
    return i === -1 ? offset : i + skip
  }
  const contractOf = (label: string, offset: number): Contract | undefined => {
    const c = byLabel.get(label)
    if (c === undefined) {
      problem(
        offset,
        `no contract labelled ${label} on this chain${byLabel.size === 0 ? " (none is registered)" : ""}`,
        didYouMean(label, byLabel.keys())
      )
    }
    return c
  }

  /** The parameters an occurrence's fields are read from, or undefined after reporting why there are none. */
  const resolve = (
    ref: Ast.OccurrenceRef,
    offset: number,
    returned = false
  ): ReadonlyArray<AbiModule.Parameter> | undefined => {
    useFrame(ref.frame, offset)
    if (ref.occurrence !== undefined) advanced(offset, `#${ref.occurrence}`)
    const what = ref.kind === "E" ? "event" : "function"
    if (ref.contract === "*") {
      if (ref.selector._tag !== "Named" || ref.selector.types === undefined) {
        problem(
          offset,
          `a * contract needs the full ${what} signature, e.g. ${ref.kind === "E" ? "E.Transfer(address,address,uint256)" : "F.transfer(address,uint256)"}`
        )
        return undefined
      }
      if (returned) {
        problem(
          offset,
          "a * contract's signature does not give the return types; register the contract to read .return"
        )
        return undefined
      }
      return parametersOf(ref.selector.types)
    }
    const contract = contractOf(ref.contract, within(offset, `.${ref.contract}.${ref.kind}.`, 1))
    if (contract === undefined) return undefined
    if (ref.selector._tag === "Any") return []
    const { name, types } = ref.selector
    // Problems of the name point at it, not at the start of the call.
    offset = within(offset, `.${ref.kind}.${name}`, 3)
    if (ref.kind === "F" && (name === "fallback" || name === "receive") && contract.abi.some((i) => i.type === name)) {
      return []
    }
    const items: ReadonlyArray<AbiModule.FunctionItem | AbiModule.EventItem> =
      ref.kind === "E" ? AbiModule.events(contract.abi) : AbiModule.functions(contract.abi)
    const named = items.filter((i) => i.name === name)
    if (named.length === 0) {
      problem(
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
      problem(offset, `${contract.label} has no ${what} ${name}(${types!.join(",")})`, named.map(AbiModule.signature))
      return undefined
    }
    if (chosen.length > 1) {
      problem(
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
  const typeOf = (v: Ast.Value): AbiModule.Parameter | undefined => {
    switch (v._tag) {
      case "FrameField": {
        useFrame(v.frame, v.at)
        if (v.contract !== undefined && v.contract !== "*") contractOf(v.contract, v.at)
        const table: Record<string, string> = v.frame.itx === undefined ? txFieldType : frameFieldType
        const type = table[v.field]
        if (type === undefined) {
          problem(
            v.at,
            `${v.field} is not a field of ${v.frame.itx === undefined ? "a transaction" : "an internal frame"}`,
            didYouMean(v.field, Object.keys(table))
          )
          return undefined
        }
        if (v.field === "riskscore") advanced(v.at, "riskscore")
        return { type }
      }
      case "Meta": {
        if (resolve(v.ref, v.at) === undefined) return undefined
        if (v.ref.kind === "E") {
          if (v.field === "address") return { type: "address" }
          if (v.field === "logIndex") return { type: "uint32" }
          problem(v.at, `@${v.field} is not metadata of an event (@address, @logIndex)`, ["@address", "@logIndex"])
          return undefined
        }
        const type = (frameFieldType as Record<string, string>)[v.field]
        if (type === undefined || v.field === "riskscore") {
          problem(
            v.at,
            `@${v.field} is not metadata of a call`,
            frameFields.map((f) => `@${f}`)
          )
          return undefined
        }
        return { type }
      }
      case "Field": {
        if (v.returned) needsTraces = true
        const params = resolve(v.ref, v.at, v.returned)
        if (params === undefined) return undefined
        if (v.ref.selector._tag === "Any" && v.ref.contract !== "*") {
          problem(v.at, "a parameter of any event or function (*) has no type; name the event or function")
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
              v.at,
              `${current.name ?? "the value"} is an array (${AbiModule.canonicalType(current)}): index it with [i] or read .length`
            )
            return undefined
          }
          if (current !== undefined && !current.type.startsWith("tuple")) {
            problem(v.at, `${current.name ?? "the value"} is a ${current.type}, with nothing inside to read`)
            return undefined
          }
          if (step._tag === "Index") {
            problem(v.at, `[${step.index}] indexes an array, and this is not one`)
            return undefined
          }
          const next = step._tag === "Position" ? level[step.index] : level.find((p) => p.name === step.name)
          if (next === undefined) {
            problem(
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
  const operand = (o: Ast.Operand, family: Family, comparator: string): Ast.Operand | undefined => {
    if (o._tag === "Placeholder") {
      const d = options.literalDefs?.get(o.name)
      if (d === undefined) {
        problem(
          o.at,
          `\${${o.name}} is not defined in options.literalDefs`,
          didYouMean(o.name, options.literalDefs?.keys() ?? [])
        )
        return undefined
      }
      const wrong = (what: string) => {
        problem(o.at, `\${${o.name}} is ${what}, not what ${comparator} compares (${family})`)
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
    const type = typeOf(o)
    if (type === undefined) return undefined
    const other = familyOf(type.type)
    if (other !== family) {
      problem(
        o.at,
        `${printValue(o)} is ${AbiModule.canonicalType(type)}, not comparable by ${comparator}`,
        other === undefined ? [] : [familyComparator(other)]
      )
      return undefined
    }
    return o
  }

  const visit = (e: Ast.Expr): Ast.Expr => {
    switch (e._tag) {
      case "Or":
        advanced(e.at, "||")
        return { ...e, left: visit(e.left), right: visit(e.right) }
      case "And":
        return { ...e, left: visit(e.left), right: visit(e.right) }
      case "Not":
        advanced(e.at, "negation (! or noMatches)")
        return { ...e, expr: visit(e.expr) }
      case "Constant":
        advanced(e.at, String(e.value))
        return e
    }
    if (++calls === limits.maxCalls + 1) problem(e.at, `more than ${limits.maxCalls} calls in one expression`)
    switch (e._tag) {
      case "Emitted":
      case "Invoked":
        resolve(e.ref, e.at)
        return e
      case "Reentrant":
        advanced(e.at, "reentrant")
        needsTraces = true
        resolve(e.ref, e.at)
        return e
      case "Reverted":
        advanced(e.at, "reverted")
        if (isOccurrence(e.target)) resolve(e.target, e.at)
        else useFrame(e.target, e.at)
        return e
      case "Created":
        advanced(e.at, "created")
        useFrame(e.frame, e.at)
        return e
      case "NativeTransfer":
        advanced(e.at, "nativeTransfer")
        useFrame(e.frame, e.at)
        if (e.contract !== undefined && e.contract !== "*") contractOf(e.contract, e.at)
        return e
      case "InGroup": {
        advanced(e.at, "inGroup")
        const type = typeOf(e.value)
        if (type !== undefined && familyOf(type.type) !== "address")
          problem(e.value.at, `inGroup takes an address, not ${type.type}`)
        return e
      }
      case "Count": {
        advanced(e.at, "countCompare")
        resolve(e.ref, e.at)
        const right = operand(e.right, "uint", "countCompare")
        return right === undefined ? e : { ...e, right }
      }
      case "Sum": {
        advanced(e.at, "sumCompare")
        const type = typeOf(e.value)
        if (type !== undefined && familyOf(type.type) !== "uint")
          problem(e.value.at, `sumCompare adds unsigned integers, not ${type.type}`)
        const right = operand(e.right, "uint", "sumCompare")
        return right === undefined ? e : { ...e, right }
      }
      case "Compare": {
        const family = comparatorFamily[e.comparator]
        const type = typeOf(e.left)
        if (type !== undefined) {
          const actual = familyOf(type.type)
          if (actual !== family) {
            problem(
              e.left.at,
              `${e.comparator} compares ${family} values; this is ${AbiModule.canonicalType(type)}`,
              actual === undefined ? [] : [familyComparator(actual)]
            )
          }
        }
        if (!(comparators[e.comparator] as ReadonlyArray<string>).includes(e.operator))
          problem(e.at, `${e.comparator} does not take ${e.operator}`)
        const right = operand(e.right, family, e.comparator)
        return right === undefined ? e : { ...e, right }
      }
    }
  }

  const expr = visit(parsed.expr)
  const normal = print(expr)
  for (const [tx, used] of frames) {
    if (used.size > limits.maxFramesPerTransaction)
      problem(0, `tx${tx} uses more than ${limits.maxFramesPerTransaction} internal frames`)
  }
  if (problems.length > 0) return { ok: false, problems: problems.sort((a, b) => a.offset - b.offset) }
  return {
    ok: true,
    rule: { expr, normal, needsTraces, transactions: Math.max(1, ...frames.keys()) }
  }
}
