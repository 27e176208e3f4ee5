/**
 * `vigil demo` from a fresh folder to its first alert, as a new user runs it: a real anvil, a real `vigil serve`, a
 * real receiver. Also: the demo's token is what its source compiles to, and docs/monitoring.md shows its rule.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Solidity } from "@vigil/testkit"
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

const demoDir = fileURLToPath(new URL("../demo/", import.meta.url))
const docs = readFileSync(fileURLToPath(new URL("../../../docs/monitoring.md", import.meta.url)), "utf8")

/** Creation bytecode without its trailing metadata (which names the source file's path). */
const code = (hex: string) => hex.slice(0, hex.length - (parseInt(hex.slice(-4), 16) * 2 + 4))

describe("vigil demo", () => {
  it("reaches its first alert from nothing, printing every step as the call that does it", async () => {
    const out = await runVigil(tempDir(), {}, ["demo", "--timeout", "90"])
    assert.strictEqual(out.code, 0, out.stderr)
    const lines = out.stdout.split("\n")
    for (const step of [1, 2, 3, 4, 5, 6, 7, 8, 9])
      assert.isDefined(
        lines.find((l) => l.startsWith(`${step}. `)),
        `step ${step}`
      )
    assert.isDefined(
      lines.find((l) => /^ {3}\$ curl -X POST http:\/\/127\.0\.0\.1:\d+\/v1\/bots -H "x-api-key: vgl_/.test(l))
    )
    const tx = /transaction (0x[0-9a-f]{64})/.exec(out.stdout)![1]!
    const alert = lines[lines.findIndex((l) => l.startsWith("9. ")) + 1]!
    assert.include(alert, tx, "the alert names the transfer")
    assert.include(alert, "large DEMO transfers")
    // The same steps in the docs, with the same rule.
    const rule = /\((system\.uintCompare\([^)]*\))\)/.exec(lines.find((l) => l.startsWith("7. "))!)![1]!
    assert.include(docs, rule)
  }, 120_000)

  it("deploys the token its source compiles to", () => {
    const shipped = JSON.parse(readFileSync(`${demoDir}DemoToken.json`, "utf8")) as {
      abi: ReadonlyArray<unknown>
      bytecode: string
    }
    const compiled = Solidity.compile(`${demoDir}DemoToken.sol`).DemoToken!
    assert.deepStrictEqual(shipped.abi, compiled.abi)
    assert.strictEqual(code(shipped.bytecode), code(compiled.bytecode))
  })
})
