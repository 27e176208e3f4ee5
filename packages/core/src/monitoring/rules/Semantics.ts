/**
 * What both rule searches share (research §5.4): a rule's variables and where each belongs, the slots they are
 * bound in, the atoms compiled to functions of those slots, and the evidence of a match.
 *
 * A rule's variables are its transactions `txN`, numbered frames `txN.itxM` and occurrences (references that share
 * frame, contract, E|F, name and `#k` denote one event or call). Each has a slot in an `Env`: the position it is
 * bound to (a transaction's in `facts.transactions`, a frame's index, an occurrence's in its transaction's events
 * or calls) or `unbound`. An atom that needs an unbound variable is false. A variable that occurs only inside a
 * negation belongs to the innermost negation holding all its uses. References through `itx*` or `any` are fresh:
 * the atom holds if some frame or occurrence makes it hold.
 */
import {
  accessor,
  comparison,
  type Env,
  frameField,
  inScope,
  intern,
  isEvent,
  labelled,
  type Occurrence,
  type OccurrenceTest,
  occurrenceTest,
  type Operand,
  single
} from "./Access.ts"
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"
import { type Evidence, type Json, toJson } from "./Evidence.ts"
import type * as Facts from "./Facts.ts"
import { occurrence as printOccurrence, print as printRule } from "./Printer.ts"

export { type Env, type IndexKey, indexed, type OccurrenceTest, position } from "./Access.ts"

/** The value of a slot whose variable is not bound. */
export const unbound = -1

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

// ---------------------------------------------------------------- variables

/** A variable of a rule. */
export interface Var {
  readonly key: string
  readonly slot: number
  readonly kind: "tx" | "itx" | "occ"
  readonly tx: number
  readonly itx?: number
  readonly ref?: OccurrenceTest
  /** For `#k` occurrences: the key without `#k`, and k. */
  readonly base?: string
  readonly k?: number
}

const isFresh = (f: Ast.FrameRef) => f.itx === "*" || f.itx === "any"

/** The reference without its `#k`: every occurrence it may mean. */
const anyOccurrence = ({ occurrence: _, ...rest }: Ast.OccurrenceRef): Ast.OccurrenceRef => rest

/** A rule ready to evaluate: its variables, which negation each belongs to, and its terms as functions. */
export interface Plan {
  readonly vars: ReadonlyArray<Var>
  /** The variables outside every negation, in binding order. */
  readonly globals: ReadonlyArray<Var>
  /** Each negation's own variables, in binding order. */
  readonly locals: ReadonlyMap<Ast.Expr, ReadonlyArray<Var>>
  /** The atoms of the rule (not connectives) with their tests, for the evidence. */
  readonly atoms: ReadonlyArray<{ readonly expr: Ast.Expr; readonly test: Test; readonly printed: string }>
  readonly test: (e: Ast.Expr) => Test
  /** The slots each expression reads (what must be bound before it can be decided), by expression. */
  readonly reads: (e: Ast.Expr) => ReadonlySet<number>
  /** The slots an atom is false without: its transaction, numbered frame and bound occurrence, where it has them. */
  readonly requires: (e: Ast.Expr) => ReadonlySet<number>
}

/** An expression as a function of a binding. */
export type Test = (env: Env, facts: Facts.Facts) => boolean

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

/** The plan of a rule, made once per rule tree. */
export const plan = (rule: Ast.Expr): Plan => {
  const known = plans.get(rule)
  if (known !== undefined) return known
  const made = makePlan(rule)
  plans.set(rule, made)
  return made
}

