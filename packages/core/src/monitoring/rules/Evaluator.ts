/**
 * The watch-rule evaluator: which transactions (and frames and occurrences) make a checked rule true.
 *
 * Semantics (research §5.4). A rule's variables are its transactions `txN`, numbered frames `txN.itxM` and
 * occurrences (references that share frame, contract, E|F, name and `#k` denote one event or call). Each variable
 * is bound to a candidate or left unbound; an atom that needs an unbound variable is false. Transactions bind in
 * increasing chain order with N, within `blockRange` blocks; frames of one transaction in increasing execution
 * order with M; `#k` occurrences in increasing order with k. A variable that occurs only inside a negation belongs
 * to the innermost negation holding all its uses, which reads "there is no binding of it that makes this true"
 * (correlated with everything bound outside). References through `itx*` or `any` are fresh: the atom holds if
 * some frame or occurrence makes it hold. The rule matches for every binding of its transactions outside
 * negations, the lowest of them always bound, under which some binding of the rest makes it true.
 *
 * Two searches share these definitions: `evaluate` (domains built from the constraints, conjuncts checked as
 * soon as their variables are bound) and `evaluateReference` (every assignment of every variable enumerated and
 * tested), which a differential test holds the first to.
 */
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"
import type * as Facts from "./Facts.ts"
import { occurrence as printOccurrence, print as printRule } from "./Printer.ts"

/** The key of an occurrence reference (its printed form), computed once per reference. */
const keys = new WeakMap<Ast.OccurrenceRef, string>()
const occurrenceKey = (ref: Ast.OccurrenceRef): string => {
  let key = keys.get(ref)
  if (key === undefined) {
    key = printOccurrence(ref)
    keys.set(ref, key)
  }
  return key
}

/** A match: the position (in `facts.transactions`) bound to each transaction variable outside negations. */
export interface Match {
  readonly transactions: Readonly<Record<string, number>>
  /** What made the rule true: one satisfying binding of everything outside negations, and the terms that held. */
  readonly evidence: Evidence
  /**
   * A negation that looks forward (it holds a `txN` after every bound one) cannot be decided until the block
   * range past the last bound transaction has been seen (`facts.head`): until then the match is pending.
   */
  readonly pending: boolean
}

/** A decoded value as JSON: integers as decimal strings. */
export type Json = string | boolean | ReadonlyArray<Json> | { readonly [name: string]: Json }

/** The evidence of a match, ready to be stored and shown. */
export interface Evidence {
  readonly transactions: Readonly<
    Record<string, { readonly hash: string; readonly blockNumber: number; readonly txIndex: number }>
  >
  readonly frames: Readonly<
    Record<string, { readonly index: number; readonly from?: Json; readonly to?: Json; readonly type?: Json }>
  >
  readonly occurrences: Readonly<
    Record<
      string,
      {
        readonly contract: string
        readonly name: string
        readonly signature: string
        readonly args: Json
        readonly logIndex?: number
        readonly frame?: number
        readonly reverted?: boolean
      }
    >
  >
  /** The terms (calls of the rule, in its normal form) that were true under this binding. */
  readonly held: ReadonlyArray<string>
}

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

interface Var {
  readonly key: string
  readonly kind: "tx" | "itx" | "occ"
  readonly tx: number
  readonly itx?: number
  readonly ref?: Ast.OccurrenceRef
  /** For `#k` occurrences: the key without `#k`, and k. */
  readonly base?: string
  readonly k?: number
}

type Env = ReadonlyMap<string, number | null>

// Variable keys, made once (they are looked up for every binding tried).
const txKeys: Array<string> = []
const txKey = (tx: number) => (txKeys[tx] ??= `tx${tx}`)
const itxKeys = new Map<number, string>()
const itxKey = (tx: number, itx: number) => {
  const id = tx * 1_000 + itx
  let key = itxKeys.get(id)
  if (key === undefined) {
    key = `tx${tx}.itx${itx}`
    itxKeys.set(id, key)
  }
  return key
}
const isFresh = (f: Ast.FrameRef) => f.itx === "*" || f.itx === "any"

/** The reference without its `#k`: every occurrence it may mean. */
const anyOccurrence = ({ occurrence: _, ...rest }: Ast.OccurrenceRef): Ast.OccurrenceRef => rest

/** The variables of a rule, and for each negation the variables local to it. */
interface Plan {
  readonly vars: ReadonlyMap<string, Var>
  readonly locals: ReadonlyMap<Ast.Expr, ReadonlyArray<Var>>
  readonly globals: ReadonlyArray<Var>
}

/**
 * The order variables are bound in: by transaction, and within one its transaction variable, then its frames,
 * then its occurrences (each depends on what comes before it), so a transaction without what the rule needs of
 * it is given up before later transactions are tried.
 */
