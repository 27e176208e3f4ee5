/** The boundary check (`scripts/check-boundaries.mjs`) run over small trees: it passes a clean one and names each break. */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "vitest"

const script = fileURLToPath(new URL("../../../scripts/check-boundaries.mjs", import.meta.url))
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** A tree of `files` (paths under `base`, by default packages/core/src), checked; the exit code and what was printed. */
const check = (files: Record<string, string>, base = "packages/core/src") => {
  const root = mkdtempSync(join(tmpdir(), "vigil-boundaries-"))
  dirs.push(root)
  for (const [path, text] of Object.entries(files)) {
    const file = join(root, base, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  const run = spawnSync(process.execPath, [script, root], { encoding: "utf8" })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

const clean = {
  "index.ts": 'export * from "./kernel/index.ts"\nexport * from "./screening/index.ts"\n',
  "kernel/index.ts": 'export * as Chain from "./Chain.ts"\n',
  "kernel/Chain.ts": "export const detect = (a: string) => a\n",
  "screening/index.ts": 'export * as Screening from "./Screening.ts"\n',
  "screening/Screening.ts": 'import { Chain } from "../kernel/index.ts"\nexport const screen = Chain.detect\n',
  "monitoring/index.ts": 'import { Screening } from "../screening/index.ts"\nexport const watch = Screening.screen\n'
}

describe("check-boundaries", () => {
  it("passes contexts that depend one way through their index.ts", () => {
    const { status, output } = check(clean)
    assert.strictEqual(status, 0, output)
  })

  it("refuses an import that reaches past another context's index.ts", () => {
    const { status, output } = check({
      ...clean,
      "screening/Screening.ts": 'import { detect } from "../kernel/Chain.ts"\nexport const screen = detect\n'
    })
    assert.strictEqual(status, 1)
    assert.include(output, 'screening/Screening.ts: "../kernel/Chain.ts": reaches into kernel/ past its index.ts')
  })

  it("refuses a dependency against the direction of the table", () => {
    const { status, output } = check({
      ...clean,
      "kernel/Chain.ts": 'import { Screening } from "../screening/index.ts"\nexport const detect = Screening\n'
    })
    assert.strictEqual(status, 1)
    assert.include(output, "kernel must not depend on screening")
  })

  it("keeps delivery from monitoring: channel kinds are monitoring's, opaque to delivery", () => {
    const { status, output } = check({
      ...clean,
      "delivery/index.ts": 'import { watch } from "../monitoring/index.ts"\nexport const send = watch\n'
    })
    assert.strictEqual(status, 1)
    assert.include(output, "delivery must not depend on monitoring")
  })

  it("refuses an import cycle, even inside one context", () => {
    const { status, output } = check({
      ...clean,
      "screening/Screening.ts": 'import { score } from "./Scoring.ts"\nexport const screen = score\n',
      "screening/Scoring.ts": 'import { screen } from "./Screening.ts"\nexport const score = () => screen\n'
    })
    assert.strictEqual(status, 1)
    assert.include(output, "import cycle screening/Scoring.ts -> screening/Screening.ts -> screening/Scoring.ts")
  })

  it("keeps monitoring's sub-contexts one way: bots may read rules, rules may not read bots", () => {
    const monitoring = {
      ...clean,
      "monitoring/rules/Checker.ts": "export const check = (s: string) => s\n",
      "monitoring/bots/Bots.ts": 'import { check } from "../rules/Checker.ts"\nexport const create = check\n'
    }
    assert.strictEqual(check(monitoring).status, 0, check(monitoring).output)
    const { status, output } = check({
      ...monitoring,
      "monitoring/rules/Checker.ts": 'import { create } from "../bots/Bots.ts"\nexport const check = create\n'
    })
    assert.strictEqual(status, 1)
    assert.include(output, "monitoring/rules must not depend on monitoring/bots")
  })

  it("keeps the outbound adapters and the engine off the inbound HTTP server", () => {
    const tree = {
      "packages/adapter-evm/src/EvmRpc.ts": 'import { ChainData } from "@vigil/core"\nexport const rpc = ChainData\n',
      "packages/engine/src/Outbound.ts": 'import { EvmRpc } from "@vigil/adapter-evm"\nexport const layer = EvmRpc\n'
    }
    assert.strictEqual(check(tree, ".").status, 0, check(tree, ".").output)
    const evm = check(
      {
        ...tree,
        "packages/adapter-evm/src/EvmRpc.ts": 'import { Api } from "@vigil/adapter-http"\nexport const rpc = Api\n'
      },
      "."
    )
    assert.strictEqual(evm.status, 1)
    assert.include(evm.output, 'packages/adapter-evm/src/EvmRpc.ts: "@vigil/adapter-http": an adapter must not import')
    const engine = check(
      {
        ...tree,
        "packages/engine/src/Outbound.ts": 'import { Api } from "@vigil/adapter-http"\nexport const layer = Api\n'
      },
      "."
    )
    assert.strictEqual(engine.status, 1)
    assert.include(engine.output, 'packages/engine/src/Outbound.ts: "@vigil/adapter-http": the engine must not import')
  })
})
