/** Integration: real OFAC and Tether data ingested into a real SQLite file, then screened. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IngestCommand } from "@vigil/cli"
import { Chain, IntelIndex, Screening, SystemAddresses } from "@vigil/core"
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
const explorerLabels = sharedData("labels/brianleect-etherscan-labels/data/etherscan/combined/combinedAllLabels.json")
const explorerOfacFolder = sharedData("labels/dawsbot-eth-labels/data/etherscan/ofac-sanctions-lists/accounts.json")
const router = "0xd90e2f925DA726b50C4Ed8D0Fb90Ad053324F31b"

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
  const run = <A, E>(
    effect: Effect.Effect<
      A,
      E,
      Screening.Screening | IntelIndex.IntelIndex | IntelIndex.Versions | IntelIndex.Administration
    >
  ) => runtime.runPromise(effect)
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
    const before = await screen(router, "2024-06-01")
    assert.isTrue(before.flags.sanctioned)
    assert.strictEqual(before.recommendation.action, "BLOCK")
    assert.match(before.entity.name, /TORNADO/)
    const after = await screen(router)
    assert.isFalse(after.flags.sanctioned)
    assert.strictEqual(after.risk_level, "minimal")
  })

  it("says it cannot date the router's de-listing between the two stored SDNs, and answers either end", async () => {
    const between = await screen(router, "2025-06-01")
    assert.isFalse(between.metadata.is_complete)
    assert.strictEqual(between.recommendation.action, "REVIEW")
    assert.strictEqual(between.confidence, 0)
    assert.deepStrictEqual(between.metadata.warnings, [
      "ofac-sdn: this address's listing ended between its versions of 2025-03-04 and 2025-11-19, so whether it was listed on 2025-06-01 is not known"
    ])
    assert.include(
      between.recommendation.details,
      "falls between two stored versions of ofac-sdn (2025-03-04 and 2025-11-19)"
    )
    // OFAC's file states no de-listing date: the evidence gives the two versions around it, not a date of its own.
    const sdn = between.signals.find((s) => s.evidence.list === "ofac-sdn")
    assert.isUndefined(sdn?.evidence.delistedAt)
    assert.deepStrictEqual(sdn?.evidence.delistedBetween, { lastListed: "2025-03-04", firstUnlisted: "2025-11-19" })
    const atOld = await screen(router, "2025-03-04")
    assert.deepStrictEqual([atOld.metadata.is_complete, atOld.recommendation.action], [true, "BLOCK"])
    const atNew = await screen(router, "2025-11-19")
    assert.deepStrictEqual([atNew.metadata.is_complete, atNew.flags.sanctioned], [true, false])
    // An address both SDNs name is not in doubt between them.
    const lazarus = await screen("0x098B716B8Aaf21512996dC57EB0615e2383E2f96", "2025-06-01")
    assert.deepStrictEqual([lazarus.metadata.is_complete, lazarus.recommendation.action], [true, "BLOCK"])
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
      // The zero address is in the events (a freeze recorded at it), but it is nobody's wallet.
      if (SystemAddresses.of(address) !== undefined) {
        assert.deepStrictEqual([r.entity.type, r.flags.blacklisted, r.score], ["system", false, 0], address)
        continue
      }
      assert.isTrue(r.flags.blacklisted && r.score >= 60, address)
    }
    for (const address of released) assert.isFalse((await screen(address)).flags.blacklisted, address)
  })

  it("does not call Tornado Cash sanctioned today on the word of explorer label sets; it was, as of 2025-01-01", async () => {
    const labels = await ingest({
      kind: "labels",
      input: explorerLabels,
      list: "etherscan-labels",
      source: "Etherscan"
    })
    const folder = await ingest({
      kind: "labels",
      input: explorerOfacFolder,
      format: "explorer-accounts",
      category: "sanctions",
      list: "etherscan-ofac-folder",
      source: "Etherscan"
    })
    assert.deepStrictEqual([labels.authority, folder.authority], ["scraped", "scraped"])
    const today = await screen(router)
    assert.isFalse(today.flags.sanctioned)
    assert.notInclude(["BLOCK"], today.recommendation.action)
    assert.notStrictEqual(today.risk_level, "critical")
    const reported = today.signals.filter((s) => s.type === "sanctions_reported")
    assert.deepStrictEqual(reported.map((s) => s.evidence.list).sort(), ["etherscan-labels", "etherscan-ofac-folder"])
    for (const s of reported) {
      assert.strictEqual(s.evidence.authority, "scraped")
      assert.include(s.summary, "Sanctions reported by Etherscan")
      assert.include(
        s.summary,
        `not on the official lists in force on ${today.metadata.as_of} (ofac-sdn of 2025-11-19, usdt-ethereum of 2023-02-20)`
      )
    }
    assert.isFalse(today.signals.some((s) => s.type === "sanctions_match"))
    const then = await screen(router, "2025-01-01")
    assert.isTrue(then.flags.sanctioned)
    assert.strictEqual(then.recommendation.action, "BLOCK")
    assert.strictEqual(then.signals[0]?.evidence.authority, "official")
    // Every address the explorer folder calls sanctioned is sanctioned exactly when the official list names it,
    // and below BLOCK otherwise.
    const claimed = (JSON.parse(readFileSync(explorerOfacFolder, "utf8")) as Array<{ address: string }>).map((e) =>
      e.address.toLowerCase()
    )
    let unconfirmed = 0
    for (const address of claimed) {
      const r = await screen(address)
      const official = r.signals.some((s) => s.type === "sanctions_match" && s.evidence.authority === "official")
      assert.strictEqual(r.flags.sanctioned, official, address)
      if (!official) {
        unconfirmed++
        assert.notStrictEqual(r.recommendation.action, "BLOCK", address)
      }
    }
    assert.isAtLeast(unconfirmed, 30)
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

describe.skipIf(!hasSharedData)("answering for a day before a list's oldest stored version (SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-lookback-"))
  const runtime = ManagedRuntime.make(
    Screening.Screening.layer.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: join(dir, "vigil.db") })))
  )
  const ingest = (spec: IngestCommand.SourceSpec) => runtime.runPromise(IngestCommand.ingestOne(spec))
  const screen = (address: string, asOf?: string) =>
    runtime.runPromise(
      Effect.flatMap(Effect.service(Screening.Screening), (s) => s.screen(address, asOf === undefined ? {} : { asOf }))
    )
  afterAll(async () => {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("never answers ALLOW for a day the stored snapshots cannot vouch for, and says which list and why", async () => {
    // Only the SDN of 2025-11-19: Tornado Cash's router was de-listed in March 2025, so this file does not name it.
    await ingest({ kind: "ofac-sdn-xml", input: sdnNew })
    const today = await screen(router)
    assert.isTrue(today.metadata.is_complete)
    assert.strictEqual(today.recommendation.action, "ALLOW")
    assert.isUndefined(today.metadata.warnings)
    // The day the Treasury said it was sanctioned: the snapshot of 2025-11-19 cannot tell.
    const then = await screen(router, "2024-06-01")
    assert.isFalse(then.metadata.is_complete)
    assert.strictEqual(then.recommendation.action, "REVIEW")
    assert.strictEqual(then.confidence, 0)
    assert.include(
      then.recommendation.details,
      "2024-06-01 precedes the oldest stored version of ofac-sdn (2025-11-19)"
    )
    assert.deepStrictEqual(then.metadata.warnings?.length, 1)
    assert.include(then.metadata.warnings?.[0], "ofac-sdn has no stored version on or before 2024-06-01")
    // An address the snapshot names, listed long before: still BLOCK on that day, also incomplete.
    const listed = lines(sharedData(`${brave}/sanctioned_addresses_ETH.txt`))[0]!
    const old = await screen(listed, "2024-06-01")
    assert.strictEqual(old.recommendation.action, "BLOCK")
    assert.isFalse(old.metadata.is_complete)
    // The day of the snapshot itself is covered.
    assert.isTrue((await screen(router, "2025-11-19")).metadata.is_complete)
    // Tether's event log carries its whole history: a day before its version (2023-02-20) is covered by it, and
    // an address it froze in 2020 is answered from the log's own dates. The SDN still cannot vouch for 2021.
    await ingest({ kind: "usdt-events", input: usdtEvents })
    const before = await screen(router, "2021-01-01")
    assert.isFalse(before.metadata.is_complete)
    assert.deepStrictEqual(
      before.metadata.warnings?.map((w) => w.split(" ")[0]),
      ["ofac-sdn"],
      "only the snapshot list is named"
    )
    // After backfilling the older SDN (2025-03-04), which still names the router, that history is vouched for
    // from its date: the router is BLOCK on the day before the de-listing.
    await ingest({ kind: "ofac-sdn-xml", input: sdnOld, backfill: true })
    const backfilled = await screen(router, "2025-03-04")
    assert.isTrue(backfilled.metadata.is_complete)
    assert.strictEqual(backfilled.recommendation.action, "BLOCK")
  }, 60_000)
})

describe.skipIf(!hasSharedData)("backfilling the shared OFAC history (SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-backfill-"))
  const open = (name: string) =>
    ManagedRuntime.make(
      Screening.Screening.layer.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: join(dir, name) })))
    )
  const inOrder = open("in-order.db")
  const backfilled = open("backfilled.db")
  afterAll(async () => {
    await inOrder.dispose()
    await backfilled.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("answers every address on every date the same as in-order ingest when the older SDN comes second", async () => {
    await inOrder.runPromise(IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: sdnOld }))
    await inOrder.runPromise(IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: sdnNew }))
    await backfilled.runPromise(IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: sdnNew }))
    const refused = await backfilled.runPromiseExit(IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: sdnOld }))
    assert.isTrue(refused._tag === "Failure" && String(refused.cause).includes("--backfill"))
    const outcome = await backfilled.runPromise(
      IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: sdnOld, backfill: true })
    )
    assert.deepStrictEqual([outcome.version, outcome.backfilled], [2, true])

    const records = await inOrder.runPromise(
      Effect.gen(function* () {
        const index = yield* IntelIndex.all
        const all = [
          ...lines(sharedData("sanctions/ofac-sdn-advanced-xml-history/sanctioned_addresses_ETH.2025-03-04.txt")),
          ...lines(sharedData(`${brave}/sanctioned_addresses_ETH.txt`)),
          ...lines(sharedData(`${brave}/sanctioned_addresses_XBT.txt`)),
          ...lines(sharedData(`${brave}/sanctioned_addresses_TRX.txt`))
        ]
        return yield* index.lookup([
          ...new Set(all.map((a) => Chain.detect(a)).flatMap((d) => (d.valid ? [d.normalized] : [])))
        ])
      })
    )
    const addresses = [...new Set(records.map((r) => r.address))]
    // The dates where an answer can change, and the days either side of each.
    const shift = (date: string, days: number) =>
      new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
    const edges = new Set(records.flatMap((r) => [r.listedAt, ...(r.delistedAt === undefined ? [] : [r.delistedAt])]))
    const dates = [...new Set([...edges].flatMap((d) => [shift(d, -1), d, shift(d, 1)]))].filter(
      (d) => d <= "2026-01-01"
    )
    assert.isAtLeast(addresses.length, 700)
    assert.isAtLeast(dates.length, 30)
    const answer = (runtime: typeof inOrder, address: string, asOf: string) =>
      runtime.runPromise(
        Effect.map(
          Effect.flatMap(Effect.service(Screening.Screening), (s) => s.screen(address, { asOf })),
          (r) => [r.score, r.recommendation.action, r.flags.sanctioned, r.signals.map((s) => s.evidence)] as const
        )
      )
    const differences: Array<string> = []
    for (const asOf of dates) {
      for (const address of addresses) {
        const a = JSON.stringify(await answer(inOrder, address, asOf))
        const b = JSON.stringify(await answer(backfilled, address, asOf))
        if (a !== b) differences.push(`${address} on ${asOf}: ${a} vs ${b}`)
      }
    }
    assert.deepStrictEqual(differences.slice(0, 5), [])
  }, 120_000)
})