const kindRank = { tx: 0, itx: 1, occ: 2 } as const
const order = (vars: Iterable<Var>): ReadonlyArray<Var> =>
  [...vars].sort(
    (a, b) =>
      a.tx - b.tx ||
      kindRank[a.kind] - kindRank[b.kind] ||
      (a.itx ?? 0) - (b.itx ?? 0) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  )

/** Plans, kept per rule tree (a checked rule is evaluated again and again). */
const plans = new WeakMap<Ast.Expr, Plan>()
const plan = (rule: Ast.Expr): Plan => {
  const known = plans.get(rule)
  if (known !== undefined) return known
  const made = makePlan(rule)
  plans.set(rule, made)
  return made
}

const makePlan = (rule: Ast.Expr): Plan => {
  const vars = new Map<string, Var>()
  const uses = new Map<string, Array<ReadonlyArray<Ast.Expr>>>()
  const use = (v: Var, stack: ReadonlyArray<Ast.Expr>) => {
    vars.set(v.key, v)
    const list = uses.get(v.key) ?? []
    list.push(stack)
    uses.set(v.key, list)
  }
  const frame = (f: Ast.FrameRef, stack: ReadonlyArray<Ast.Expr>) => {
    use({ key: txKey(f.tx), kind: "tx", tx: f.tx }, stack)
    if (typeof f.itx === "number") use({ key: itxKey(f.tx, f.itx), kind: "itx", tx: f.tx, itx: f.itx }, stack)
  }
  const ref = (r: Ast.OccurrenceRef, stack: ReadonlyArray<Ast.Expr>) => {
    frame(r.frame, stack)
    if (isFresh(r.frame)) return
    const key = occurrenceKey(r)
    const base = r.occurrence === undefined ? undefined : occurrenceKey(anyOccurrence(r))
    use(
      {
        key,
        kind: "occ",
        tx: r.frame.tx,
        ...(typeof r.frame.itx === "number" ? { itx: r.frame.itx } : {}),
        ref: r,
        ...(base === undefined ? {} : { base, k: r.occurrence! })
      },
      stack
    )
  }
  const value = (v: Ast.Operand, stack: ReadonlyArray<Ast.Expr>) => {
    if (v._tag === "Field" || v._tag === "Meta") ref(v.ref, stack)
    else if (v._tag === "FrameField") frame(v.frame, stack)
  }
  const walk = (e: Ast.Expr, stack: ReadonlyArray<Ast.Expr>): void => {
    switch (e._tag) {
      case "Or":
      case "And":
        walk(e.left, stack)
        walk(e.right, stack)
        return
      case "Not":
        walk(e.expr, [...stack, e])
        return
      case "Constant":
        return
      case "Emitted":
      case "Invoked":
      case "Reentrant":
      case "Count":
        ref(e.ref, stack)
        if (e._tag === "Count") value(e.right, stack)
        return
      case "Reverted":
        if (isOccurrence(e.target)) ref(e.target, stack)
        else frame(e.target, stack)
        return
      case "Created":
      case "NativeTransfer":
        frame(e.frame, stack)
        return
      case "InGroup":
        value(e.value, stack)
        return
      case "Compare":
        value(e.left, stack)
        value(e.right, stack)
        return
      case "Sum":
        value(e.value, stack)
        value(e.right, stack)
    }
  }
  walk(rule, [])
  const locals = new Map<Ast.Expr, Array<Var>>()
  const globals: Array<Var> = []
  for (const [key, stacks] of uses) {
    // The innermost negation that holds every use.
    let common = stacks[0]!
    for (const s of stacks) {
      let i = 0
      while (i < common.length && i < s.length && common[i] === s[i]) i++
      common = common.slice(0, i)
    }
    const owner = common.at(-1)
    if (owner === undefined) globals.push(vars.get(key)!)
    else locals.set(owner, [...(locals.get(owner) ?? []), vars.get(key)!])
  }
  return {
    vars,
    globals: order(globals),
    locals: new Map([...locals].map(([n, vs]) => [n, order(vs)]))
  }
}

// ---------------------------------------------------------------- facts access

const selects = (selector: Ast.Selector, name: string, signature: string) =>
  selector._tag === "Any" ||
  (selector.name === name && (selector.types === undefined || signature === `${name}(${selector.types.join(",")})`))

const contractMatches = (ref: Ast.OccurrenceRef, contract: string) => ref.contract === "*" || ref.contract === contract

