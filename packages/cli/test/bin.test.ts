/** The `vigil` executable as a user runs it from the repository after `npm ci && npm start` (or `npm run build`). */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Version } from "@vigil/core"
import { assert, describe, it } from "vitest"

const repository = fileURLToPath(new URL("../../..", import.meta.url))

describe("the vigil bin", () => {
  it("is linked into node_modules/.bin and runs as an executable", () => {
    const out = execFileSync("node_modules/.bin/vigil", ["--version"], { cwd: repository, encoding: "utf8" })
    assert.include(out, Version.version)
  })

  it("is what `npx vigil` finds in the repository", () => {
    const out = execFileSync("npx", ["--no-install", "vigil", "detect", "0x8589427373D6D84E98730D7795D8f6f8731FDA16"], {
      cwd: repository,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    })
    assert.deepInclude(JSON.parse(out), { valid: true, family: "evm" })
  })
})
