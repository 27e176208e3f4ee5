// Enforces the dependency rule: core imports only `effect` and a short list of small pure libraries;
// adapters import core, never each other; no relative import leaves its own package.
// Imports are read with TypeScript's own scanner (static, re-export and dynamic imports alike).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Pure, audited libraries core may use besides `effect` (no I/O, no Node APIs). */
const corePureLibraries = ["@noble/hashes", "@scure/base", "crc", "papaparse", "saxes", "yaml"]

const packageOf = (specifier) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]

const isBuiltin = (specifier) => specifier.startsWith("node:") || builtinModules.includes(packageOf(specifier))

/** Rules per source tree: a function from an import specifier to a complaint, or undefined when allowed. */
const rules = [
  {
    tree: "packages/core/src",
    check: (s) => {
      if (isBuiltin(s)) return "core must not use Node APIs"
      const pkg = packageOf(s)
      if (pkg === "effect" || corePureLibraries.includes(pkg)) return undefined
      return `core may import only effect and ${corePureLibraries.join(", ")}`
    }
  },
  ...["adapter-memory", "adapter-sqlite", "adapter-http"].map((name) => ({
    tree: `packages/${name}/src`,
    check: (s) => {
      const pkg = packageOf(s)
      if (pkg.startsWith("@vigil/") && pkg !== "@vigil/core") return `an adapter must not import ${pkg}`
      return undefined
    }
  }))
]

const walk = (dir) =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? walk(path) : /\.tsx?$/.test(entry) ? [path] : []
  })

const packageRoots = [
  "packages/core",
  "packages/adapter-memory",
  "packages/adapter-sqlite",
  "packages/adapter-http",
  "packages/cli",
  "examples",
  "bench"
]
const ownPackage = (file) => packageRoots.find((p) => file.startsWith(join(root, p) + sep))

const problems = []
for (const packageRoot of packageRoots) {
  const base = join(root, packageRoot)
  for (const file of walk(base).filter(
    (f) => !f.includes(`${sep}dist${sep}`) && !f.includes(`${sep}node_modules${sep}`)
  )) {
    const rule = rules.find((r) => file.startsWith(join(root, r.tree) + sep))
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    for (const { fileName: specifier } of importedFiles) {
      const where = relative(root, file)
      if (specifier.startsWith(".")) {
        const target = resolve(dirname(file), specifier)
        if (ownPackage(target) !== packageRoot) problems.push(`${where}: "${specifier}" reaches into another package`)
        continue
      }
      const complaint = rule?.check(specifier)
      if (complaint) problems.push(`${where}: "${specifier}": ${complaint}`)
    }
  }
}

const coreManifest = JSON.parse(readFileSync(join(root, "packages/core/package.json"), "utf8"))
for (const dep of Object.keys({ ...coreManifest.dependencies, ...coreManifest.peerDependencies })) {
  if (dep !== "effect" && !corePureLibraries.includes(dep))
    problems.push(`packages/core/package.json: dependency ${dep} is not allowed in core`)
}

if (problems.length > 0) {
  console.error(`Dependency rule broken (${problems.length}):\n${problems.map((p) => `  ${p}`).join("\n")}`)
  process.exit(1)
}
console.log("Dependency rule holds: core is pure, adapters import only core.")