/** The events or calls of `tx` a reference can mean, given the frame bound to it (for `itxM`). */
/** Whether an event or call is one a reference can mean, given the frame bound to it (for `itxM`). */
const means = (ref: Ast.OccurrenceRef, o: Facts.EventOccurrence | Facts.CallOccurrence, frame: number | undefined) => {
  if (!contractMatches(ref, o.contract) || !selects(ref.selector, o.name, o.signature)) return false
  const itx = ref.frame.itx
  if (ref.kind === "E") {
    const at = (o as Facts.EventOccurrence).frame
    return itx === undefined || itx === "any"
      ? true
      : itx === "*"
        ? at !== undefined && at >= 1
        : at !== undefined && at === frame
  }
  const at = (o as Facts.CallOccurrence).frame
  return itx === undefined ? at === 0 : itx === "any" ? true : itx === "*" ? at >= 1 : at === frame
}

/** The events or calls of `tx` a reference can mean. */
const inScope = (
  ref: Ast.OccurrenceRef,
  tx: Facts.Transaction,
  frame: number | undefined
): ReadonlyArray<Facts.EventOccurrence | Facts.CallOccurrence> =>
  (ref.kind === "E" ? tx.events : tx.calls).filter((o) => means(ref, o, frame))

const isEvent = (o: Facts.EventOccurrence | Facts.CallOccurrence): o is Facts.EventOccurrence => "logIndex" in o

const position = (o: Facts.EventOccurrence | Facts.CallOccurrence) => (isEvent(o) ? o.logIndex : o.frame)

const walkPath = (start: Facts.AbiValue | undefined, path: ReadonlyArray<Ast.Accessor>): Facts.AbiValue | undefined => {
  let current = start
  for (const step of path) {
    if (current === undefined) return undefined
    if (Array.isArray(current)) {
      if (step._tag === "Index") current = (current as ReadonlyArray<Facts.AbiValue>)[step.index]
      else if (step._tag === "Member" && step.name === "length") current = BigInt(current.length)
      else return undefined
      continue
    }
    if (typeof current !== "object" || current === null || (current as Facts.Tuple)._tag !== "Tuple") return undefined
    const t = current as Facts.Tuple
    if (step._tag === "Position") current = t.values[step.index]
    else if (step._tag === "Member") {
      const i = t.names.indexOf(step.name)
      current = i === -1 ? undefined : t.values[i]
    } else return undefined
  }
  return current
}

