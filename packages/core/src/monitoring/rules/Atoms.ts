/**
 * The atoms of a rule compiled to functions of a binding (`Env`): how each reads the transactions, frames and
 * occurrences bound to its variables (or, through `itx*` and `any`, every candidate), and decides.
 */
import {
  accessor,
  anyOccurrence,
  comparison,
  type Env,
  frameField,
  inScope,
  intern,
  isEvent,
  isFresh,
  labelled,
  type Occurrence,
  occurrenceTest,
  type Operand,
  single,
  type Test,
  unbound
} from "./Access.ts"
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"
import type * as Facts from "./Facts.ts"
import { occurrence as printOccurrence } from "./Printer.ts"

/** The slot of a variable, by its key (`tx1`, `tx1.itx2`, an occurrence as printed). */
type SlotOf = (key: string) => number

/** The transaction bound to `txN`. */
const txAt = (slotOf: SlotOf, tx: number) => {
  const slot = slotOf(`tx${tx}`)
  return (env: Env, facts: Facts.Facts): Facts.Transaction | undefined => {
    const at = env[slot]!
    return at === unbound ? undefined : facts.transactions[at]
  }
}
/** The frame index bound to `itxM` (undefined for the top level, fresh frames, or when unbound). */
const frameAt = (slotOf: SlotOf, f: Ast.FrameRef) => {
  if (typeof f.itx !== "number") return () => undefined
  const slot = slotOf(`tx${f.tx}.itx${f.itx}`)
  return (env: Env) => {
    const at = env[slot]!
    return at === unbound ? undefined : at
  }
}

/** The occurrences a reference denotes: its bound one, or for a fresh reference every candidate. */
const occurrences = (
  slotOf: SlotOf,
  ref: Ast.OccurrenceRef
): ((env: Env, facts: Facts.Facts) => ReadonlyArray<Occurrence>) => {
  const tx = txAt(slotOf, ref.frame.tx)
  const test = occurrenceTest(ref)
  if (isFresh(ref.frame)) {
    return (env, facts) => {
      const t = tx(env, facts)
      return t === undefined ? [] : inScope(test, t, undefined)
    }
  }
  const one = bound(slotOf, ref)
  return (env, facts) => {
    const o = one(env, facts)
    return o === undefined ? [] : [o]
  }
}
/** The occurrence bound to a (not fresh) reference. */
const bound = (slotOf: SlotOf, ref: Ast.OccurrenceRef) => {
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
const frames = (
  slotOf: SlotOf,
  f: Ast.FrameRef
): ((env: Env, facts: Facts.Facts) => ReadonlyArray<Facts.Frame | "top">) => {
  const tx = txAt(slotOf, f.tx)
  const index = frameAt(slotOf, f)
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

const operand = (slotOf: SlotOf, v: Ast.Operand): Operand => {
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
        const one = bound(slotOf, v.ref)
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
      const all = occurrences(slotOf, v.ref)
      return {
        all: (env, facts) =>
          all(env, facts).flatMap((o) => {
            const x = read(o)
            return x === undefined ? [] : [x]
          })
      }
    }
    case "Meta": {
      const all = occurrences(slotOf, v.ref)
      const tx = txAt(slotOf, v.ref.frame.tx)
      const field = v.field
      return {
        all: (env, facts) =>
          all(env, facts).flatMap((o) => {
            if (isEvent(o)) return field === "address" ? [o.address] : field === "logIndex" ? [BigInt(o.logIndex)] : []
            const t = tx(env, facts)!
            const fr = o.frame === 0 ? (t.frames?.[0] ?? "top") : t.frames?.find((x) => x.index === o.frame)
            const x = fr === undefined ? undefined : fr === "top" ? t.fields[field] : fr.fields[field]
            return x === undefined ? [] : [x]
          })
      }
    }
    case "FrameField": {
      const tx = txAt(slotOf, v.frame.tx)
      const { field, contract } = v
      if (v.frame.itx === undefined) {
        // The top-level frame: one value, no list of frames to build.
        return single((env, facts) => {
          const t = tx(env, facts)
          return t === undefined ? undefined : frameField(facts, t, "top", field, contract)
        })
      }
      const all = frames(slotOf, v.frame)
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
const against = (slotOf: SlotOf, operator: Ast.Operator, right: Ast.Operand) => {
  const r = operand(slotOf, right)
  const holds = comparison("count", operator)
  return (env: Env, facts: Facts.Facts, x: bigint) => r.all(env, facts).some((b) => holds(x, b))
}

/** Compiles the atoms of a rule into functions of the slots that `slotOf` gives each variable. */
export const atom = (e: Ast.Expr, slotOf: SlotOf): Test => {
  switch (e._tag) {
    case "Emitted":
    case "Invoked": {
      const all = occurrences(slotOf, e.ref)
      return (env, facts) => all(env, facts).length > 0
    }
    case "Reentrant": {
      const all = occurrences(slotOf, e.ref)
      return (env, facts) => all(env, facts).some((o) => !isEvent(o) && o.reentrant)
    }
    case "Reverted": {
      if (isOccurrence(e.target)) {
        const all = occurrences(slotOf, e.target)
        return (env, facts) => all(env, facts).some((o) => !isEvent(o) && o.reverted)
      }
      const tx = txAt(slotOf, e.target.tx)
      const all = frames(slotOf, e.target)
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
      const all = frames(slotOf, e.frame)
      return (env, facts) =>
        all(env, facts).some((fr) => fr !== "top" && (fr.fields.type === "CREATE" || fr.fields.type === "CREATE2"))
    }
    case "NativeTransfer": {
      const tx = txAt(slotOf, e.frame.tx)
      const all = frames(slotOf, e.frame)
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
      const value = operand(slotOf, e.value)
      const name = e.group
      return (env, facts) => {
        const group = facts.groups?.get(name)
        return (
          group !== undefined && value.all(env, facts).some((v) => typeof v === "string" && group.has(v.toLowerCase()))
        )
      }
    }
    case "Compare":
      return compare(slotOf, e)
    case "Count":
    case "Sum":
      return aggregate(slotOf, e)
    default:
      return () => false
  }
}

/** A comparison of two values (some of whose readings must compare as the operator says). */
const compare = (slotOf: SlotOf, e: Ast.Expr & { readonly _tag: "Compare" }): Test => {
  const holds = comparison(e.comparator, e.operator)
  const left = operand(slotOf, e.left)
  const right = operand(slotOf, e.right)
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

/** A count of occurrences or a sum of a parameter over them, against the right-hand operand. */
const aggregate = (slotOf: SlotOf, e: Ast.Expr & { readonly _tag: "Count" | "Sum" }): Test => {
  switch (e._tag) {
    case "Count": {
      const tx = txAt(slotOf, e.ref.frame.tx)
      const frame = frameAt(slotOf, e.ref.frame)
      const test = occurrenceTest(anyOccurrence(e.ref))
      const numbered = typeof e.ref.frame.itx === "number"
      const holds = against(slotOf, e.operator, e.right)
      return (env, facts) => {
        const t = tx(env, facts)
        const f = frame(env)
        if (t === undefined || (numbered && f === undefined)) return false
        return holds(env, facts, BigInt(inScope(test, t, f).length))
      }
    }
    case "Sum": {
      const ref = e.value.ref
      const tx = txAt(slotOf, ref.frame.tx)
      const frame = frameAt(slotOf, ref.frame)
      const test = occurrenceTest(anyOccurrence(ref))
      const numbered = typeof ref.frame.itx === "number"
      const returned = e.value.returned
      const path = accessor(e.value.path)
      const holds = against(slotOf, e.operator, e.right)
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
  }
}
