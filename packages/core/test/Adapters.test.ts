/** docs/adapters.md held to the tree: one row per adapter package, its ports in its source, its imports as declared. */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const page = readFileSync(join(root, "docs/adapters.md"), "utf8")

interface Row {
  readonly pkg: string
  readonly side: string
  readonly ports: ReadonlyArray<string>
  readonly imports: ReadonlyArray<string>
}

/** The rows of the page's tables whose first cell names a package. */
const rows: ReadonlyArray<Row> = page
  .split("\n")
  .filter((line) => /^\| `@vigil\//.test(line))
  .map((line) => {
    const [pkg, side, ports, imports] = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim())
    const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    return { pkg: names(pkg!)[0]!, side: side!, ports: names(ports!), imports: names(imports!) }
  })

const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })

const adapterDirs = readdirSync(join(root, "packages")).filter((d) => d.startsWith("adapter-"))

describe("docs/adapters.md", () => {
  it("has one row per adapter package, on the side the page says", () => {
    assert.deepStrictEqual(rows.map((r) => r.pkg).sort(), adapterDirs.map((d) => `@vigil/${d}`).sort())
    assert.deepStrictEqual(
      rows.filter((r) => r.side === "inbound").map((r) => r.pkg),
      ["@vigil/adapter-http"]
    )
    assert.isTrue(rows.every((r) => r.side === "inbound" || r.side === "outbound"))
  })

  it("lists as 'may import' exactly the @vigil packages each depends on", () => {
    for (const row of rows) {
      const manifest = JSON.parse(
        readFileSync(join(root, "packages", row.pkg.replace("@vigil/", ""), "package.json"), "utf8")
      ) as { dependencies?: Record<string, string> }
      const declared = Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith("@vigil/"))
      assert.deepStrictEqual([...row.imports].sort(), declared.sort(), row.pkg)
    }
  })

  it("names for each outbound adapter ports its source provides", () => {
    for (const row of rows.filter((r) => r.side === "outbound")) {
      const src = walk(join(root, "packages", row.pkg.replace("@vigil/", ""), "src"))
        .map((f) => readFileSync(f, "utf8"))
        .join("\n")
      assert.isNotEmpty(row.ports, row.pkg)
      for (const port of row.ports)
        assert.match(src, new RegExp(`\\b\\w+\\.${port}\\b`), `${row.pkg} does not reference ${port}`)
    }
  })
})