/** The evaluation of atoms and connectives under an assignment, shared by both searches. */
const semantics = (facts: Facts.Facts) => {
  const txOf = (env: Env, tx: number) => {
    const at = env.get(txKey(tx))
    return at === undefined || at === null ? undefined : facts.transactions[at]
  }
  const frameIndexOf = (env: Env, f: Ast.FrameRef) =>
    typeof f.itx === "number" ? (env.get(itxKey(f.tx, f.itx)) ?? undefined) : undefined

  /** The occurrences a reference denotes: its bound one, or for a fresh reference every candidate. */
  const occurrences = (
    env: Env,
    ref: Ast.OccurrenceRef
  ): ReadonlyArray<Facts.EventOccurrence | Facts.CallOccurrence> => {
    const tx = txOf(env, ref.frame.tx)
    if (tx === undefined) return []
    if (isFresh(ref.frame)) return inScope(ref, tx, undefined)
    const at = env.get(occurrenceKey(ref))
    if (at === undefined || at === null) return []
    const list = ref.kind === "E" ? tx.events : tx.calls
    const o = list[at]
    return o === undefined ? [] : [o]
  }

  /** The frames a frame reference denotes (fresh ones: every candidate). */
  const frames = (env: Env, f: Ast.FrameRef): ReadonlyArray<Facts.Frame | "top"> => {
    const tx = txOf(env, f.tx)
    if (tx === undefined) return []
    if (f.itx === undefined) return ["top"]
    const all = tx.frames ?? []
    if (f.itx === "*") return all.filter((fr) => fr.index >= 1)
    if (f.itx === "any") return all.length === 0 ? ["top"] : all
    const index = frameIndexOf(env, f)
    const fr = index === undefined ? undefined : all.find((x) => x.index === index)
    return fr === undefined ? [] : [fr]
  }

  const involves = (tx: Facts.Transaction, label: string) =>
    (facts.labels.get(label)?.has(String(tx.fields.to ?? "")) ?? false) ||
    tx.calls.some((c) => c.contract === label) ||
    tx.events.some((e) => e.contract === label)

  const frameField = (tx: Facts.Transaction, fr: Facts.Frame | "top", field: string, contract?: string) => {
    if (fr === "top") {
      if (contract !== undefined && contract !== "*" && !involves(tx, contract)) return undefined
      return field === "riskscore" ? tx.riskscore : tx.fields[field]
    }
    if (
      contract !== undefined &&
      contract !== "*" &&
      !(facts.labels.get(contract)?.has(String(fr.fields.to ?? "")) ?? false)
    )
      return undefined
    return field === "riskscore" ? fr.riskscore : fr.fields[field]
  }

  /** Every value an operand may take under `env` (fresh references: one per candidate; absent: none). */
  const values = (env: Env, v: Ast.Operand): ReadonlyArray<Facts.AbiValue> => {
    switch (v._tag) {
      case "Number":
      case "Address":
      case "Bool":
      case "String":
      case "Bytes":
        return [v.value]
      case "Placeholder":
        return []
      case "Field": {
        const read = (o: Facts.EventOccurrence | Facts.CallOccurrence) =>
          walkPath(v.returned ? (isEvent(o) ? undefined : o.output) : o.args, v.path)
        if (!isFresh(v.ref.frame)) {
          // One bound occurrence (or none): no list to build.
          const tx = txOf(env, v.ref.frame.tx)
          const at = tx === undefined ? undefined : env.get(occurrenceKey(v.ref))
          const o = at === undefined || at === null ? undefined : (v.ref.kind === "E" ? tx!.events : tx!.calls)[at]
          const x = o === undefined ? undefined : read(o)
          return x === undefined ? [] : [x]
        }
        return occurrences(env, v.ref).flatMap((o) => {
          const x = read(o)
          return x === undefined ? [] : [x]
        })
      }
      case "Meta":
        return occurrences(env, v.ref).flatMap((o) => {
          if (isEvent(o))
            return v.field === "address" ? [o.address] : v.field === "logIndex" ? [BigInt(o.logIndex)] : []
          const tx = txOf(env, v.ref.frame.tx)!
          const fr = o.frame === 0 ? (tx.frames?.[0] ?? "top") : tx.frames?.find((x) => x.index === o.frame)
          const x = fr === undefined ? undefined : fr === "top" ? tx.fields[v.field] : fr.fields[v.field]
          return x === undefined ? [] : [x]
        })
      case "FrameField": {
        const tx = txOf(env, v.frame.tx)
        if (tx === undefined) return []
        if (v.frame.itx === undefined) {
          // The top-level frame: one value, no list of frames to build.
          const x = frameField(tx, "top", v.field, v.contract)
          return x === undefined ? [] : [x]
        }
        return frames(env, v.frame).flatMap((fr) => {
          const x = frameField(tx, fr, v.field, v.contract)
          return x === undefined ? [] : [x]
        })
      }
    }
  }

  const compare = (
    comparator: Ast.Comparator | "count",
    operator: Ast.Operator,
    a: Facts.AbiValue,
    b: Facts.AbiValue
  ) => {
    if (typeof a === "bigint" && typeof b === "bigint") {
      switch (operator) {
        case ">":
          return a > b
        case ">=":
          return a >= b
        case "<":
          return a < b
        case "<=":
          return a <= b
        case "==":
          return a === b
        case "!=":
          return a !== b
        default:
          return false
      }
    }
    if (typeof a === "boolean" && typeof b === "boolean")
      return operator === "==" ? a === b : operator === "!=" && a !== b
    if (typeof a !== "string" || typeof b !== "string") return false
    // Equal text is equal in any case (addresses and bytes usually arrive lower-case already).
    if (a === b && (operator === "==" || operator === "!=")) return operator === "=="
    const cased = comparator === "stringCompare"
    const x = cased ? a : a.toLowerCase()
    const y = cased ? b : b.toLowerCase()
    switch (operator) {
      case "==":
        return x === y
      case "!=":
        return x !== y
      case "contains":
        return x.includes(y)
      case "startsWith":
        return x.startsWith(y)
      case "endsWith":
        return x.endsWith(y)
      default:
        return false
    }
  }

  const some = <A>(xs: ReadonlyArray<A>, f: (x: A) => boolean) => xs.some(f)

  const atom = (env: Env, e: Ast.Expr): boolean => {
    switch (e._tag) {
      case "Emitted":
      case "Invoked":
        return occurrences(env, e.ref).length > 0
      case "Reentrant":
        return some(occurrences(env, e.ref), (o) => !isEvent(o) && o.reentrant)
      case "Reverted":
        if (isOccurrence(e.target)) return some(occurrences(env, e.target), (o) => !isEvent(o) && o.reverted)
        {
          const tx = txOf(env, e.target.tx)
          if (tx === undefined) return false
          return some(frames(env, e.target), (fr) =>
            fr === "top" || fr.index === 0 ? tx.fields.status === false : fr.fields.error !== undefined
          )
        }
      case "Created":
        return some(
          frames(env, e.frame),
          (fr) => fr !== "top" && (fr.fields.type === "CREATE" || fr.fields.type === "CREATE2")
        )
      case "NativeTransfer": {
        const tx = txOf(env, e.frame.tx)
        if (tx === undefined) return false
        return some(frames(env, e.frame), (fr) => {
          const value = fr === "top" ? tx.fields.value : fr.fields.value
          const to = String((fr === "top" ? tx.fields.to : fr.fields.to) ?? "")
          return (
            typeof value === "bigint" &&
            value > 0n &&
            (e.contract === undefined || e.contract === "*" || (facts.labels.get(e.contract)?.has(to) ?? false))
          )
        })
      }
      case "InGroup": {
        const group = facts.groups?.get(e.group)
        return (
          group !== undefined && some(values(env, e.value), (v) => typeof v === "string" && group.has(v.toLowerCase()))
        )
      }
      case "Compare": {
        const rights = values(env, e.right)
        return some(values(env, e.left), (a) => some(rights, (b) => compare(e.comparator, e.operator, a, b)))
      }
      case "Count": {
        const tx = txOf(env, e.ref.frame.tx)
        if (tx === undefined) return false
        if (typeof e.ref.frame.itx === "number" && frameIndexOf(env, e.ref.frame) === undefined) return false
        const count = BigInt(inScope(anyOccurrence(e.ref), tx, frameIndexOf(env, e.ref.frame)).length)
        return some(values(env, e.right), (b) => compare("count", e.operator, count, b))
      }
      case "Sum": {
        const tx = txOf(env, e.value.ref.frame.tx)
        if (tx === undefined) return false
        if (typeof e.value.ref.frame.itx === "number" && frameIndexOf(env, e.value.ref.frame) === undefined)
          return false
        let sum = 0n
        for (const o of inScope(anyOccurrence(e.value.ref), tx, frameIndexOf(env, e.value.ref.frame))) {
          const source = e.value.returned ? (isEvent(o) ? undefined : o.output) : o.args
          const x = walkPath(source, e.value.path)
          if (typeof x === "bigint") sum += x
        }
        return some(values(env, e.right), (b) => compare("count", e.operator, sum, b))
      }
      default:
        return false
    }
  }

  /** The constraints between bound variables: order, window, scope. True when `env` may stand. */
  const consistent = (env: Env, vars: Iterable<Var>): boolean => {
    let low = Infinity
    let high = -Infinity
    let lastTx = -1
    const txPositions: Array<readonly [number, number]> = []
    for (const v of vars) {
      const at = env.get(v.key)
      if (at === undefined || at === null) continue
      if (v.kind === "tx") {
        const tx = facts.transactions[at]
        if (tx === undefined) return false
        txPositions.push([v.tx, at])
        low = Math.min(low, tx.blockNumber)
        high = Math.max(high, tx.blockNumber)
      } else if (v.kind === "itx") {
        const tx = txOf(env, v.tx)
        if (tx === undefined || !(tx.frames ?? []).some((f) => f.index === at && f.index >= 1)) return false
      } else {
        const tx = txOf(env, v.tx)
        if (tx === undefined) return false
        const frame = v.itx === undefined ? undefined : (env.get(itxKey(v.tx, v.itx)) ?? undefined)
        if (v.itx !== undefined && frame === undefined) return false
        const o = (v.ref!.kind === "E" ? tx.events : tx.calls)[at]
        if (o === undefined || !inScope(v.ref!, tx, frame).includes(o)) return false
      }
    }
    if (high - low > facts.blockRange) return false
    txPositions.sort((a, b) => a[0] - b[0])
    for (const [, at] of txPositions) {
      if (at <= lastTx) return false
      lastTx = at
    }
    // Frames of one transaction, and #k occurrences of one reference, in increasing order.
    const increasing = (
      group: (v: Var) => string | undefined,
      rank: (v: Var) => number,
      pos: (v: Var, at: number) => number
    ) => {
      const groups = new Map<string, Array<readonly [number, number]>>()
      for (const v of vars) {
        const g = group(v)
        const at = env.get(v.key)
        if (g === undefined || at === undefined || at === null) continue
        groups.set(g, [...(groups.get(g) ?? []), [rank(v), pos(v, at)]])
      }
      for (const list of groups.values()) {
        list.sort((a, b) => a[0] - b[0])
        for (let i = 1; i < list.length; i++) if (list[i]![1] <= list[i - 1]![1]) return false
      }
      return true
    }
    return (
      increasing(
        (v) => (v.kind === "itx" ? `tx${v.tx}` : undefined),
        (v) => v.itx!,
        (_, at) => at
      ) &&
      increasing(
        (v) => (v.kind === "occ" ? v.base : undefined),
        (v) => v.k!,
        (v, at) => {
          const tx = txOf(env, v.tx)!
          return position((v.ref!.kind === "E" ? tx.events : tx.calls)[at]!)
        }
      )
    )
  }

  /**
   * The constraints that binding `v` to `at` adds, against what `env` already binds, for a search whose domains
   * already keep scope, transaction order and range: frames of one transaction and `#k` occurrences in order.
   */
  const admissible = (env: Env, v: Var, at: number | null, vars: ReadonlyMap<string, Var>): boolean => {
    if (at === null || v.kind === "tx") return true
    const tx = txOf(env, v.tx)!
    const rank = (x: Var) => (x.kind === "itx" ? x.itx! : x.k!)
    const pos = (x: Var, i: number) =>
      x.kind === "itx" ? i : position((x.ref!.kind === "E" ? tx.events : tx.calls)[i]!)
    if (v.kind === "occ" && v.base === undefined) return true
    const mine = pos(v, at)
    for (const [key, other] of env) {
      if (other === null || key === v.key) continue
      const o = vars.get(key)
      if (o === undefined || o.kind !== v.kind || o.tx !== v.tx) continue
      if (v.kind === "occ" && o.base !== v.base) continue
      const theirs = pos(o, other)
      if (rank(o) < rank(v) ? theirs >= mine : theirs <= mine) return false
    }
    return true
  }

  return { atom, consistent, admissible, txOf }
}

