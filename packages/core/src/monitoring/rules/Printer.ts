/**
 * The normalised text of a watch rule: what `vigil rules check` prints and what a bot stores. Parsing the printed
 * text gives the same tree back (a property test holds it to that). `system.noMatches(E)` prints as `!E`, the
 * comma as `&&`, numbers in decimal, addresses and bytes in lower case, strings in double quotes.
 */
import type * as Ast from "./Ast.ts"
import { isOccurrence } from "./Ast.ts"

const precedence = (e: Ast.Expr): number => (e._tag === "Or" ? 1 : e._tag === "And" ? 2 : e._tag === "Not" ? 3 : 4)

/** The text of a frame variable. */
export const frame = (f: Ast.FrameRef): string =>
  `tx${f.tx}${f.itx === undefined ? "" : f.itx === "any" ? ".any" : `.itx${f.itx}`}`

const selector = (s: Ast.Selector): string =>
  s._tag === "Any" ? "*" : s.types === undefined ? s.name : `${s.name}(${s.types.join(",")})`

/** The text of an occurrence reference. */
export const occurrence = (o: Ast.OccurrenceRef): string =>
  `${frame(o.frame)}.${o.contract}.${o.kind}.${selector(o.selector)}${o.occurrence === undefined ? "" : `#${o.occurrence}`}`

const accessor = (a: Ast.Accessor): string =>
  a._tag === "Member" ? `.${a.name}` : a._tag === "Position" ? `.$${a.index}` : `[${a.index}]`

/** The text of a value. */
export const value = (v: Ast.Value): string => {
  switch (v._tag) {
    case "Field":
      return `${occurrence(v.ref)}${v.returned ? ".return" : ""}${v.path.map(accessor).join("")}`
    case "Meta":
      return `${occurrence(v.ref)}.@${v.field}`
    case "FrameField":
      return `${frame(v.frame)}${v.contract === undefined ? "" : `.${v.contract}`}.${v.field}`
  }
}

const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`

const operand = (o: Ast.Operand): string => {
  switch (o._tag) {
    case "Number":
      return o.value.toString()
    case "Address":
    case "Bytes":
      return o.value
    case "Bool":
      return String(o.value)
    case "String":
      return quote(o.value)
    case "Placeholder":
      return `\${${o.name}}`
    default:
      return value(o)
  }
}

/** The normalised text of an expression. */
export const print = (e: Ast.Expr): string => {
  const child = (c: Ast.Expr, min: number) => (precedence(c) < min ? `(${print(c)})` : print(c))
  switch (e._tag) {
    case "Or":
      return `${child(e.left, 1)} || ${child(e.right, 2)}`
    case "And":
      return `${child(e.left, 2)} && ${child(e.right, 3)}`
    case "Not":
      return `!${child(e.expr, 3)}`
    case "Constant":
      return String(e.value)
    case "Emitted":
      return `system.emitted(${occurrence(e.ref)})`
    case "Invoked":
      return `system.invoked(${occurrence(e.ref)})`
    case "Reentrant":
      return `system.reentrant(${occurrence(e.ref)})`
    case "Reverted":
      return `system.reverted(${isOccurrence(e.target) ? occurrence(e.target) : frame(e.target)})`
    case "Created":
      return `system.created(${frame(e.frame)})`
    case "NativeTransfer":
      return `system.nativeTransfer(${frame(e.frame)}${e.contract === undefined ? "" : `.${e.contract}`})`
    case "InGroup":
      return `system.inGroup(${value(e.value)}, ${quote(e.group)})`
    case "Compare":
      return `system.${e.comparator}(${value(e.left)}, ${e.operator}, ${operand(e.right)})`
    case "Count":
      return `system.countCompare(${occurrence(e.ref)}, ${e.operator}, ${operand(e.right)})`
    case "Sum":
      return `system.sumCompare(${value(e.value)}, ${e.operator}, ${operand(e.right)})`
  }
}
