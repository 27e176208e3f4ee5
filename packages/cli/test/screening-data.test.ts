/** Integration: real OFAC and Tether data ingested into a real SQLite file, then screened. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IngestCommand } from "@vigil/cli"
import { Chain, IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { hasSharedData, sharedData } from "@vigil/core-test/SharedData.ts"

const brave = "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses"
const sdnOld = sharedData("sanctions/ofac-sdn-advanced-xml-history/sdn_advanced.2025-03-04.digital-currency-subset.xml")
const sdnNew = sharedData(`${brave}/sdn_advanced.digital-currency-subset.xml`)
const usdtEvents = sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv")

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")

describe.skipIf(!hasSharedData)("screening on the shared OFAC and Tether data (SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-data-"))
  const runtime = ManagedRuntime.make(
    Screening.Screening.layer.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: join(dir, "vigil.db") })))
  )
  const run = <A, E>(effect: Effect.Effect<A, E, Screening.Screening | IntelIndex.IntelIndex>) =>
    runtime.runPromise(effect)
  const ingest = (spec: IngestCommand.SourceSpec) => run(IngestCommand.ingestOne(spec))
  const screen = (address: string, asOf?: string) =>
    run(
      Effect.flatMap(Effect.service(Screening.Screening), (s) => s.screen(address, asOf === undefined ? {} : { asOf }))
    )

  beforeAll(async () => {
    await ingest({ kind: "ofac-sdn-xml", input: sdnOld })
    await ingest({ kind: "ofac-sdn-xml", input: sdnNew })
    await ingest({ kind: "usdt-events", input: usdtEvents })
  }, 60_000)
  afterAll(async () => {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("screens every address of the newest per-asset OFAC lists that is valid on a screened network as sanctioned, critical, BLOCK, whatever its ticker", async () => {
    const files = readdirSync(sharedData(brave)).filter((f) => /^sanctioned_addresses_[A-Z]+\.txt$/.test(f))
    const checked: Array<string> = []
    const wrong: Array<string> = []
    for (const file of files) {
      const ticker = file.slice("sanctioned_addresses_".length, -".txt".length)
      for (const address of lines(sharedData(`${brave}/${file}`))) {
        // The ticker does not decide the network: USDT on Omni is a Bitcoin address, and OFAC's entries have
        // slips (an address of one format under another ticker). Every address of a screened format counts.
        if (!Chain.detect(address).valid) continue
        checked.push(address)
        const r = await screen(address)
        if (!(
          r.flags.sanctioned &&
          r.risk_level === "critical" &&
          r.recommendation.action === "BLOCK" &&
          r.score >= 85
        )) {
          wrong.push(`${ticker} ${address}: ${r.score} ${r.risk_level} ${r.recommendation.action}`)
        }
      }
    }
    assert.deepStrictEqual(wrong, [])
    assert.isAtLeast(checked.length, 700, `checked ${checked.length} addresses`)
  })

  it("answers the Tornado Cash router differently before and after its 2025 de-listing", async () => {
    const router = "0xd90e2f925DA726b50C4Ed8D0Fb90Ad053324F31b"
    const before = await screen(router, "2024-06-01")
    assert.isTrue(before.flags.sanctioned)
    assert.strictEqual(before.recommendation.action, "BLOCK")
    assert.match(before.entity.name, /TORNADO/)
    const after = await screen(router)
    assert.isFalse(after.flags.sanctioned)
    assert.strictEqual(after.risk_level, "minimal")
  })

  it("de-lists every ETH address that left the list between the two snapshots, and keeps the rest", async () => {
    const old = new Set(
      lines(sharedData("sanctions/ofac-sdn-advanced-xml-history/sanctioned_addresses_ETH.2025-03-04.txt")).map((a) =>
        a.toLowerCase()
      )
    )
    const current = new Set(lines(sharedData(`${brave}/sanctioned_addresses_ETH.txt`)).map((a) => a.toLowerCase()))
    const removed = [...old].filter((a) => !current.has(a))
    assert.isAtLeast(removed.length, 70)
    for (const address of removed) {
      assert.isTrue((await screen(address, "2025-01-01")).flags.sanctioned, `${address} on 2025-01-01`)
      assert.isFalse((await screen(address)).flags.sanctioned, `${address} today`)
    }
  })

  it("flags every address still frozen in the USDT events as blacklisted and high or above; unfrozen ones not", async () => {
    const [header, ...rows] = lines(usdtEvents)
    const cols = header!.split(",")
    const at = (row: Array<string>, name: string) => row[cols.indexOf(name)] ?? ""
    const events = rows
      .map((l) => l.split(","))
      .filter((r) => at(r, "event_name") === "AddedBlackList" || at(r, "event_name") === "RemovedBlackList")
      .sort(
        (a, b) =>
          Number(at(a, "block_number")) - Number(at(b, "block_number")) ||
          Number(at(a, "log_index")) - Number(at(b, "log_index"))
      )
    const frozen = new Map<string, boolean>()
    for (const e of events) frozen.set(at(e, "_user").toLowerCase(), at(e, "event_name") === "AddedBlackList")
    const still = [...frozen].filter(([, f]) => f).map(([a]) => a)
    const released = [...frozen].filter(([, f]) => !f).map(([a]) => a)
    assert.isAtLeast(still.length, 780)
    for (const address of still) {
      const r = await screen(address)
      assert.isTrue(r.flags.blacklisted && r.score >= 60, address)
    }
    for (const address of released) assert.isFalse((await screen(address)).flags.blacklisted, address)
  })

  it("records both lists with their versions and provenance", async () => {
    const lists = await run(Effect.flatMap(Effect.service(IntelIndex.IntelIndex), (i) => i.lists))
    const sdn = lists.find((l) => l.list === "ofac-sdn")
    assert.strictEqual(sdn?.asOf, "2025-11-19")
    assert.isAbove(sdn?.delisted ?? 0, 0)
    const usdt = lists.find((l) => l.list === "usdt-ethereum")
    assert.strictEqual(usdt?.asOf, "2023-02-20")
  })
})