// ---------------------------------------------------------------- the two searches

/**
 * Enumerates assignments of `vars` (extending `env`) and calls `visit` on each complete one until it returns true.
 * `prune`, when given, may cut a partial assignment short (its variables so far are in `bound`).
 */
type Search = (
  vars: ReadonlyArray<Var>,
  env: Map<string, number | null>,
  visit: (env: Map<string, number | null>) => boolean,
  prune?: (env: Map<string, number | null>, bound: ReadonlySet<string>, last: string) => boolean
) => boolean

type Semantics = ReturnType<typeof semantics>

/** Evaluates a rule with a search strategy: the matches, one per distinct binding of its transactions. */
const run = (rule: Ast.Expr, facts: Facts.Facts, strategy: (s: Semantics, p: Plan) => Search, eager: boolean) => {
  const p = plan(rule)
  const s = semantics(facts)
  const search = strategy(s, p)
  const truth = (env: Map<string, number | null>, e: Ast.Expr): boolean => {
    switch (e._tag) {
      case "Or":
        return truth(env, e.left) || truth(env, e.right)
      case "And":
        return truth(env, e.left) && truth(env, e.right)
      case "Constant":
        return e.value
      case "Not": {
        const locals = p.locals.get(e) ?? []
        const outer = [...env.keys()].flatMap((k) => {
          const v = p.vars.get(k)
          return v === undefined ? [] : [v]
        })
        const all = [...outer, ...locals]
        return !search(locals, env, (inner) => (eager || s.consistent(inner, all)) && truth(inner, e.expr))
      }
      default:
        return s.atom(env, e)
    }
  }
  const txVars = p.globals.filter((v) => v.kind === "tx")
  const anchor = txVars[0]
  if (anchor === undefined) return []
  const matches = new Map<string, Match>()
  const tupleOf = (env: ReadonlyMap<string, number | null>) => txVars.map((v) => env.get(v.key) ?? "-").join(",")
  // The top-level conjuncts, each with the global variables it reads: with `eager`, checked as soon as those are bound.
  const conjuncts: Array<{ readonly e: Ast.Expr; readonly needs: ReadonlyArray<string> }> = []
  const split = (e: Ast.Expr) => {
    if (e._tag === "And") {
      split(e.left)
      split(e.right)
    } else {
      // A negation's own variables are held in order and range by the bound ones of their kind, so a conjunct
      // holding one is decided only once every variable is bound.
      const own = plan(e).vars
      const needs = hasNegation(e) ? p.globals : p.globals.filter((g) => own.has(g.key))
      conjuncts.push({ e, needs: needs.map((g) => g.key) })
    }
  }
  split(rule)
  const atoms: Array<Ast.Expr> = []
  const collect = (e: Ast.Expr) => {
    if (e._tag === "And" || e._tag === "Or") {
      collect(e.left)
      collect(e.right)
    } else if (e._tag !== "Not" && e._tag !== "Constant") atoms.push(e)
  }
  collect(rule)
  const evidence = (env: Map<string, number | null>): Evidence => {
    const txs: Record<string, { hash: string; blockNumber: number; txIndex: number }> = {}
    const frames: Record<string, { index: number; from?: Json; to?: Json; type?: Json }> = {}
    const occurrences: Record<string, Evidence["occurrences"][string]> = {}
    for (const v of p.globals) {
      const at = env.get(v.key)
      if (at === undefined || at === null) continue
      const tx = s.txOf(env, v.tx)!
      if (v.kind === "tx") txs[v.key] = { hash: tx.hash, blockNumber: tx.blockNumber, txIndex: tx.txIndex }
      else if (v.kind === "itx") {
        const f = tx.frames?.find((x) => x.index === at)
        frames[v.key] = {
          index: at,
          ...(f?.fields.from === undefined ? {} : { from: toJson(f.fields.from) }),
          ...(f?.fields.to === undefined ? {} : { to: toJson(f.fields.to) }),
          ...(f?.fields.type === undefined ? {} : { type: toJson(f.fields.type) })
        }
      } else {
        const o = (v.ref!.kind === "E" ? tx.events : tx.calls)[at]!
        occurrences[v.key] = isEvent(o)
          ? { contract: o.contract, name: o.name, signature: o.signature, args: toJson(o.args), logIndex: o.logIndex }
          : {
              contract: o.contract,
              name: o.name,
              signature: o.signature,
              args: toJson(o.args),
              frame: o.frame,
              reverted: o.reverted
            }
      }
    }
    return { transactions: txs, frames, occurrences, held: atoms.filter((a) => s.atom(env, a)).map(printRule) }
  }
  // Transactions introduced inside a negation after every bound one: undecided while the range is still open.
  const forward = [...p.locals.values()].flat().filter((v) => v.kind === "tx")
  const pending = (bound: Readonly<Record<string, number>>): boolean => {
    if (facts.head === undefined || forward.length === 0) return false
    const highest = Math.max(...txVars.filter((v) => bound[v.key] !== undefined).map((v) => v.tx))
    if (!forward.some((v) => v.tx > highest)) return false
    const last = Math.max(...Object.values(bound).map((at) => facts.transactions[at]!.blockNumber))
    return last + facts.blockRange > facts.head
  }
  // After a match, the rest of the search below the last transaction variable is skipped (it would only find the
  // same transactions again); a binding of them reached again another way is dropped as already matched.
  const lastTxAt = p.globals.findIndex((v) => v.key === txVars.at(-1)!.key)
  /** The variables bound after every transaction variable: under a match, the rest of them adds nothing. */
  const tail = new Set(p.globals.slice(lastTxAt + 1).map((v) => v.key))
  let matchedHere = false
  const prune = eager
    ? (env: Map<string, number | null>, bound: ReadonlySet<string>, last: string) => {
        // A match is about its lowest transaction: an assignment leaving it unbound is never one.
        if (last === anchor.key && env.get(last) === null) return true
        if (!tail.has(last)) matchedHere = false
        else if (matchedHere) return true
        for (const c of conjuncts) {
          if (c.needs.length > 0 && !c.needs.includes(last)) continue
          if (c.needs.every((k) => bound.has(k)) && !truth(env, c.e)) return true
        }
        return false
      }
    : undefined
  search(
    p.globals,
    new Map(),
    (full) => {
      const at = full.get(anchor.key)
      if (at === null || at === undefined) return false
      const key = tupleOf(full)
      // The eager search has checked the constraints and every conjunct on the way here.
      if (matches.has(key) || (!eager && (!s.consistent(full, p.globals) || !truth(full, rule)))) return false
      const transactions: Record<string, number> = {}
      for (const v of txVars) {
        const bound = full.get(v.key)
        if (bound !== undefined && bound !== null) transactions[v.key] = bound
      }
      matches.set(key, { transactions, evidence: evidence(full), pending: pending(transactions) })
      matchedHere = true
      return false
    },
    prune
  )
  return [...matches.values()].sort((a, b) => (tupleKey(a) < tupleKey(b) ? -1 : tupleKey(a) > tupleKey(b) ? 1 : 0))
}

