/**
 * The packages as a user installs them: `npm pack` of core, the SQLite and HTTP adapters (the engine reads chains'
 * nodes through the latter) and the engine, installed into a fresh project outside the repository, then a plain
 * Node script that screens an OFAC-listed address through `createVigil`, on the built-in lists and after an ingest. Needs the built `dist/` (`npm test` builds first) and the npm cache the repository's own
 * install filled. better-sqlite3's native build is not this test's subject: its install script is skipped and
 * the binary the repository built is copied in (a source build takes about 80 s).
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "vitest"
import { hasSharedData, missingSharedData, sharedData } from "@vigil/core-test/SharedData.ts"

const repository = fileURLToPath(new URL("../../..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "vigil-packed-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const npm = (args: ReadonlyArray<string>, cwd: string) =>
  execFileSync("npm", [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const sdn = sharedData(
  "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
)
/** The Ronin Bridge exploiter (Lazarus Group), on the SDN list since 2022-04-14. */
const lazarus = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"

describe.skipIf(!hasSharedData)(`packed install${hasSharedData ? "" : ` (${missingSharedData})`}`, () => {
  it("installs the packed packages into a fresh project and screens an OFAC-listed address through createVigil", () => {
    const tarballs = join(work, "tarballs")
    mkdirSync(tarballs)
    npm(
      [
        "pack",
        "--silent",
        "--pack-destination",
        tarballs,
        "-w",
        "@vigil/core",
        "-w",
        "@vigil/adapter-sqlite",
        "-w",
        "@vigil/adapter-evm",
        "-w",
        "@vigil/adapter-delivery",
        "-w",
        "@vigil/engine"
      ],
      repository
    )
    const packed = readdirSync(tarballs).sort()
    assert.deepStrictEqual(packed, [
      "vigil-adapter-delivery-0.1.0.tgz",
      "vigil-adapter-evm-0.1.0.tgz",
      "vigil-adapter-sqlite-0.1.0.tgz",
      "vigil-core-0.1.0.tgz",
      "vigil-engine-0.1.0.tgz"
    ])

    const project = join(work, "project")
    mkdirSync(project)
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        name: "screening-host",
        private: true,
        type: "module",
        dependencies: Object.fromEntries(
          packed.map((t) => [t.replace(/^vigil-(.*)-0\.1\.0\.tgz$/, "@vigil/$1"), `file:${join(tarballs, t)}`])
        )
      })
    )
    npm(["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], project)
    const nativeBinary = join(
      dirname(createRequire(import.meta.url).resolve("better-sqlite3/package.json")),
      "build/Release/better_sqlite3.node"
    )
    const target = join(project, "node_modules/better-sqlite3/build/Release")
    mkdirSync(target, { recursive: true })
    copyFileSync(nativeBinary, join(target, "better_sqlite3.node"))

    writeFileSync(
      join(project, "screen.mjs"),
      `import { createVigil } from "@vigil/engine"
const vigil = createVigil({ db: "./screening.db" })
const builtin = await vigil.screen(process.argv[3])
const ingested = await vigil.ingest({ kind: "ofac-sdn-xml", input: process.argv[2] })
const result = await vigil.screen(process.argv[3])
const batch = await vigil.screenBatch([process.argv[3], "not-an-address"])
await vigil.close()
console.log(JSON.stringify({ builtin, ingested, result, summary: batch.summary }))
`
    )
    const out = JSON.parse(
      execFileSync(process.execPath, ["screen.mjs", sdn, lazarus], { cwd: project, encoding: "utf8" })
    )
    // A new database starts with the built-in lists the package ships.
    assert.strictEqual(out.builtin.recommendation.action, "BLOCK")
    assert.strictEqual(out.builtin.signals[0].evidence.list, "ofac-sdn")
    assert.strictEqual(out.builtin.signals[0].evidence.listAsOf, "2025-11-19")
    assert.strictEqual(out.ingested.list, "ofac-sdn")
    assert.isAbove(out.ingested.records, 100)
    assert.strictEqual(out.result.address, lazarus.toLowerCase())
    assert.isTrue(out.result.flags.sanctioned)
    assert.strictEqual(out.result.risk_level, "critical")
    assert.strictEqual(out.result.recommendation.action, "BLOCK")
    assert.isTrue(out.result.metadata.is_complete)
    assert.deepInclude(out.summary, { total: 2, successful: 1, failed: 1, critical: 1 })
  }, 180_000)
})
