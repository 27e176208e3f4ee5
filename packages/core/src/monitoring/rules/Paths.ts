/**
 * Paths of the watch-rule language (`tx1.itx*.Pool.F.swap#2.$0`, `tx2.from`, `….E.Transfer.@address`), read segment
 * by segment, and the values, occurrences and types they name.
 */
import type * as Ast from "./Ast.ts"
import { fieldNames, metaFields } from "./Ast.ts"
import type { Cursor } from "./Cursor.ts"

/** A path as read, before the calling construct says which shape it needs. */
export interface PathParts {
  readonly at: number
  readonly frame: Ast.FrameRef
  readonly contract?: string
  readonly occurrence?: Omit<Ast.OccurrenceRef, "frame" | "contract">
  readonly returned: boolean
  readonly accessors: ReadonlyArray<Ast.Accessor>
  readonly meta?: string | undefined
  readonly field?: string
}

export const path = (c: Cursor): PathParts => {
  c.ws()
  const at = c.p
  if (!c.eat("tx")) return c.fail(`expected a path starting with txN${c.found()}`, ["tx1"])
  const tx = c.digits()
  if (tx === undefined || tx < 1) return c.fail("expected the transaction number after tx (tx1, tx2, …)", ["tx1"])
  let frame: Ast.FrameRef = { tx }
  if (c.peek(".itx")) {
    c.p += 4
    if (c.eat("*")) frame = { tx, itx: "*" }
    else {
      const itx = c.digits()
      if (itx === undefined || itx < 1)
        c.fail("expected the frame number after itx (itx1, itx2, …) or itx*", ["itx1", "itx*"])
      frame = { tx, itx: itx! }
    }
  } else if (/^\.any(?![A-Za-z0-9_])/.test(c.rest())) {
    c.p += 4
    frame = { tx, itx: "any" }
  }
  if (!c.peek(".")) return { at, frame, returned: false, accessors: [] }
  c.p++
  const wordAt = c.p
  const word = c.eat("*") ? "*" : c.identifier()
  if (word === undefined) return c.fail("expected a contract label or a field after '.'", ["Label", "from"], wordAt)
  if (word !== "*" && fieldNames.has(word) && !c.peek("."))
    return { at, frame, field: word, returned: false, accessors: [] }
  const contract = word
  if (!c.peek(".")) return { at, frame, contract, returned: false, accessors: [] }
  c.p++
  const kindAt = c.p
  const next = c.identifier()
  if (next === "E" || next === "F") {
    if (!c.peek(".")) c.fail(`expected '.' and a ${next === "E" ? "event" : "function"} name after .${next}`, ["."])
    c.p++
    const selector = selectorOf(c, next)
    let occurrenceIndex: number | undefined
    if (c.peek("#")) {
      c.p++
      occurrenceIndex = c.digits()
      if (occurrenceIndex === undefined || occurrenceIndex < 1)
        c.fail("expected an occurrence number after # (#1, #2, …)", ["#1"])
    }
    const occ = {
      kind: next,
      selector,
      ...(occurrenceIndex === undefined ? {} : { occurrence: occurrenceIndex })
    } as const
    let returned = false
    const accessors: Array<Ast.Accessor> = []
    for (;;) {
      if (c.peek("[")) {
        c.p++
        const index = c.digits()
        if (index === undefined) c.fail("expected an array index", ["0"])
        if (!c.peek("]")) c.fail("expected ']'", ["]"])
        c.p++
        accessors.push({ _tag: "Index", index: index! })
        continue
      }
      if (!c.peek(".")) break
      c.p++
      if (c.peek("@")) {
        c.p++
        const metaAt = c.p
        const meta = c.identifier()
        if (meta === undefined || !(metaFields as ReadonlyArray<string>).includes(meta)) {
          c.fail(
            `unknown occurrence metadata @${meta ?? ""}`,
            metaFields.map((m) => `@${m}`),
            metaAt
          )
        }
        if (accessors.length > 0 || returned) c.fail("@ metadata belongs to the occurrence itself", [], metaAt)
        return { at, frame, contract, occurrence: occ, returned: false, accessors: [], meta: meta! }
      }
      if (c.peek("$")) {
        c.p++
        const index = c.digits()
        if (index === undefined) c.fail("expected a position after $ ($0, $1, …)", ["$0"])
        accessors.push({ _tag: "Position", index: index! })
        continue
      }
      const memberAt = c.p
      const member = c.identifier()
      if (member === undefined) c.fail("expected a parameter or member name", [], memberAt)
      if (member === "return" && next === "F" && accessors.length === 0 && !returned) {
        returned = true
        continue
      }
      accessors.push({ _tag: "Member", name: member! })
    }
    return { at, frame, contract, occurrence: occ, returned, accessors }
  }
  if (next !== undefined && fieldNames.has(next) && !c.peek("."))
    return { at, frame, contract, field: next, returned: false, accessors: [] }
  return c.fail(`expected E (an event), F (a function) or a field after ${contract}`, ["E", "F", ...fieldNames], kindAt)
}