const hasNegation = (e: Ast.Expr): boolean =>
  e._tag === "Not" || ((e._tag === "And" || e._tag === "Or") && (hasNegation(e.left) || hasNegation(e.right)))

const tupleKey = (m: Match) =>
  Object.entries(m.transactions)
    .map(([k, v]) => `${k}=${String(v).padStart(8, "0")}`)
    .join(",")

/** Every variable over every index (and unbound), each complete assignment tested whole: the reference. */
const bruteForce = (sizes: (v: Var) => number) => (): Search => (vars, env, visit) => {
  const go = (i: number): boolean => {
    if (i === vars.length) return visit(env)
    const v = vars[i]!
    for (let value = -1; value < sizes(v); value++) {
      env.set(v.key, value === -1 ? null : value)
      if (go(i + 1)) {
        env.delete(v.key)
        return true
      }
    }
    env.delete(v.key)
    return false
  }
  return go(0)
}

/** Assignments from the domains the constraints leave, each partial one checked (and pruned) as it grows. */
const constrained =
  (facts: Facts.Facts) =>
  (s: Semantics, p: Plan): Search =>
  (vars, env, visit, prune) => {
    const domain = (v: Var): ReadonlyArray<number | null> => {
      if (v.kind === "tx") {
        let after = -1
        let before = facts.transactions.length
        for (const [key, at] of env) {
          const other = p.vars.get(key)
          if (other?.kind !== "tx" || at === null) continue
          if (other.tx < v.tx) after = Math.max(after, at)
          else if (other.tx > v.tx) before = Math.min(before, at)
        }
        // Within the block range of every bound transaction (they are in chain order, so the scan can stop).
        let low = Infinity
        let high = -Infinity
        for (const [key, at] of env) {
          if (at === null || p.vars.get(key)?.kind !== "tx") continue
          const block = facts.transactions[at]!.blockNumber
          low = Math.min(low, block)
          high = Math.max(high, block)
        }
        const out: Array<number | null> = [null]
        for (let i = after + 1; i < before; i++) {
          const block = facts.transactions[i]!.blockNumber
          if (block < high - facts.blockRange) continue
          if (block > low + facts.blockRange) break
          out.push(i)
        }
        return out
      }
      const tx = s.txOf(env, v.tx)
      if (tx === undefined) return [null]
      if (v.kind === "itx") return [null, ...(tx.frames ?? []).filter((f) => f.index >= 1).map((f) => f.index)]
      const frame = v.itx === undefined ? undefined : (env.get(itxKey(v.tx, v.itx)) ?? undefined)
      if (v.itx !== undefined && frame === undefined) return [null]
      const list: ReadonlyArray<Facts.EventOccurrence | Facts.CallOccurrence> =
        v.ref!.kind === "E" ? tx.events : tx.calls
      const out: Array<number | null> = [null]
      for (let i = 0; i < list.length; i++) if (means(v.ref!, list[i]!, frame)) out.push(i)
      return out
    }
    const bound = new Set<string>()
    const go = (i: number): boolean => {
      if (i === vars.length) return visit(env)
      const v = vars[i]!
      bound.add(v.key)
      for (const value of domain(v)) {
        env.set(v.key, value)
        if (!s.admissible(env, v, value, p.vars) || (prune !== undefined && prune(env, bound, v.key))) continue
        if (go(i + 1)) {
          env.delete(v.key)
          bound.delete(v.key)
          return true
        }
      }
      env.delete(v.key)
      bound.delete(v.key)
      return false
    }
    return go(0)
  }

