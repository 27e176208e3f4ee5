/**
 * The built-in official lists: the README's quick start run as written on a fresh folder (a new store answers a
 * sanctioned address BLOCK with its SDN evidence and the snapshot's date), the snapshot's own README held to the
 * file, and the snapshot rebuilt from the publishers' files by its script.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"
import { hasSharedData, missingSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { runVigil, serve, tempDir } from "./VigilProcess.ts"

const repository = fileURLToPath(new URL("../../..", import.meta.url))
const readme = readFileSync(join(repository, "README.md"), "utf8")
const builtinDir = join(repository, "packages/engine/builtin")

interface Snapshot {
  readonly lists: ReadonlyArray<{
    readonly list: string
    readonly kind: string
    readonly asOf: string
    readonly origin: string
    readonly records: ReadonlyArray<{ readonly address: string; readonly delistedAt?: string }>
  }>
}
const snapshot = JSON.parse(readFileSync(join(builtinDir, "official-lists.json"), "utf8")) as Snapshot
const listOf = (name: string) => snapshot.lists.find((l) => l.list === name)!

/** The README's quick start: the block of commands after "Then, in another terminal". */
const quickStart = () => {
  const start = readme.indexOf("Then, in another terminal:")
  const block = readme.slice(readme.indexOf("```sh\n", start) + 6, readme.indexOf("\n```", start + 30))
  return block.replace(/\\\n\s*/g, "").split("\n")
}

/** Every `"key":value` pair (a string or a number) a README comment shows, as JSON text. */
const shownPairs = (comment: string) => [...comment.matchAll(/"[A-Za-z_]+":("[^"]*"|-?[0-9.]+)/g)].map((m) => m[0])

describe("the README's quick start", () => {
  it("serves a new store that answers an SDN-listed address BLOCK, with its SDN evidence and the snapshot's date", async () => {
    const lines = quickStart()
    const cwd = tempDir()
    // `npm start` builds, then runs `vigil serve` as the root package.json says; the default store, a free port.
    const pkg = JSON.parse(readFileSync(join(repository, "package.json"), "utf8")) as {
      scripts: Record<string, string>
    }
    assert.match(pkg.scripts.start!, /node packages\/cli\/dist\/bin\.js serve$/)
    const server = await serve(cwd, { VIGIL_BUILTIN_LISTS: undefined, VIGIL_DB: undefined })
    const base = (url: string) => url.replace("http://127.0.0.1:8080", server.url)

    const healthAt = lines.findIndex((l) => l.startsWith("curl http://127.0.0.1:8080/health"))
    const health = await fetch(base(lines[healthAt]!.split(" ")[1]!))
    assert.strictEqual(health.status, 200)
    const body = (await health.json()) as Record<string, unknown>
    const shown = JSON.parse(lines[healthAt + 1]!.replace(/^# /, "")) as Record<string, unknown>
    assert.deepStrictEqual(Object.keys(body).sort(), Object.keys(shown).sort())
    assert.deepStrictEqual(body.storage, shown.storage)
    const today = new Date().toISOString().slice(0, 10)
    assert.deepStrictEqual(
      body.lists,
      (shown.lists as ReadonlyArray<{ list: string; as_of: string }>).map((l) => ({
        ...l,
        age_days: Math.round((Date.parse(today) - Date.parse(l.as_of)) / 86_400_000)
      }))
    )

    const keysLine = lines.find((l) => l.startsWith("npx vigil keys create"))!
    const name = /--name "([^"]+)"/.exec(keysLine)![1]!
    const issued = await runVigil(cwd, {}, ["keys", "create", "--name", name])
    assert.strictEqual(issued.code, 0, issued.stderr)
    const key = (JSON.parse(issued.stdout) as { key: string }).key

    const postAt = lines.findIndex((l) => l.startsWith("curl -X POST"))
    const post = lines[postAt]!
    const url = /curl -X POST (\S+)/.exec(post)![1]!
    const headers = Object.fromEntries(
      [...post.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1]!, m[2]!.replace("vgl_…", key)])
    )
    const data = /-d '([^']+)'/.exec(post)![1]!
    const answer = await fetch(base(url), { method: "POST", headers, body: data })
    assert.strictEqual(answer.status, 200)
    const text = await answer.text()
    const result = JSON.parse(text) as {
      recommendation: { action: string }
      signals: ReadonlyArray<{ evidence: { list: string; authority: string; listAsOf?: string } }>
    }
    assert.strictEqual(result.recommendation.action, "BLOCK")
    assert.deepInclude(result.signals[0]!.evidence, {
      list: "ofac-sdn",
      authority: "official",
      listAsOf: listOf("ofac-sdn").asOf
    })
    // What the README shows of the answer is in it, field for field.
    const comment = lines[postAt + 1]!
    assert.match(comment, /^# \{/)
    for (const pair of shownPairs(comment)) assert.include(text, pair)
  })

  it("says which lists a new store starts with, and their dates, as the snapshot holds them", () => {
    const said = readme.replace(/\s+/g, " ")
    assert.include(
      said,
      `the digital-currency addresses of OFAC's SDN list as of ${listOf("ofac-sdn").asOf} and Tether's USDT freezes on Ethereum up to ${listOf("usdt-ethereum").asOf}`
    )
  })
})