const selectorOf = (c: Cursor, kind: "E" | "F"): Ast.Selector => {
  if (c.eat("*")) return { _tag: "Any" }
  const nameAt = c.p
  const name = c.identifier()
  if (name === undefined) return c.fail(`expected ${kind === "E" ? "an event" : "a function"} name or *`, ["*"], nameAt)
  if (!c.peek("(")) return { _tag: "Named", name }
  c.p++
  const types: Array<string> = []
  c.ws()
  if (c.eat(")")) return { _tag: "Named", name, types }
  for (;;) {
    c.ws()
    types.push(solidityType(c))
    if (c.eat(")")) return { _tag: "Named", name, types }
    c.expect(",", "',' or ')'")
  }
}

/** A canonical ABI type: `uint256`, `address[]`, `(uint256,address)[2]`. */
const solidityType = (c: Cursor): string => {
  const typeAt = c.p
  let text: string
  if (c.peek("(")) {
    c.p++
    const inner: Array<string> = []
    c.ws()
    if (!c.eat(")")) {
      for (;;) {
        c.ws()
        inner.push(solidityType(c))
        if (c.eat(")")) break
        c.expect(",", "',' or ')'")
      }
    }
    text = `(${inner.join(",")})`
  } else {
    const m = /^[a-z][a-z0-9]*/.exec(c.rest())
    if (m === null) return c.fail("expected an ABI type (uint256, address, bytes32, …)", ["uint256", "address"], typeAt)
    c.p += m[0].length
    text = m[0]
  }
  for (;;) {
    const m = /^\[[0-9]*\]/.exec(c.rest())
    if (m === null) return text
    c.p += m[0].length
    text += m[0]
  }
}

export const occurrence = (c: Cursor, parts: PathParts, kind: "E" | "F"): Ast.OccurrenceRef => {
  const o = parts.occurrence
  if (o === undefined || o.kind !== kind || parts.accessors.length > 0 || parts.returned || parts.meta !== undefined) {
    return c.fail(
      kind === "E" ? "expected an event: txN….Label.E.name" : "expected a function call: txN….Label.F.name",
      [],
      parts.at
    )
  }
  return { frame: parts.frame, contract: parts.contract!, ...o }
}

export const valueOf = (c: Cursor, parts: PathParts): Ast.Value => {
  if (parts.meta !== undefined) {
    return {
      _tag: "Meta",
      at: parts.at,
      ref: occurrence(c, { ...parts, meta: undefined }, parts.occurrence!.kind),
      field: parts.meta
    }
  }
  if (parts.occurrence !== undefined) {
    if (parts.accessors.length === 0 && !parts.returned) {
      return c.fail("expected a parameter after the event or function (….E.Transfer.value) or .@metadata", [], parts.at)
    }
    const ref = occurrence(c, { ...parts, accessors: [], returned: false }, parts.occurrence.kind)
    return { _tag: "Field", at: parts.at, ref, returned: parts.returned, path: parts.accessors }
  }
  if (parts.field !== undefined) {
    return {
      _tag: "FrameField",
      at: parts.at,
      frame: parts.frame,
      ...(parts.contract === undefined ? {} : { contract: parts.contract }),
      field: parts.field
    }
  }
  return c.fail(
    "expected a value: a field (tx1.from), a parameter (….E.Transfer.value) or metadata (….@address)",
    [],
    parts.at
  )
}

// ---------------------------------------------------------------- operators and operands