/**
 * Why `rule` cannot be evaluated over `facts`, or undefined when it can: a rule that reads internal frames, call
 * outputs or reentrancy needs traces, and a transaction without them would otherwise answer "no match".
 */
export const notEvaluable = (rule: Ast.Expr, facts: Facts.Facts): string | undefined => {
  const needs = needsTraces(rule)
  if (needs === undefined) return undefined
  const missing = facts.transactions.find((t) => t.frames === undefined)
  return missing === undefined
    ? undefined
    : `the rule uses ${needs}, which needs call traces (debug_traceBlockByNumber), and transaction ${missing.hash} of block ${missing.blockNumber} has none`
}

const needsTraces = (e: Ast.Expr): string | undefined => {
  const frame = (f: Ast.FrameRef) =>
    f.itx === undefined ? undefined : `internal frames (tx${f.tx}.${typeof f.itx === "number" ? `itx${f.itx}` : f.itx})`
  const value = (v: Ast.Operand): string | undefined =>
    v._tag === "Field"
      ? v.returned
        ? "a call's return value"
        : frame(v.ref.frame)
      : v._tag === "Meta"
        ? frame(v.ref.frame)
        : v._tag === "FrameField"
          ? frame(v.frame)
          : undefined
  switch (e._tag) {
    case "Or":
    case "And":
      return needsTraces(e.left) ?? needsTraces(e.right)
    case "Not":
      return needsTraces(e.expr)
    case "Constant":
      return undefined
    case "Reentrant":
      return "reentrancy"
    case "Emitted":
    case "Invoked":
      return frame(e.ref.frame)
    case "Count":
      return frame(e.ref.frame) ?? value(e.right)
    case "Reverted":
      return isOccurrence(e.target) ? frame(e.target.frame) : frame(e.target)
    case "Created":
    case "NativeTransfer":
      return frame(e.frame)
    case "InGroup":
      return value(e.value)
    case "Compare":
      return value(e.left) ?? value(e.right)
    case "Sum":
      return value(e.value) ?? value(e.right)
  }
}

/** The matches of a checked rule over `facts`. */
export const evaluate = (rule: Ast.Expr, facts: Facts.Facts): ReadonlyArray<Match> =>
  run(rule, facts, constrained(facts), true)

/**
 * The same matches by brute force: every variable over every index (and unbound), every complete assignment
 * tested against the constraints and the whole rule. Exponential; it exists to keep `evaluate` honest.
 */
export const evaluateReference = (rule: Ast.Expr, facts: Facts.Facts): ReadonlyArray<Match> => {
  const frames = Math.max(0, ...facts.transactions.map((t) => Math.max(0, ...(t.frames ?? []).map((f) => f.index + 1))))
  const occurrences = Math.max(0, ...facts.transactions.map((t) => Math.max(t.events.length, t.calls.length)))
  const sizes = (v: Var) => (v.kind === "tx" ? facts.transactions.length : v.kind === "itx" ? frames : occurrences)
  return run(rule, facts, bruteForce(sizes), false)
}
