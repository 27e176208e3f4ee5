// Runs the Effect language service's diagnostics over every source and test file; any error or warning fails the check.
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
// tsconfig.test.json holds every package's sources and tests (the bench's and the examples' too, under the base
// settings, which are the strictest), so one run checks them all. Running each package's own project as well
// checked the shared sources once per package that imports them, for nothing more.
const projects = ["tsconfig.test.json"]

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