describe("the built-in snapshot", () => {
  const notes = readFileSync(join(builtinDir, "README.md"), "utf8")
  const row = (list: string) =>
    notes
      .split("\n")
      .find((l) => l.startsWith(`| \`${list}\``))!
      .split("|")
      .map((c) => c.trim())

  it("is described by its README: dates, counts, checksums and blocks as in the file", () => {
    const sdn = listOf("ofac-sdn")
    const [, , , sdnAsOf, sdnCount, sdnFrom] = row("ofac-sdn")
    assert.strictEqual(sdnAsOf, sdn.asOf)
    assert.strictEqual(sdnCount, String(sdn.records.length))
    assert.include(sdnFrom, /sha256 ([0-9a-f]{64})/.exec(sdn.origin)![1]!)
    const usdt = listOf("usdt-ethereum")
    const [, , , usdtAsOf, usdtCount, usdtFrom] = row("usdt-ethereum")
    assert.strictEqual(usdtAsOf, usdt.asOf)
    const ended = usdt.records.filter((r) => r.delistedAt !== undefined).length
    assert.strictEqual(usdtCount, `${usdt.records.length} (${usdt.records.length - ended} in force, ${ended} ended)`)
    const [, from, to] = /blocks (\d+)–(\d+)/.exec(usdt.origin)!
    assert.include(usdtFrom, `block ${from}`)
    assert.include(usdtFrom, `to block ${to}`)
    assert.include(notes.replace(/\s+/g, " "), `reads on from block ${to}`)
    assert.isBelow(readFileSync(join(builtinDir, "official-lists.json")).length, 512 * 1024)
  })

  it.skipIf(!hasSharedData)(
    `is what its script rebuilds from the publishers' files${hasSharedData ? "" : ` (${missingSharedData})`}`,
    () => {
      const out = join(tempDir(), "rebuilt.json")
      // The SDN's digital-currency subset holds every party with an address, as the full file does.
      const stdout = execFileSync(
        process.execPath,
        [
          join(repository, "packages/engine/scripts/build-builtin-lists.mjs"),
          "--sdn",
          sharedData(
            "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
          ),
          "--usdt",
          sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv"),
          "--out",
          out
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }
      )
      assert.include(stdout, "ofac-sdn: ")
      const rebuilt = JSON.parse(readFileSync(out, "utf8")) as Snapshot
      for (const list of snapshot.lists) {
        const again = rebuilt.lists.find((l) => l.list === list.list)!
        assert.deepStrictEqual({ ...again, origin: "" }, { ...list, origin: "" })
      }
      // The event export is the same file, so its origin (blocks and checksum) is too.
      assert.strictEqual(rebuilt.lists[1]!.origin, listOf("usdt-ethereum").origin)
    }
  )

  it.skipIf(!hasSharedData)(
    "leaves out, and says it leaves out, the SDN's addresses of networks it does not screen",
    () => {
      const stderr = execFileSync(
        process.execPath,
        [
          "-e",
          `import("@vigil/core").then(({ Ingestion }) => {
           const p = Ingestion.OfacSdnXml.make()
           p.write(require("node:fs").readFileSync(process.argv[1], "utf8"))
           p.end()
           const s = p.skipped()
           console.log(JSON.stringify({ count: s.count, tickers: [...new Set(s.reasons.map((r) => r.split(" ")[2].replace(":", "")))] }))
         })`,
          sharedData(
            "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
          )
        ],
        { encoding: "utf8", cwd: repository }
      )
      const { count, tickers } = JSON.parse(stderr) as { count: number; tickers: ReadonlyArray<string> }
      const said = notes.replace(/\s+/g, " ")
      const [, named, entries] = /filed under ([A-Z, and]+): (\d+) entries/.exec(said)!
      assert.deepStrictEqual(
        named!
          .replace(" and ", ", ")
          .split(", ")
          .map((t) => t.trim())
          .sort(),
        [...tickers].sort()
      )
      assert.strictEqual(Number(entries), count)
    }
  )
})
