/**
 * No port (nor service) of core is wider than its role: every `Context.Service` whose shape is written out has at
 * most 7 members, read from the source with TypeScript's own parser.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { assert, describe, it } from "vitest"

const src = fileURLToPath(new URL("../src", import.meta.url))

const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })

/** Each `class X extends Context.Service<X, { … }>()(…)` of a file: its name and how many members its shape has. */
const servicesOf = (file: string) => {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const found: Array<{ readonly name: string; readonly members: number }> = []
  const visit = (node: ts.Node) => {
    if (ts.isClassDeclaration(node) && node.name !== undefined) {
      for (const clause of node.heritageClauses ?? [])
        for (const type of clause.types) {
          // Context.Service<Self, Shape>()(key): the call's callee is the generic call carrying the shape.
          let expression: ts.Expression = type.expression
          while (ts.isCallExpression(expression)) {
            const shape = expression.typeArguments?.[1]
            if (
              shape !== undefined &&
              ts.isTypeLiteralNode(shape) &&
              expression.expression.getText(source) === "Context.Service"
            )
              found.push({ name: node.name.text, members: shape.members.length })
            expression = expression.expression
          }
        }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe("ports", () => {
  const services = walk(src).flatMap((file) => servicesOf(file).map((s) => ({ ...s, file: relative(src, file) })))

  it("finds the ports it is about (the checker reads the source it should)", () => {
    const names = services.map((s) => s.name)
    for (const port of ["IntelIndex", "Versions", "Administration", "WebhookStore", "Destinations", "FollowStore"])
      assert.include(names, port)
    assert.isAbove(services.length, 20)
  })

  it("has none wider than 7 members", () => {
    const wide = services.filter((s) => s.members > 7).map((s) => `${s.file}: ${s.name} has ${s.members}`)
    assert.deepStrictEqual(wide, [])
  })
})
