// Enforces the dependency rule: core imports only `effect` and a short list of small pure libraries;
// adapters import core, never each other (so the outbound adapters never reach the inbound HTTP server); the engine,
// which composes the outbound adapters in a Node process, never imports the HTTP server either; no relative import
// leaves its own package. Inside core, the bounded
// contexts depend one way (kernel <- access, screening, delivery <- monitoring), a context reaches another only
// through its index.ts, and no module imports itself through a cycle. Inside monitoring, the sub-contexts follow the
// flow block -> facts -> rules -> alerts -> outbox -> channels and depend one way too (listed below).
// Imports are read with TypeScript's own scanner (static, re-export and dynamic imports alike).
// Usage: node scripts/check-boundaries.mjs [ROOT]   (ROOT defaults to the repository; tests pass a fixture tree)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = process.argv[2] ? resolve(process.argv[2]) + sep : fileURLToPath(new URL("..", import.meta.url))

/**
 * The contexts of core and the contexts each may import (through their index.ts). Files directly under
 * packages/core/src (the package index, the composition) may import every context's index.
 */
const contexts = {
  kernel: [],
  access: ["kernel"],
  screening: ["kernel"],
  delivery: ["kernel"],
  monitoring: ["kernel", "access", "screening", "delivery"]
}
const coreSrc = join(root, "packages/core/src")

/**
 * The sub-contexts of monitoring and those each may import. `rules` is the language (with ABIs), `chain` the
 * node port and the facts decoded from it, `alerts` an alert's record and message, `follow` the loop over all.
 */
const monitoringContexts = {
  rules: [],
  chain: ["rules"],
  contracts: ["rules", "chain"],
  alerts: ["rules", "chain"],
  bots: ["rules", "chain", "contracts", "alerts"],
  notifications: ["rules", "alerts", "bots"],
  follow: ["rules", "chain", "contracts", "alerts", "bots", "notifications"]
}
const monitoringSrc = join(coreSrc, "monitoring")

/** Pure, audited libraries core may use besides `effect` (no I/O, no Node APIs). */
const corePureLibraries = [
  "@noble/hashes",
  "@scure/base",
  "crc",
  "ipaddr.js",
  "lossless-json",
  "ox",
  "papaparse",
  "saxes",
  "yaml"
]

const packageOf = (specifier) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]

const isBuiltin = (specifier) => specifier.startsWith("node:") || builtinModules.includes(packageOf(specifier))

/** The adapters: inbound (the HTTP server) and outbound (storage, chains' nodes, deliveries). */
const adapters = [
  "adapter-http",
  "adapter-memory",
  "adapter-sqlite",
  "adapter-postgres",
  "adapter-evm",
  "adapter-delivery"
]

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
  ...adapters.map((name) => ({
    tree: `packages/${name}/src`,
    check: (s) => {
      const pkg = packageOf(s)
      if (pkg.startsWith("@vigil/") && pkg !== "@vigil/core") return `an adapter must not import ${pkg}`
      return undefined
    }
  })),
  {
    tree: "packages/engine/src",
    check: (s) => {
      const pkg = packageOf(s)
      if (pkg === "@vigil/adapter-http" || pkg === "@vigil/cli" || pkg === "@vigil/console")
        return `the engine must not import ${pkg} (it composes core with the outbound adapters only)`
      return undefined
    }
  }
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
  "packages/adapter-postgres",
  "packages/adapter-http",
  "packages/adapter-evm",
  "packages/adapter-delivery",
  "packages/engine",
  "packages/cli",
  "packages/testkit",
  "examples",
  "bench"
]
const ownPackage = (file) => packageRoots.find((p) => file.startsWith(join(root, p) + sep))

const problems = []
/** Core's module graph (file -> files it imports), for the cycle check. */
const coreGraph = new Map()

const contextOf = (file) => {
  const rel = relative(coreSrc, file)
  if (rel.startsWith("..")) return undefined
  const first = rel.split(sep)[0]
  return rel.includes(sep) ? first : "" // "" = a file at the top of core/src
}

