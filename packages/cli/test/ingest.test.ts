/** End to end: `vigil ingest`, `vigil screen` and `vigil lists` as child processes on a real database file. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import Database from "better-sqlite3"
import { Chain } from "@vigil/core"
import { assert, describe, it } from "vitest"
import { hasSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { ingestWatchArgs, runVigil, spawnVigil, tempDir } from "./VigilProcess.ts"

const TORNADO = "0x8589427373D6D84E98730D7795D8f6f8731FDA16"

/**
 * Resolves once the database holds a staged (begun, uncommitted) version, read through a read-only connection;
 * rejects if the process ends first. Polls the file, so it waits for a state, not for a length of time.
 */
const stagedRecords = async (file: string, exited: Promise<unknown>) => {
  let ended = false
  void exited.then(() => (ended = true))
  for (;;) {
    if (ended) throw new Error("the ingest ended before it staged anything")
    if (existsSync(file)) {
      const db = new Database(file, { readonly: true, fileMustExist: true })
      try {
        const staged = db.prepare("SELECT count(*) AS n FROM intel_versions WHERE state = 'staged'").get() as {
          n: number
        }
        if (staged.n > 0) return
      } catch {
        // the schema is not there yet
      } finally {
        db.close()
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("vigil ingest and screen", () => {
  it("ingests an address list, screens it, and keeps the previous version when a later input is broken", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "blocklist.txt"), `# ours\n${TORNADO}\nnot-an-address\n`)
    const first = await runVigil(cwd, {}, [
      "ingest",
      "address-list",
      "blocklist.txt",
      "--list",
      "ours",
      "--category",
      "scam",
      "--as-of",
      "2024-01-01"
    ])
    assert.strictEqual(first.code, 0, first.stderr)
    assert.match(
      first.stdout,
      /^ours \(curated\): version \d+ as of 2024-01-01 from blocklist\.txt: 1 records \(added 1, de-listed 0, unchanged 0\); skipped 1 \(first: line 3: not-an-address/
    )

    writeFileSync(join(cwd, "broken.json"), '["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ')
    const broken = await runVigil(cwd, {}, [
      "ingest",
      "address-list",
      "broken.json",
      "--list",
      "ours",
      "--category",
      "scam"
    ])
    assert.strictEqual(broken.code, 1)
    assert.match(broken.stderr, /^vigil: broken\.json: JSON: not valid JSON/)

    const screened = await runVigil(cwd, {}, ["screen", TORNADO, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "nope"])
    const [hit, miss, invalid] = screened.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    assert.strictEqual(hit.signals[0].type, "scam")
    assert.strictEqual(hit.metadata.is_complete, true)
    assert.strictEqual(miss.risk_level, "minimal")
    assert.deepStrictEqual(invalid, {
      address: "nope",
      error: { code: "invalid_address", message: "not the format of any supported network" }
    })

    writeFileSync(join(cwd, "to-screen.txt"), `# batch\n${TORNADO}\n\nnope\n`)
    const fromFile = await runVigil(cwd, {}, ["screen", "--file", "to-screen.txt"])
    assert.deepStrictEqual(
      fromFile.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).address),
      [TORNADO.toLowerCase(), "nope"]
    )

    const lists = await runVigil(cwd, {}, ["lists"])
    const [ours] = lists.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    assert.strictEqual(ours.active, 1)
    assert.strictEqual(ours.asOf, "2024-01-01")
  })

  it("names what is missing or unreadable, with exit code 1", async () => {
    const cwd = tempDir()
    const missing = await runVigil(cwd, {}, ["ingest", "ofac-sdn-xml", "nowhere.xml"])
    assert.strictEqual(missing.code, 1)
    assert.match(missing.stderr, /^vigil: cannot read nowhere\.xml: ENOENT/)
    const noList = await runVigil(cwd, {}, ["ingest", "address-list", "x.txt"])
    assert.match(noList.stderr, /address-list needs --list NAME and --category CATEGORY/)
    const nothing = await runVigil(cwd, {}, ["ingest"])
    assert.match(nothing.stderr, /give <kind> <file-or-url>/)
    writeFileSync(join(cwd, "bad.xml"), "<Sanctions><DateOfIssue></Sanctions>")
    const bad = await runVigil(cwd, {}, ["ingest", "ofac-sdn-xml", "bad.xml"])
    assert.match(bad.stderr, /^vigil: bad\.xml: XML line 1:/)
    const screenNothing = await runVigil(cwd, {}, ["screen"])
    assert.match(screenNothing.stderr, /give addresses to screen, or --file FILE/)
  })

  it("ingests every source of a --config file in order, resolving inputs beside the file", async () => {
    const cwd = tempDir()
    mkdirSync(join(cwd, "conf"))
    writeFileSync(join(cwd, "conf", "mixers.txt"), "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed\n")
    writeFileSync(join(cwd, "conf", "scams.json"), JSON.stringify([TORNADO]))
    writeFileSync(
      join(cwd, "conf", "sources.json"),
      JSON.stringify({
        sources: [
          { kind: "address-list", input: "mixers.txt", list: "mixers", category: "mixer" },
          { kind: "address-list", input: "scams.json", list: "scams", category: "scam", asOf: "2024-05-01" }
        ]
      })
    )
    const result = await runVigil(cwd, {}, ["ingest", "--config", "conf/sources.json"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(
      result.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(":")[0]),
      ["mixers (curated)", "scams (curated)"]
    )
    writeFileSync(join(cwd, "conf", "bad.json"), JSON.stringify({ sources: [{ kind: "nope", input: "x" }] }))
    const bad = await runVigil(cwd, {}, ["ingest", "--config", "conf/bad.json"])
    assert.strictEqual(bad.code, 1)
    assert.match(bad.stderr, /^vigil: conf\/bad\.json: /)
    assert.include(bad.stderr, "kind")
  })

  it("refuses impossible and future dates to ingest and screen, and exits 1 when an address to screen was invalid", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "list.txt"), `${TORNADO}\n`)
    const ingest = (asOf: string) =>
      runVigil(cwd, {}, ["ingest", "address-list", "list.txt", "--list", "ours", "--category", "scam", "--as-of", asOf])
    // A date that is no date is a wrong command line (exit 2); a date after today, a date the data cannot be of (1).
    for (const [date, message, code] of [
      ["2024-02-30", /2024-02-30 is not a calendar date/, 2],
      ["2024-13-45", /2024-13-45 is not a calendar date/, 2],
      ["2999-01-01", /2999-01-01.*after today \(\d{4}-\d\d-\d\d\)/, 1]
    ] as const) {
      for (const r of [await ingest(date), await runVigil(cwd, {}, ["screen", TORNADO, "--as-of", date])]) {
        assert.strictEqual(r.code, code, `${date}: ${r.stdout}`)
        assert.match(r.stderr, message)
        assert.notInclude(r.stdout, '"address"', "nothing screened")
      }
    }
    assert.strictEqual((await runVigil(cwd, {}, ["lists"])).stdout, "", "nothing was ingested")
    assert.strictEqual((await ingest("2024-01-01")).code, 0)
    const mixed = await runVigil(cwd, {}, ["screen", TORNADO, "nope"])
    assert.strictEqual(mixed.code, 1)
    assert.lengthOf(mixed.stdout.trim().split("\n"), 2, "a line for every address, the invalid one too")
    assert.match(mixed.stderr, /^vigil: 1 of 2 addresses were not valid/)
    assert.strictEqual((await runVigil(cwd, {}, ["screen", TORNADO])).code, 0)
  })

  it.skipIf(!hasSharedData)(
    "keeps two files of the same name apart, and refuses to replace a list with another kind of data unless told to",
    async () => {
      const cwd = tempDir()
      const labels = "labels/dawsbot-eth-labels/data"
      const ingestLabels = (chain: string) =>
        runVigil(cwd, {}, [
          "ingest",
          "labels",
          sharedData(`${labels}/${chain}/exploit/accounts.json`),
          "--category",
          "exploit"
        ])
      const first = await ingestLabels("basescan")
      assert.strictEqual(first.code, 0)
      assert.match(
        first.stdout,
        /; the source states no date: listing dates unknown, the ingest date \d{4}-\d\d-\d\d stands in \(--as-of sets it\)\n$/
      )
      for (const chain of ["arbiscan", "basescan"]) assert.strictEqual((await ingestLabels(chain)).code, 0, chain)
      const lists = (await runVigil(cwd, {}, ["lists"])).stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      assert.lengthOf(lists, 2, "two accounts.json files are two lists; the same file again is the same list")
      for (const l of lists) {
        assert.match(l.list, /^labels-accounts-[0-9a-f]{8}$/)
        assert.isAbove(l.active, 0)
        assert.strictEqual(l.delisted, 0, "neither de-listed the other")
      }
      assert.notStrictEqual(lists[0].list, lists[1].list)

      writeFileSync(join(cwd, "ours.txt"), `${TORNADO}\n`)
      const other = ["ingest", "address-list", "ours.txt", "--list", lists[0].list, "--category", "scam"]
      const refused = await runVigil(cwd, {}, other)
      assert.strictEqual(refused.code, 1)
      assert.match(
        refused.stderr,
        /^vigil: labels-accounts-[0-9a-f]{8} holds labels data of labels-accounts-.* give it a list of its own \(--list NAME\), or --replace to replace this one; nothing changed\n$/
      )
      const replaced = await runVigil(cwd, {}, [...other, "--replace", "--allow-shrink"])
      assert.strictEqual(replaced.code, 0, replaced.stderr)

      // A list can be deleted: reported, and gone from every answer.
      const deleted = await runVigil(cwd, {}, ["lists", "--delete", lists[1].list])
      assert.strictEqual(deleted.code, 0, deleted.stderr)
      assert.deepStrictEqual(JSON.parse(deleted.stdout), {
        deleted: lists[1].list,
        version: 1,
        records: lists[1].active
      })
      assert.lengthOf((await runVigil(cwd, {}, ["lists"])).stdout.trim().split("\n"), 1)
      const again = await runVigil(cwd, {}, ["lists", "--delete", lists[1].list])
      assert.strictEqual(again.code, 1)
      assert.match(again.stderr, /^vigil: no list named labels-accounts-[0-9a-f]{8}; nothing changed\n$/)
    },
    60_000
  )

  it.skipIf(!hasSharedData)(
    "lists with --details every SDN address it skipped, each of no screened format, with why",
    async () => {
      const cwd = tempDir()
      const file = sharedData(
        "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
      )
      const result = await runVigil(cwd, {}, ["ingest", "ofac-sdn-xml", file, "--details"])
      assert.strictEqual(result.code, 0, result.stderr)
      const [summary, ...details] = result.stdout.trim().split("\n")
      const count = Number(/; skipped (\d+) /.exec(summary!)?.[1])
      assert.isAbove(count, 0)
      assert.lengthOf(details, count)
      for (const line of details) {
        const [, id, ticker, address, reason] = /^ {2}skipped SDN (\d+) ([A-Z0-9]+): (\S+): (.+)$/.exec(line) ?? []
        assert.isDefined(reason, line)
        assert.isFalse(Chain.detect(address!).valid, `${id} ${ticker} ${address} is of a screened format`)
      }
    },
    60_000
  )

  it("takes an operator's word that a list is official, backfills, rolls a version back and corrects a date", async () => {
    const cwd = tempDir()
    const A = "0x098b716b8aaf21512996dc57eb0615e2383e2f96"
    const B = "0x8589427373d6d84e98730d7795d8f6f8731fda16"
    writeFileSync(join(cwd, "both.txt"), `${A}\n${B}\n`)
    writeFileSync(join(cwd, "b.txt"), `${B}\n`)
    const ingest = (file: string, asOf: string, extra: ReadonlyArray<string> = []) =>
      runVigil(cwd, {}, ingestWatchArgs(file, asOf, extra))
    const screen = async (asOf?: string) => {
      const r = JSON.parse(
        (await runVigil(cwd, {}, ["screen", A, ...(asOf === undefined ? [] : ["--as-of", asOf])])).stdout
      )
      return [r.flags.sanctioned, r.recommendation.action, r.signals[0]?.type ?? "none"]
    }
    const lists = async () => JSON.parse((await runVigil(cwd, {}, ["lists"])).stdout.trim())

    // An operator's own list is curated: its sanctions claim is reported, not a sanctions match.
    assert.match((await ingest("both.txt", "2025-01-01")).stdout, /^watch \(curated\): version 1 as of 2025-01-01/)
    assert.deepStrictEqual(await screen(), [false, "REVIEW", "sanctions_reported"])
    // Declared official, the same content makes a new version under the new authority.
    const declared = await ingest("both.txt", "2025-01-01", ["--authority", "official"])
    assert.match(declared.stdout, /^watch \(curated -> official\): version 2 as of 2025-01-01/)
    assert.deepStrictEqual(await screen(), [true, "BLOCK", "sanctions_match"])
    // A later version drops A (allowed explicitly); a refresh without --authority keeps the list official.
    const dropped = await ingest("b.txt", "2025-02-01", ["--max-delist-share", "1"])
    assert.match(dropped.stdout, /^watch \(official\): version 3 as of 2025-02-01.*de-listed 1/)
    assert.deepStrictEqual(await screen(), [false, "ALLOW", "none"])

    // Rolled back, the list is what versions 1 and 2 made it.
    const rolled = await runVigil(cwd, {}, ["lists", "--rollback", "watch"])
    assert.strictEqual(rolled.code, 0, rolled.stderr)
    assert.deepStrictEqual(JSON.parse(rolled.stdout), {
      rolled_back: "watch",
      version: 3,
      current: 2,
      as_of: "2025-01-01",
      active: 2,
      delisted: 0
    })
    assert.deepStrictEqual(await screen(), [true, "BLOCK", "sanctions_match"])

    // A day before the list's oldest version: the list cannot vouch for it, so never ALLOW.
    assert.deepStrictEqual(await screen("2024-11-15"), [false, "REVIEW", "none"])
    // An older snapshot is refused unless it is a backfill; as one, it dates A's listing back.
    const older = await ingest("both.txt", "2024-11-01")
    assert.strictEqual(older.code, 1)
    assert.match(older.stderr, /older than the list's current version \(2025-01-01\); --backfill adds it/)
    const backfill = await ingest("both.txt", "2024-11-01", ["--backfill"])
    assert.match(backfill.stdout, /^watch \(official\): version 4 as of 2024-11-01, added to its history \(backfill\)/)
    assert.deepStrictEqual(await screen("2024-11-15"), [true, "BLOCK", "sanctions_match"])
    assert.deepStrictEqual([(await lists()).since, (await lists()).asOf], ["2024-11-01", "2025-01-01"])

    // The backfilled version was dated wrongly: corrected, the listing starts on the right day.
    const redated = await runVigil(cwd, {}, ["lists", "--redate", "watch", "--version", "4", "--as-of", "2024-12-01"])
    assert.strictEqual(redated.code, 0, redated.stderr)
    assert.deepInclude(JSON.parse(redated.stdout), { redated: "watch", version: 4, to: "2024-12-01", current: 2 })
    assert.deepStrictEqual(await screen("2024-11-15"), [false, "REVIEW", "none"])
    assert.deepStrictEqual(await screen("2024-12-15"), [true, "BLOCK", "sanctions_match"])

    for (const [args, message, code] of [
      [["lists", "--redate", "watch", "--as-of", "2024-12-01"], /--redate needs --version N and --as-of/, 2],
      [["lists", "--redate", "watch", "--version", "4", "--as-of", "2999-01-01"], /after today/, 1],
      [
        ["lists", "--redate", "watch", "--version", "3", "--as-of", "2024-12-01"],
        /watch has no version 3 in effect/,
        1
      ],
      [["lists", "--rollback", "nothing"], /there is no list named nothing; nothing changed/, 1],
      [["lists", "--rollback", "watch", "--delete", "watch"], /give one of --delete, --rollback, --redate/, 2]
    ] as const) {
      const refused = await runVigil(cwd, {}, [...args])
      assert.strictEqual(refused.code, code, args.join(" "))
      assert.match(refused.stderr, message)
      assert.strictEqual(refused.stderr.trim().split("\n").length, 1, refused.stderr)
    }
    assert.deepStrictEqual([(await lists()).version, (await lists()).authority], [2, "official"])
  }, 120_000)

  it.skipIf(!hasSharedData)(
    "refuses a refresh that would empty or gut a list (exit 1, one line, the list in force), and takes it with --allow-shrink",
    async () => {
      const cwd = tempDir()
      const brave = "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses"
      const ronin = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
      const eth = readFileSync(sharedData(`${brave}/sanctioned_addresses_ETH.txt`), "utf8")
        .trim()
        .split("\n")
      assert.include(eth, ronin)
      const ingest = (file: string, content: string, extra: ReadonlyArray<string> = []) => {
        writeFileSync(join(cwd, file), content)
        return runVigil(cwd, {}, [
          "ingest",
          "address-list",
          file,
          "--list",
          "ofac-eth",
          "--category",
          "sanctions",
          "--authority",
          "official",
          ...extra
        ])
      }
      const blocked = async () =>
        JSON.parse((await runVigil(cwd, {}, ["screen", ronin])).stdout).recommendation.action as string
      assert.strictEqual((await ingest("eth.txt", eth.join("\n"))).code, 0)
      assert.strictEqual(await blocked(), "BLOCK")

      // An export with a CSV header, an empty JSON array, a file of another kind: no valid record at all.
      for (const [file, content] of [
        ["with-header.csv", `address,name\n${eth.map((a) => `${a},OFAC`).join("\n")}\n`],
        ["empty.json", "[]"],
        [
          "events.csv",
          readFileSync(
            sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv"),
            "utf8"
          ).slice(0, 20_000)
        ]
      ] as const) {
        const refused = await ingest(file, content)
        assert.strictEqual(refused.code, 1, file)
        assert.strictEqual(refused.stderr.trim().split("\n").length, 1, refused.stderr)
        assert.match(refused.stderr, /holds no valid record \(\d+ skipped.*\); refused, the list is unchanged/, file)
        assert.strictEqual(await blocked(), "BLOCK", file)
      }
      // A real but much shorter list: 10 of 77 would de-list 67 (87% > 20%).
      const short = await ingest("short.txt", eth.slice(0, 10).join("\n"))
      assert.strictEqual(short.code, 1)
      assert.match(
        short.stderr,
        /would de-list 67 of the 77 active records of ofac-eth \(87%, more than 20%\); refused/
      )
      assert.strictEqual(await blocked(), "BLOCK")
      const lists = JSON.parse((await runVigil(cwd, {}, ["lists"])).stdout.trim().split("\n")[0]!)
      assert.strictEqual(lists.active, 77)
      // The latest refusal is kept beside the list, for whoever reads its state (`vigil lists`, GET /v1/lists).
      assert.strictEqual(lists.refused.origin, "short.txt")
      assert.match(lists.refused.message, /would de-list 67 of the 77 active records of ofac-eth/)
      assert.isAbove(Date.parse(lists.refused.at), Date.parse(lists.ingestedAt))
      // The operator can raise the share, or accept the shrink.
      // Versions are numbered per list, and the refused attempts used no number.
      const raised = await ingest("short.txt", eth.slice(0, 10).join("\n"), ["--max-delist-share", "0.9"])
      assert.strictEqual(raised.code, 0)
      const current = JSON.parse((await runVigil(cwd, {}, ["lists"])).stdout.trim().split("\n")[0]!)
      assert.notProperty(current, "refused", "a version committed since: up to date again")
      assert.match(raised.stdout, /^ofac-eth \(official\): version 2 as of /)
      const emptied = await ingest("empty.json", "[]", ["--allow-shrink"])
      assert.strictEqual(emptied.code, 0)
      assert.match(emptied.stdout, /^ofac-eth \(official\): version 3 as of /)
      assert.notStrictEqual(await blocked(), "BLOCK")
    },
    60_000
  )

  it.skipIf(!hasSharedData)(
    "keeps the previous version in force when an ingest is killed (SIGKILL) midway, and ingests again after",
    async () => {
      const cwd = tempDir()
      const list = sharedData(
        "sanctions/ofac-sdn-advanced-xml-history/sdn_advanced.2025-03-04.digital-currency-subset.xml"
      )
      const first = await runVigil(cwd, {}, ["ingest", "ofac-sdn-xml", list])
      assert.strictEqual(first.code, 0, first.stderr)
      const full = sharedData("sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.xml.bz2")
      const killed = spawnVigil(cwd, ["ingest", "ofac-sdn-xml", full])
      // Killed once it has begun the new version and before it commits it: not after a guessed delay.
      await stagedRecords(join(cwd, ".vigil", "vigil.db"), killed.exited)
      killed.child.kill("SIGKILL")
      assert.strictEqual(await killed.exited, null)
      const lists = await runVigil(cwd, {}, ["lists"])
      const [sdn] = lists.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      assert.strictEqual(sdn.asOf, "2025-03-04")
      assert.strictEqual(sdn.active, 683)
      const screened = JSON.parse((await runVigil(cwd, {}, ["screen", "--as-of", "2025-03-05", TORNADO])).stdout)
      assert.isTrue(screened.flags.sanctioned)
      const again = await runVigil(cwd, {}, ["ingest", "ofac-sdn-xml", full])
      assert.strictEqual(again.code, 0, again.stderr)
      assert.match(again.stdout, /as of 2025-11-19/)
    },
    120_000
  )

  it.skipIf(!hasSharedData)(
    "streams the full 121 MB SDN Advanced XML from .bz2 under a 96 MB heap, then screens",
    async () => {
      const cwd = tempDir()
      const file = sharedData("sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.xml.bz2")
      const result = await runVigil(cwd, { NODE_OPTIONS: "--max-old-space-size=96" }, ["ingest", "ofac-sdn-xml", file])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(
        result.stdout,
        /^ofac-sdn \(official\): version \d+ as of 2025-11-19 from .*: 727 records \(added 726,/
      )
      assert.notInclude(result.stdout, "states no date", "the SDN is dated by its DateOfIssue")
      const tron = await runVigil(cwd, {}, ["screen", "TAYhjpL8pPs8T84FSM329nffQpc6jD8GBM"])
      const r = JSON.parse(tron.stdout)
      assert.strictEqual(r.recommendation.action, "BLOCK")
      assert.isTrue(r.flags.sanctioned)
    },
    120_000
  )
})

describe("vigil ingest --json", () => {
  it("prints one JSON record per source, its outcome, instead of the summary line", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "list.txt"), `${TORNADO}\n0x123\n`)
    const run = await runVigil(cwd, {}, [
      "ingest",
      "address-list",
      "list.txt",
      "--list",
      "ours",
      "--category",
      "scam",
      "--as-of",
      "2024-01-01",
      "--json"
    ])
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split("\n")
    assert.lengthOf(lines, 1)
    assert.deepInclude(JSON.parse(lines[0]!), {
      origin: "list.txt",
      list: "ours",
      status: "committed",
      version: 1,
      asOf: "2024-01-01",
      records: 1,
      added: 1
    })
    assert.strictEqual(JSON.parse(lines[0]!).skipped.count, 1)
  })
})