/** The variables an expression reads, each with the negations around the read. */
const variables = (rule: Ast.Expr, visit: (v: Omit<Var, "slot">, stack: ReadonlyArray<Ast.Expr>) => void) => {
  const frame = (f: Ast.FrameRef, stack: ReadonlyArray<Ast.Expr>) => {
    visit({ key: `tx${f.tx}`, kind: "tx", tx: f.tx }, stack)
    if (typeof f.itx === "number") visit({ key: `tx${f.tx}.itx${f.itx}`, kind: "itx", tx: f.tx, itx: f.itx }, stack)
  }
  const ref = (r: Ast.OccurrenceRef, stack: ReadonlyArray<Ast.Expr>) => {
    frame(r.frame, stack)
    if (isFresh(r.frame)) return
    visit(
      {
        key: printOccurrence(r),
        kind: "occ",
        tx: r.frame.tx,
        ...(typeof r.frame.itx === "number" ? { itx: r.frame.itx } : {}),
        ref: occurrenceTest(r),
        ...(r.occurrence === undefined ? {} : { base: printOccurrence(anyOccurrence(r)), k: r.occurrence })
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
}

const makePlan = (rule: Ast.Expr): Plan => {
  const vars = new Map<string, Var>()
  const uses = new Map<string, Array<ReadonlyArray<Ast.Expr>>>()
  variables(rule, (v, stack) => {
    if (!vars.has(v.key)) vars.set(v.key, { ...v, slot: vars.size })
    const list = uses.get(v.key) ?? []
    list.push(stack)
    uses.set(v.key, list)
  })
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
  const slotOf = (key: string) => vars.get(key)!.slot
  const tests = new Map<Ast.Expr, Test>()
  const atoms: Array<{ expr: Ast.Expr; test: Test; printed: string }> = []
  const collect = (e: Ast.Expr) => {
    if (e._tag === "And" || e._tag === "Or") {
      collect(e.left)
      collect(e.right)
    } else if (e._tag === "Not") collect(e.expr)
    else if (e._tag !== "Constant") {
      const test = atom(e, slotOf)
      tests.set(e, test)
      atoms.push({ expr: e, test, printed: printRule(e) })
    }
  }
  collect(rule)
  const reads = new Map<Ast.Expr, ReadonlySet<number>>()
  return {
    vars: [...vars.values()],
    globals: order(globals),
    locals: new Map([...locals].map(([n, vs]) => [n, order(vs)])),
    atoms: atoms.filter((a) => !under(rule, a.expr)),
    test: (e) => tests.get(e)!,
    requires: (e) => required(e, slotOf),
    reads: (e) => {
      let known = reads.get(e)
      if (known === undefined) {
        const slots = new Set<number>()
        variables(e, (v) => slots.add(slotOf(v.key)))
        known = slots
        reads.set(e, known)
      }
      return known
    }
  }
}

/**
 * The variables without which an atom is false (an atom that needs an unbound variable is false): those of its
 * references, except the occurrence a count or sum counts over (a count may be zero).
 */
const required = (e: Ast.Expr, slotOf: (key: string) => number): ReadonlySet<number> => {
  const slots = new Set<number>()
  const frame = (f: Ast.FrameRef) => {
    slots.add(slotOf(`tx${f.tx}`))
    if (typeof f.itx === "number") slots.add(slotOf(`tx${f.tx}.itx${f.itx}`))
  }
  const ref = (r: Ast.OccurrenceRef) => {
    frame(r.frame)
    if (!isFresh(r.frame)) slots.add(slotOf(printOccurrence(r)))
  }
  const value = (v: Ast.Operand) => {
    if (v._tag === "Field" || v._tag === "Meta") ref(v.ref)
    else if (v._tag === "FrameField") frame(v.frame)
  }
  switch (e._tag) {
    case "Emitted":
    case "Invoked":
    case "Reentrant":
      ref(e.ref)
      break
    case "Reverted":
      if (isOccurrence(e.target)) ref(e.target)
      else frame(e.target)
      break
    case "Created":
    case "NativeTransfer":
      frame(e.frame)
      break
    case "InGroup":
      value(e.value)
      break
    case "Compare":
      value(e.left)
      value(e.right)
      break
    case "Count":
      frame(e.ref.frame)
      value(e.right)
      break
    case "Sum":
      frame(e.value.ref.frame)
      value(e.right)
      break
    default:
  }
  return slots
}

/** Whether `target` sits under a negation of `e`. */
const under = (e: Ast.Expr, target: Ast.Expr, negated = false): boolean =>
  e === target
    ? negated
    : e._tag === "And" || e._tag === "Or"
      ? under(e.left, target, negated) || under(e.right, target, negated)
      : e._tag === "Not" && under(e.expr, target, true)

/** Compiles the atoms of a rule into functions of the slots that `slotOf` gives each variable. */
const atom = (e: Ast.Expr, slotOf: (key: string) => number): Test => {
  const txAt = (tx: number) => {
    const slot = slotOf(`tx${tx}`)
    return (env: Env, facts: Facts.Facts): Facts.Transaction | undefined => {
      const at = env[slot]!
      return at === unbound ? undefined : facts.transactions[at]
    }
  }
  /** The frame index bound to `itxM` (undefined for the top level, fresh frames, or when unbound). */
  const frameAt = (f: Ast.FrameRef) => {
    if (typeof f.itx !== "number") return () => undefined
    const slot = slotOf(`tx${f.tx}.itx${f.itx}`)
    return (env: Env) => {
      const at = env[slot]!
      return at === unbound ? undefined : at
    }
  }

  /** The occurrences a reference denotes: its bound one, or for a fresh reference every candidate. */
  const occurrences = (ref: Ast.OccurrenceRef): ((env: Env, facts: Facts.Facts) => ReadonlyArray<Occurrence>) => {
    const tx = txAt(ref.frame.tx)
    const test = occurrenceTest(ref)
    if (isFresh(ref.frame)) {
      return (env, facts) => {
        const t = tx(env, facts)
        return t === undefined ? [] : inScope(test, t, undefined)
      }
    }
    const one = bound(ref)
    return (env, facts) => {
      const o = one(env, facts)
      return o === undefined ? [] : [o]
    }
  }
  /** The occurrence bound to a (not fresh) reference. */
  const bound = (ref: Ast.OccurrenceRef) => {
    const txSlot = slotOf(`tx${ref.frame.tx}`)
    const slot = slotOf(printOccurrence(ref))
    return ref.kind === "E"
      ? (env: Env, facts: Facts.Facts): Occurrence | undefined => {
          const t = env[txSlot]!
          const at = env[slot]!
          return t === unbound || at === unbound ? undefined : facts.transactions[t]!.events[at]
        }
      : (env: Env, facts: Facts.Facts): Occurrence | undefined => {
          const t = env[txSlot]!
          const at = env[slot]!
          return t === unbound || at === unbound ? undefined : facts.transactions[t]!.calls[at]
        }
  }

  /** The frames a frame reference denotes (fresh ones: every candidate). */
  const frames = (f: Ast.FrameRef): ((env: Env, facts: Facts.Facts) => ReadonlyArray<Facts.Frame | "top">) => {
    const tx = txAt(f.tx)
    const index = frameAt(f)
    return (env, facts) => {
      const t = tx(env, facts)
      if (t === undefined) return []
      if (f.itx === undefined) return ["top"]
      const all = t.frames ?? []
      if (f.itx === "*") return all.filter((fr) => fr.index >= 1)
      if (f.itx === "any") return all.length === 0 ? ["top"] : all
      const i = index(env)
      const fr = i === undefined ? undefined : all.find((x) => x.index === i)
      return fr === undefined ? [] : [fr]
    }
  }

  const operand = (v: Ast.Operand): Operand => {
    switch (v._tag) {
      case "Number":
      case "Address":
      case "Bool":
      case "String":
      case "Bytes": {
        const value = v.value
        return { one: () => value, all: () => [value] }
      }
      case "Placeholder":
        return { one: () => undefined, all: () => [] }
      case "Field": {
        const path = accessor(v.path)
        const returned = v.returned
        const read = (o: Occurrence) => path(returned ? (isEvent(o) ? undefined : o.output) : o.args)
        if (!isFresh(v.ref.frame)) {
          const one = bound(v.ref)
          if (!returned) {
            // An argument of the bound occurrence: the common case, read without a detour.
            return single((env, facts) => {
              const o = one(env, facts)
              return o === undefined ? undefined : path(o.args)
            })
          }
          return single((env, facts) => {
            const o = one(env, facts)
            return o === undefined ? undefined : read(o)
          })
        }
        const all = occurrences(v.ref)
        return {
          all: (env, facts) =>
            all(env, facts).flatMap((o) => {
              const x = read(o)
              return x === undefined ? [] : [x]
            })
        }
      }
      case "Meta": {
        const all = occurrences(v.ref)
        const tx = txAt(v.ref.frame.tx)
        const field = v.field
        return {
          all: (env, facts) =>
            all(env, facts).flatMap((o) => {
              if (isEvent(o))
                return field === "address" ? [o.address] : field === "logIndex" ? [BigInt(o.logIndex)] : []
              const t = tx(env, facts)!
              const fr = o.frame === 0 ? (t.frames?.[0] ?? "top") : t.frames?.find((x) => x.index === o.frame)
              const x = fr === undefined ? undefined : fr === "top" ? t.fields[field] : fr.fields[field]
              return x === undefined ? [] : [x]
            })
        }
      }
      case "FrameField": {
        const tx = txAt(v.frame.tx)
        const { field, contract } = v
        if (v.frame.itx === undefined) {
          // The top-level frame: one value, no list of frames to build.
          return single((env, facts) => {
            const t = tx(env, facts)
            return t === undefined ? undefined : frameField(facts, t, "top", field, contract)
          })
        }
        const all = frames(v.frame)
        return {
          all: (env, facts) => {
            const t = tx(env, facts)
            if (t === undefined) return []
            return all(env, facts).flatMap((fr) => {
              const x = frameField(facts, t, fr, field, contract)
              return x === undefined ? [] : [x]
            })
          }
        }
      }
    }
  }

  /** A comparison of an aggregate (a count or a sum) with the right-hand operand. */
  const against = (operator: Ast.Operator, right: Ast.Operand) => {
    const r = operand(right)
    const holds = comparison("count", operator)
    return (env: Env, facts: Facts.Facts, x: bigint) => r.all(env, facts).some((b) => holds(x, b))
  }

  switch (e._tag) {
    case "Emitted":
    case "Invoked": {
      const all = occurrences(e.ref)
      return (env, facts) => all(env, facts).length > 0
    }
    case "Reentrant": {
      const all = occurrences(e.ref)
      return (env, facts) => all(env, facts).some((o) => !isEvent(o) && o.reentrant)
    }
    case "Reverted": {
      if (isOccurrence(e.target)) {
        const all = occurrences(e.target)
        return (env, facts) => all(env, facts).some((o) => !isEvent(o) && o.reverted)
      }
      const tx = txAt(e.target.tx)
      const all = frames(e.target)
      return (env, facts) => {
        const t = tx(env, facts)
        return (
          t !== undefined &&
          all(env, facts).some((fr) =>
            fr === "top" || fr.index === 0 ? t.fields.status === false : fr.fields.error !== undefined
          )
        )
      }
    }
    case "Created": {
      const all = frames(e.frame)
      return (env, facts) =>
        all(env, facts).some((fr) => fr !== "top" && (fr.fields.type === "CREATE" || fr.fields.type === "CREATE2"))
    }
    case "NativeTransfer": {
      const tx = txAt(e.frame.tx)
      const all = frames(e.frame)
      const contract = e.contract
      return (env, facts) => {
        const t = tx(env, facts)
        return (
          t !== undefined &&
          all(env, facts).some((fr) => {
            const value = fr === "top" ? t.fields.value : fr.fields.value
            const to = fr === "top" ? t.fields.to : fr.fields.to
            return typeof value === "bigint" && value > 0n && labelled(facts, contract, to)
          })
        )
      }
    }
    case "InGroup": {
      const value = operand(e.value)
      const name = e.group
      return (env, facts) => {
        const group = facts.groups?.get(name)
        return (
          group !== undefined && value.all(env, facts).some((v) => typeof v === "string" && group.has(v.toLowerCase()))
        )
      }
    }
    case "Compare": {
      const holds = comparison(e.comparator, e.operator)
      const left = operand(e.left)
      const right = operand(e.right)
      const literal = e.right._tag === "Placeholder" ? undefined : "value" in e.right ? e.right.value : undefined
      const field = e.left
      if (
        literal !== undefined &&
        field._tag === "Field" &&
        !field.returned &&
        !isFresh(field.ref.frame) &&
        field.path.length === 1 &&
        field.path[0]?._tag === "Member"
      ) {
        // A parameter of a bound occurrence against a literal (`uintCompare(tx1.Token.E.Transfer.value, >, 1000)`),
        // the commonest comparison, in one step.
        const txSlot = slotOf(`tx${field.ref.frame.tx}`)
        const slot = slotOf(printOccurrence(field.ref))
        const events = field.ref.kind === "E"
        const name = intern(field.path[0].name)
        // The position of the name, looked up once per `names` array (one per ABI item).
        let names: ReadonlyArray<string | undefined> = []
        let position = -1
        return (env, facts) => {
          const t = env[txSlot]!
          const at = env[slot]!
          if (t === unbound || at === unbound) return false
          const tx = facts.transactions[t]!
          const o = events ? tx.events[at] : tx.calls[at]
          if (o === undefined) return false
          if (o.args.names !== names) {
            names = o.args.names
            position = names.indexOf(name)
          }
          return position !== -1 && holds(o.args.values[position]!, literal)
        }
      }
      if (left.one !== undefined && literal !== undefined) {
        const l = left.one
        return (env, facts) => {
          const a = l(env, facts)
          return a !== undefined && holds(a, literal)
        }
      }
      if (left.one !== undefined && right.one !== undefined) {
        const [l, r] = [left.one, right.one]
        return (env, facts) => {
          const a = l(env, facts)
          if (a === undefined) return false
          const b = r(env, facts)
          return b !== undefined && holds(a, b)
        }
      }
      return (env, facts) => {
        const rights = right.all(env, facts)
        return left.all(env, facts).some((a) => rights.some((b) => holds(a, b)))
      }
    }
    case "Count": {
      const tx = txAt(e.ref.frame.tx)
      const frame = frameAt(e.ref.frame)
      const test = occurrenceTest(anyOccurrence(e.ref))
      const numbered = typeof e.ref.frame.itx === "number"
      const holds = against(e.operator, e.right)
      return (env, facts) => {
        const t = tx(env, facts)
        const f = frame(env)
        if (t === undefined || (numbered && f === undefined)) return false
        return holds(env, facts, BigInt(inScope(test, t, f).length))
      }
    }
    case "Sum": {
      const ref = e.value.ref
      const tx = txAt(ref.frame.tx)
      const frame = frameAt(ref.frame)
      const test = occurrenceTest(anyOccurrence(ref))
      const numbered = typeof ref.frame.itx === "number"
      const returned = e.value.returned
      const path = accessor(e.value.path)
      const holds = against(e.operator, e.right)
      return (env, facts) => {
        const t = tx(env, facts)
        const f = frame(env)
        if (t === undefined || (numbered && f === undefined)) return false
        let sum = 0n
        for (const o of inScope(test, t, f)) {
          const x = path(returned ? (isEvent(o) ? undefined : o.output) : o.args)
          if (typeof x === "bigint") sum += x
        }
        return holds(env, facts, sum)
      }
    }
    default:
      return () => false
  }
}

// ---------------------------------------------------------------- constraints and evidence

/** The transaction bound to a variable's `txN`. */
export const txOf = (p: Plan, env: Env, facts: Facts.Facts, tx: number): Facts.Transaction | undefined => {
  const v = p.vars.find((x) => x.kind === "tx" && x.tx === tx)
  const at = v === undefined ? unbound : env[v.slot]!
  return at === unbound ? undefined : facts.transactions[at]
}

/** The frame index bound to `txN.itxM`, when bound. */
export const frameOf = (p: Plan, env: Env, v: Var): number | undefined => {
  if (v.itx === undefined) return undefined
  const f = p.vars.find((x) => x.kind === "itx" && x.tx === v.tx && x.itx === v.itx)
  const at = f === undefined ? unbound : env[f.slot]!
  return at === unbound ? undefined : at
}

/** What made a binding a match: what its global variables are bound to, and the terms that held. */
export const evidence = (p: Plan, env: Env, facts: Facts.Facts): Evidence => {
  const txs: Record<string, { hash: string; blockNumber: number; txIndex: number }> = {}
  const frames: Record<string, { index: number; from?: Json; to?: Json; type?: Json }> = {}
  const occurrences: Record<string, Evidence["occurrences"][string]> = {}
  for (const v of p.globals) {
    const at = env[v.slot]!
    if (at === unbound) continue
    const tx = txOf(p, env, facts, v.tx)!
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
  return {
    transactions: txs,
    frames,
    occurrences,
    held: p.atoms.filter((a) => a.test(env, facts)).map((a) => a.printed)
  }
}