/** The monitoring sub-context of a file ("" for a file at the top of monitoring), or undefined outside it. */
const subContextOf = (file) => {
  const rel = relative(monitoringSrc, file)
  if (rel.startsWith("..")) return undefined
  return rel.includes(sep) ? rel.split(sep)[0] : ""
}

/** A complaint about an import between monitoring's sub-contexts, or undefined. */
const checkMonitoringImport = (file, target) => {
  const from = subContextOf(file)
  const to = subContextOf(target)
  if (from === undefined || to === undefined || from === to || from === "") return undefined
  if (to === "") return `a monitoring sub-context must not import the top of monitoring (${relative(coreSrc, target)})`
  if (!(from in monitoringContexts)) return `unknown monitoring sub-context ${from}`
  if (!(to in monitoringContexts)) return `unknown monitoring sub-context ${to}`
  if (!monitoringContexts[from].includes(to)) return `monitoring/${from} must not depend on monitoring/${to}`
  return undefined
}

const resolveTs = (target) => (target.endsWith(".ts") ? target : `${target}.ts`)

/** A complaint about a relative import inside core, or undefined. */
const checkCoreImport = (file, target) => {
  const from = contextOf(file)
  const to = contextOf(target)
  if (from === undefined || to === undefined || to === from) return undefined
  if (to === "") return `a context must not import the top of core (${relative(coreSrc, target)})`
  if (!(to in contexts)) return `unknown context ${to}`
  if (target !== join(coreSrc, to, "index.ts")) return `reaches into ${to}/ past its index.ts`
  if (from !== "" && !(contexts[from] ?? []).includes(to)) return `${from} must not depend on ${to}`
  return undefined
}

for (const packageRoot of packageRoots) {
  const base = join(root, packageRoot)
  if (!existsSync(base)) continue
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
        if (file.startsWith(coreSrc + sep) && !file.endsWith(".d.ts")) {
          const complaint = checkCoreImport(file, resolveTs(target)) ?? checkMonitoringImport(file, resolveTs(target))
          if (complaint) problems.push(`${where}: "${specifier}": ${complaint}`)
          coreGraph.set(file, [...(coreGraph.get(file) ?? []), resolveTs(target)])
        }
        continue
      }
      const complaint = rule?.check(specifier)
      if (complaint) problems.push(`${where}: "${specifier}": ${complaint}`)
    }
  }
}

// Cycles among core's modules (depth-first search), each reported from its first module in name order.
const state = new Map()
const visit = (file, path) => {
  state.set(file, "open")
  for (const next of coreGraph.get(file) ?? []) {
    if (state.get(next) === "open") {
      const ring = path.slice(path.indexOf(next)).map((f) => relative(coreSrc, f))
      const start = ring.indexOf([...ring].sort()[0])
      const cycle = [...ring.slice(start), ...ring.slice(0, start), ring[start]]
      problems.push(`packages/core/src: import cycle ${cycle.join(" -> ")}`)
    } else if (!state.has(next)) visit(next, [...path, next])
  }
  state.set(file, "done")
}
for (const file of coreGraph.keys()) if (!state.has(file)) visit(file, [file])

const manifest = join(root, "packages/core/package.json")
const coreManifest = !existsSync(manifest) ? { dependencies: {} } : JSON.parse(readFileSync(manifest, "utf8"))
for (const dep of Object.keys({ ...coreManifest.dependencies, ...coreManifest.peerDependencies })) {
  if (dep !== "effect" && !corePureLibraries.includes(dep))
    problems.push(`packages/core/package.json: dependency ${dep} is not allowed in core`)
}

if (problems.length > 0) {
  console.error(`Dependency rule broken (${problems.length}):\n${problems.map((p) => `  ${p}`).join("\n")}`)
  process.exit(1)
}
console.log(
  "Dependency rule holds: core is pure, its contexts (and monitoring's) depend one way without cycles, adapters import only core."
)
