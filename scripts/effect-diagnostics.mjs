// Runs the Effect language service's diagnostics over every project; any error or warning fails the check.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const projects = [
  "packages/core",
  "packages/adapter-memory",
  "packages/adapter-sqlite",
  "packages/adapter-postgres",
  "packages/adapter-http",
  "packages/adapter-evm",
  "packages/adapter-delivery",
  "packages/cli",
  "packages/engine",
  "examples",
  "bench",
  "tsconfig.test.json"
]

let failed = false
for (const project of projects) {
  const tsconfig = project.endsWith(".json") ? project : `${project}/tsconfig.json`
  const result = spawnSync(
    "node_modules/.bin/effect-language-service",
    ["diagnostics", "--project", `${root}${tsconfig}`, "--strict", "--format", "text"],
    { cwd: root, encoding: "utf8" }
  )
  const summary = result.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`effect diagnostics ${tsconfig}: ${summary}`)
  if (result.status !== 0) {
    failed = true
    console.log(result.stdout, result.stderr)
  }
}
process.exit(failed ? 1 : 0)
