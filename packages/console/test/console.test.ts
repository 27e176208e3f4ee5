/**
 * The console end to end: `vigil serve` on a real SQLite file holding two real OFAC SDN files, driven in headless
 * Chromium (Debian's package, through playwright-core): sign in with a key, screen Tornado Cash's router and see
 * BLOCK with its SDN evidence, move `as_of` across its de-listing and see the answer change, read the key's usage,
 * screen an uploaded CSV of 100 addresses, sort the table and download the results, and check a watch rule as it is
 * typed.
 * Every request the browser makes is watched: none may reach another host. Each step leaves a screenshot.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { chromium, type Browser, type Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { hasSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { transferEvent } from "@vigil/core-test/AbiFragments.ts"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { Anvil, MailRelay, Solidity } from "@vigil/testkit"

const chromiumPath = "/usr/bin/chromium"
const bin = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))
const built = fileURLToPath(new URL("../dist/index.html", import.meta.url))
/** Where screenshots go: `test/screenshots/` (not kept), or the folder VIGIL_CONSOLE_SCREENSHOTS names (`docs/console`). */
const shots = process.env.VIGIL_CONSOLE_SCREENSHOTS ?? fileURLToPath(new URL("./screenshots/", import.meta.url))
const router = "0xd90e2f925DA726b50C4Ed8D0Fb90Ad053324F31b"
const sdnOld = sharedData("sanctions/ofac-sdn-advanced-xml-history/sdn_advanced.2025-03-04.digital-currency-subset.xml")
const sdnNew = sharedData(
  "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
)

/** Starts `vigil serve` on `db` (loopback, a free port) with `env`; the child and the URL it logs once listening. */
const serve = async (db: string, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, [bin, "serve", "--db", db], {
    env: { ...process.env, VIGIL_BUILTIN_LISTS: "off", VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s]+)/.exec(output)
      if (match?.[1]) resolve(match[1])
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code) => reject(new Error(`vigil serve exited with ${code}:\n${output}`)))
  })
  return { child, url }
}

/** Screens the address typed in the screening view as of `date`, and waits for the answer's action to be `action`. */
const screenAsOf = async (page: Page, date: string, action: string) => {
  await page.getByLabel("As of (empty: today)").fill(date)
  await page.getByRole("button", { name: "Screen", exact: true }).click()
  await page
    .getByTestId("action")
    .filter({ hasText: new RegExp(`^${action}$`) })
    .waitFor()
}

/** axe-core, evaluated in the page through the browser's debugging protocol (the page's CSP allows no script). */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** The WCAG 2 A and AA violations axe finds in the page as it is now: rule, impact and the first element. */
const accessibilityViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  await page.evaluate(axeSource)
  return page.evaluate(`axe
    .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    .then((r) => r.violations.map((v) => v.id + " (" + v.impact + "): " + v.nodes.length + " at " + v.nodes[0].target.join(" ")))`)
}

/** Opens the console at `url` in `page` and signs in with `key`. */
const signInAt = async (page: Page, url: string, key: string) => {
  await page.goto(`${url}/console`)
  await page.getByLabel("API key").fill(key)
  await page.getByRole("button", { name: "Sign in" }).click()
}

/**
 * Watches a page: every request it makes (none may leave the server's origin) and every Content-Security-Policy
 * complaint in its console. `clean()` asserts there was neither.
 */
const watch = (page: Page, origin: string) => {
  const elsewhere: Array<string> = []
  const violations: Array<string> = []
  page.on("request", (request) => {
    const target = new URL(request.url())
    if (target.protocol !== "data:" && target.protocol !== "blob:" && target.origin !== origin)
      elsewhere.push(request.url())
  })
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  return {
    clean: () => {
      assert.deepStrictEqual(elsewhere, [], "requests to another host")
      assert.deepStrictEqual(violations, [], "content-security-policy violations")
    }
  }
}

/** Headless Chromium from Debian's package, with the flags a machine without a display or network needs. */
const launch = async () => {
  mkdirSync(shots, { recursive: true })
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}

describe.skipIf(!hasSharedData)("the console in a real browser", () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-console-"))
  const db = join(dir, "vigil.db")
  let server: ChildProcess | undefined
  let url = ""
  let key = ""
  let browser: Browser | undefined

  beforeAll(async () => {
    if (!existsSync(chromiumPath))
      throw new Error(`${chromiumPath} is missing: install Debian's chromium (apt-get install -y chromium)`)
    if (!existsSync(built)) throw new Error(`${built} is missing: build first (npm test builds the console)`)
    const vigil = (args: ReadonlyArray<string>) =>
      execFileSync(process.execPath, [bin, ...args, "--db", db], {
        cwd: dir,
        encoding: "utf8",
        stdio: "pipe",
        env: { ...process.env, VIGIL_BUILTIN_LISTS: "off" }
      })
    vigil(["ingest", "ofac-sdn-xml", sdnOld])
    vigil(["ingest", "ofac-sdn-xml", sdnNew])
    // A desk's own watch-list, whose latest refresh came empty and was refused by the guard.
    writeFileSync(join(dir, "watch.txt"), `${["0x1", "0x2"].map((n) => n.padEnd(42, "0")).join("\n")}\n`)
    writeFileSync(join(dir, "empty.txt"), "\n")
    const watchList = ["--list", "desk-watch", "--category", "sanctions", "--authority", "curated"]
    const dated = ["--as-of", "2020-01-01"]
    vigil(["ingest", "address-list", "watch.txt", ...watchList, ...dated])
    assert.throws(() => vigil(["ingest", "address-list", "empty.txt", ...watchList]))
    key = JSON.parse(vigil(["keys", "create", "--name", "Analyst"])).key
    const started = await serve(db)
    server = started.child
    url = started.url
    browser = await launch()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  })

  it("signs in, screens the router as BLOCK with its SDN evidence, and answers differently after its de-listing", async () => {
    const page = await browser!.newPage({ viewport: { width: 1100, height: 900 } })
    const watched = watch(page, new URL(url).origin)
    await page.goto(`${url}/console`)
    // The key field has the focus at load.
    assert.strictEqual(await page.evaluate("document.activeElement?.id"), "key")
    // A wrong key is refused where the analyst types it.
    await page.getByLabel("API key").fill("vgl_not_a_key")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").waitFor()
    assert.include(await page.getByRole("alert").innerText(), "This key is invalid")
    await page.getByLabel("API key").fill(key)
    await page.getByRole("button", { name: "Sign in" }).click()
    // Signed in, the focus is on the page's heading; the navigation bar's focus ring shows on its dark background.
    await page.getByRole("navigation", { name: "Console" }).waitFor()
    assert.strictEqual(await page.evaluate("document.activeElement?.tagName"), "H1")
    await page.keyboard.press("Tab")
    assert.strictEqual(await page.evaluate("document.activeElement?.textContent"), "Screening")
    assert.strictEqual(
      await page.evaluate("getComputedStyle(document.activeElement).outlineColor"),
      "rgb(255, 209, 102)"
    )

    // Detected as it is typed, with the checksum warning for a mixed case that breaks it.
    const address = page.getByLabel("Address (any of the 18 networks)")
    await address.fill(router.replace("DA726", "dA726"))
    assert.include(await page.getByTestId("detected").innerText(), "checksum")
    await address.fill("bc1qa5wkgaew2dkv56kfvj49j0av5nml45x9ek9hz6")
    assert.match(await page.getByTestId("detected").innerText(), /^bitcoin: bitcoin/)
    await address.fill(router)
    assert.match(await page.getByTestId("detected").innerText(), /^evm: ethereum, /)
    await page.getByLabel("As of (empty: today)").fill("2025-03-04")
    await page.getByRole("button", { name: "Screen", exact: true }).click()
    const action = page.getByTestId("action")
    await action.waitFor()
    assert.strictEqual(await action.innerText(), "BLOCK")
    const signal = page.getByTestId("signal").first()
    const evidence = await signal.innerText()
    assert.include(evidence, "sanctions_match")
    assert.include(evidence, "ofac-sdn (official)")
    assert.include(evidence, "SDN 39796 ETH")
    // OFAC states no de-listing date: the card says between which stored versions the listing ended.
    assert.match(evidence, /Listed\s+2022-11-08, ended between 2025-03-04 and 2025-11-19/)
    // The listing history: from when to when, by which list.
    const history = await page.getByTestId("history").innerText()
    assert.match(history, /ofac-sdn\s+SDN 39796 ETH\s+sanctions\s+2022-11-08\s+ended between 2025-03-04 and 2025-11-19/)
    await page.screenshot({ path: join(shots, "screening-block.png"), fullPage: true })

    // Across the de-listing (2025-03-21): the SDN of 2025-11-19 no longer names it.
    await screenAsOf(page, "2025-11-19", "ALLOW")
    assert.strictEqual(await page.getByTestId("signal").count(), 0)
    await page.screenshot({ path: join(shots, "screening-after-delisting.png"), fullPage: true })

    // Between the two stored SDNs the answer says it cannot tell.
    await screenAsOf(page, "2025-06-01", "REVIEW")
    assert.include(
      await page.getByRole("note").first().innerText(),
      "between its versions of 2025-03-04 and 2025-11-19"
    )

    await page.screenshot({ path: join(shots, "screening-between.png"), fullPage: true })

    await page.getByRole("button", { name: "Usage" }).click()
    await page.getByText("Key status: authenticated").waitFor()
    assert.include(await page.locator("table").innerText(), "Analyst")
    // Numbers with thousands separators.
    assert.match(await page.locator("table").innerText(), /left of 10,000\b/)
    await page.screenshot({ path: join(shots, "usage.png"), fullPage: true })

    // The lists behind the answers, with every version in effect.
    await page.getByRole("button", { name: "Lists" }).click()
    const lists = await page.getByTestId("lists").innerText()
    assert.match(lists, /ofac-sdn[\s\S]*official[\s\S]*2 of 2025-11-19[\s\S]*2025-03-04, 2025-11-19/)
    // Official lists first, each with its age.
    const rows = page.getByTestId("lists").locator("tbody tr")
    assert.include(await rows.first().innerText(), "ofac-sdn")
    const age = Math.round((Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse("2025-11-19")) / 86_400_000)
    assert.include(
      await rows.first().getByTestId("list-version").innerText(),
      `(${age.toLocaleString("en-US")} days old)`
    )
    // Where a refresh was refused, the row says when and why: the list may be behind its publisher.
    const refreshes = await page.getByTestId("refresh").allInnerTexts()
    assert.strictEqual(refreshes[0], "in force")
    assert.match(refreshes[1]!, /^refused \d{4}-\d\d-\d\d \d\d:\d\d UTC: empty\.txt holds no valid record/)
    await page.screenshot({ path: join(shots, "lists.png"), fullPage: true })
    // A filter narrows them.
    await page.getByLabel("Filter (name, publisher, kind or authority)").fill("curated")
    assert.strictEqual(await rows.count(), 1)
    assert.include(await rows.first().innerText(), "desk-watch")
    assert.include(await page.getByText(/1 of 2 lists/).innerText(), "1 of 2")

    // On a phone's width the answer reads without scrolling sideways.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByRole("button", { name: "Screening" }).click()
    await page.getByLabel("Address (any of the 18 networks)").fill(router)
    await screenAsOf(page, "2025-03-04", "BLOCK")
    await page.screenshot({ path: join(shots, "phone.png"), fullPage: true })
    assert.isAtMost(await page.evaluate("document.documentElement.scrollWidth"), 390)

    // The key was kept for this tab only.
    assert.strictEqual(await page.evaluate("sessionStorage.length"), 1)
    assert.strictEqual(await page.evaluate("localStorage.length"), 0)
    watched.clean()
    await page.close()
  }, 60_000)

  it("meets WCAG 2.1 A and AA as axe checks it, in every view, on a laptop and on a phone", async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 }
    ]) {
      const page = await browser!.newPage({ viewport })
      const watched = watch(page, new URL(url).origin)
      await page.goto(`${url}/console`)
      assert.deepStrictEqual(await accessibilityViolations(page), [], "sign-in")
      await signInAt(page, url, key)
      await page.getByLabel("Address (any of the 18 networks)").fill(router)
      await screenAsOf(page, "2025-03-04", "BLOCK")
      assert.deepStrictEqual(await accessibilityViolations(page), [], "screening, with an answer")
      for (const view of ["Batch", "Lists", "Contracts", "Channels", "Rules", "Alerts", "Usage"]) {
        await page.getByRole("button", { name: view, exact: true }).click()
        await page.getByRole("button", { name: view, exact: true, pressed: true }).waitFor()
        await page.locator("main > *").first().waitFor()
        assert.deepStrictEqual(await accessibilityViolations(page), [], `${view} at ${viewport.width} px`)
      }
      watched.clean()
      await page.close()
    }
  }, 60_000)

  it("screens an uploaded CSV of 100 addresses in batches, sorts the table, and downloads the results with evidence", async () => {
    const listed = readFileSync(
      sharedData("sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sanctioned_addresses_ETH.txt"),
      "utf8"
    )
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => /^0x[0-9a-fA-F]{40}$/.test(l))
      .slice(0, 60)
    const clean = Array.from({ length: 100 - listed.length }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "c")}`)
    const csv = join(dir, "deposits.csv")
    writeFileSync(csv, ["address,note", ...[...listed, ...clean].map((a, i) => `${a},deposit ${i}`)].join("\n"))

    const page = await browser!.newPage({ viewport: { width: 1100, height: 900 }, acceptDownloads: true })
    const watched = watch(page, new URL(url).origin)
    await signInAt(page, url, key)
    await page.getByRole("button", { name: "Batch" }).click()
    await page.getByLabel("Or a CSV file").setInputFiles(csv)
    await page.getByRole("button", { name: "Screen all" }).click()
    await page.getByText("100 of 100 screened").waitFor()
    const rows = page.getByTestId("batch-results").locator("tbody tr")
    assert.strictEqual(await rows.count(), 100)
    // The columns of the CSV an analyst sorts by, and addresses kept on one line.
    const head = await page.getByTestId("batch-results").locator("thead").innerText()
    assert.match(head, /Sanctioned[\s\S]*Entity/)
    assert.strictEqual(
      await page.evaluate(
        "getComputedStyle(document.querySelector('[data-testid=batch-results] tbody td')).whiteSpace"
      ),
      "nowrap"
    )
    // Sorted by score, the listed addresses come first.
    await page.getByRole("button", { name: "Score" }).click()
    assert.include(await rows.first().innerText(), "BLOCK")
    assert.include(await rows.last().innerText(), "ALLOW")
    assert.deepStrictEqual(await accessibilityViolations(page), [], "100 results, sorted")
    await page.screenshot({ path: join(shots, "batch.png"), fullPage: false })

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click()
    ])
    const saved = join(dir, "results.csv")
    await download.saveAs(saved)
    const lines = readFileSync(saved, "utf8").trim().split(/\r\n/)
    assert.strictEqual(lines.length, 101)
    assert.match(lines[0]!, /^address,action,score,risk_level/)
    const blocked = lines.filter((l) => l.includes(",BLOCK,"))
    assert.strictEqual(blocked.length, listed.length)
    for (const line of blocked) assert.match(line, /ofac-sdn \[SDN \d+/)
    watched.clean()
    await page.close()
  }, 60_000)

  it("checks a watch rule as it is typed: the caret under a typo with what was meant, then the normal form", async () => {
    const registered = await fetch(`${url}/v1/contracts`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        chainId: 1,
        contractAddress: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        label: "USDC",
        ABI: [transferEvent]
      })
    })
    assert.strictEqual(registered.status, 201)

    const page = await browser!.newPage({ viewport: { width: 1100, height: 700 } })
    const watched = watch(page, new URL(url).origin)
    await signInAt(page, url, key)
    await page.getByRole("button", { name: "Rules" }).click()
    await page.getByText("Contracts of this key on the chain: USDC").waitFor()
    const rule = page.getByLabel("Rule: one expression per line, AND-ed as a bot takes them")
    await rule.pressSequentially("system.emitted(tx1.USDC.E.Transfr)")
    const problem = page.getByTestId("problem")
    await problem.waitFor()
    const drawn = (await problem.innerText()).split("\n")
    assert.strictEqual(drawn[0], "system.emitted(tx1.USDC.E.Transfr)")
    assert.strictEqual(drawn[1]!.indexOf("^"), "system.emitted(tx1.USDC.E.".length)
    assert.include(drawn[1], "did you mean Transfer")
    await page.screenshot({ path: join(shots, "rule-typo.png") })
    await rule.fill("system.emitted(tx1.USDC.E.Transfer)")
    await page.getByTestId("rule-ok").waitFor()
    assert.include(await page.getByTestId("rule-ok").innerText(), "Transfer")
    watched.clean()
    await page.close()
  }, 60_000)
})

describe("the API reference", () => {
  it("serves /docs loading nothing from other hosts: no CDN, no web fonts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-docs-"))
    const started = await serve(join(dir, "vigil.db"), { VIGIL_BUILTIN_LISTS: "off" })
    const browser = await launch()
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
      const watched = watch(page, new URL(started.url).origin)
      await page.goto(`${started.url}/docs`, { waitUntil: "networkidle" })
      await page.getByText("/api/v3/intel").first().waitFor()
      watched.clean()
      await page.close()
    } finally {
      await browser.close()
      started.child.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("the console's monitoring views on a followed chain", () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-console-alerts-"))
  const db = join(dir, "vigil.db")
  const certs = Receiver.certificates()
  let receiver: Receiver.Receiver | undefined
  let relay: MailRelay.MailRelay | undefined
  let node: Anvil.Anvil | undefined
  let server: ChildProcess | undefined
  let browser: Browser | undefined
  let url = ""
  let key = ""

  beforeAll(async () => {
    if (!existsSync(chromiumPath))
      throw new Error(`${chromiumPath} is missing: install Debian's chromium (apt-get install -y chromium)`)
    node = await Anvil.start()
    receiver = await Receiver.start(certs)
    relay = await MailRelay.start()
    key = JSON.parse(
      execFileSync(process.execPath, [bin, "keys", "create", "--name", "Protocol", "--db", db], { encoding: "utf8" })
    ).key
    const started = await serve(db, {
      [`VIGIL_RPC_URL_${node.chainId}`]: node.url,
      VIGIL_FOLLOW_POLL_MS: "100",
      VIGIL_CONFIRMATIONS: "0",
      // A local HTTPS receiver stands in for Slack.
      VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      VIGIL_WEBHOOK_CA_FILE: certs.caFile,
      // ... and for Telegram's Bot API; a local relay takes the mail.
      VIGIL_TELEGRAM_API_URL: receiver.url("/telegram"),
      VIGIL_SMTP_URL: relay.url,
      VIGIL_SMTP_FROM: "Vigil <alerts@vigil.test>"
    })
    server = started.child
    url = started.url
    browser = await launch()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill("SIGKILL")
    await node?.stop()
    await receiver?.close()
    await relay?.close()
    certs.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("registers a contract and a Slack channel, creates a bot whose rule had a typo, then shows a transfer's alert without a reload, and its retraction after a reorganisation", async () => {
    const anvil = node!
    const token = Solidity.fixtures().Token
    const deployed = await anvil.deploy(token, [10n ** 24n])
    const page = await browser!.newPage({ viewport: { width: 1100, height: 800 } })
    const watched = watch(page, new URL(url).origin)
    await signInAt(page, url, key)

    // A key with nothing yet: each view says why it is empty and what to do.
    await page.getByRole("button", { name: "Contracts" }).click()
    assert.include(await page.getByTestId("contracts-empty").innerText(), "No contract of this key on chain 1")
    await page.getByRole("button", { name: "Alerts" }).click()
    assert.include(await page.getByTestId("bots-empty").innerText(), "This key has no bot yet")
    await page.getByRole("button", { name: "Channels" }).click()
    assert.include(await page.getByTestId("channels-empty").innerText(), "No channel yet")
    // A refusal is said in words, not as an HTTP code.
    await page.getByRole("button", { name: "Contracts" }).click()
    await page.getByLabel("Contract address").fill("0x1234")
    await page.getByLabel("Label (the name rules use)").fill("Nothing")
    await page.getByLabel("ABI (JSON; empty: fetched from Sourcify or an explorer)").fill("[]")
    await page.getByRole("button", { name: "Register" }).click()
    assert.match(await page.getByTestId("contract-outcome").innerText(), /^Not accepted: /)

    // The contract, registered with its ABI pasted.
    await page.getByLabel("Chain id").fill(String(anvil.chainId))
    await page.getByLabel("Contract address").fill(deployed.address)
    await page.getByLabel("Label (the name rules use)").fill("Token")
    await page.getByLabel("ABI (JSON; empty: fetched from Sourcify or an explorer)").fill(JSON.stringify(token.abi))
    await page.getByRole("button", { name: "Register" }).click()
    assert.strictEqual(await page.getByTestId("contract-outcome").innerText(), "Registered Token (ABI supplied).")
    await page.getByTestId("contracts").getByText(deployed.address.toLowerCase()).waitFor()
    assert.include(await page.getByTestId("contracts").innerText(), "18 decimals")

    // A Slack channel (the local receiver), and its test message.
    await page.getByRole("button", { name: "Channels" }).click()
    await page.getByLabel("Name").fill("ops")
    await page.getByLabel("URL (HTTPS)").fill(receiver!.url("/slack"))
    await page.getByRole("button", { name: "Create channel" }).click()
    assert.strictEqual(await page.getByTestId("channel-outcome").innerText(), "Created ops.")
    await page.getByRole("button", { name: "Send test" }).click()
    await receiver!.until((got) => got.length >= 1)
    assert.strictEqual(receiver!.received[0]!.path, "/slack")
    await page.getByRole("button", { name: "Refresh" }).click()
    await page.getByTestId("channels").locator("tbody tr td:nth-child(2)", { hasText: /^1$/ }).waitFor()
    assert.deepStrictEqual(await accessibilityViolations(page), [], "channels, with one")
    await page.screenshot({ path: join(shots, "channels.png") })

    // The bot is written in the console: a typo shown with its caret, fixed, then saved with the channel.
    await page.getByRole("button", { name: "Rules" }).click()
    // A new rule opens on the chain the key's contracts are on.
    await page.getByText("Contracts of this key on the chain: Token").waitFor()
    assert.strictEqual(await page.getByLabel("Chain id").inputValue(), String(anvil.chainId))
    const rule = page.getByLabel("Rule: one expression per line, AND-ed as a bot takes them")
    await rule.fill("system.emitted(tx1.Tokn.E.Transfer)")
    assert.include(await page.getByTestId("problem").innerText(), "did you mean Token")
    assert.deepStrictEqual(await accessibilityViolations(page), [], "a rule's problem, with its caret")
    await rule.fill("system.emitted(tx1.Token.E.Transfer)")
    await page.getByTestId("rule-ok").waitFor()
    await page.getByLabel("Bot name").fill("Token moves")
    await page.getByLabel("ops (slack)").check()
    await page.getByRole("button", { name: "Create bot" }).click()
    assert.match(
      await page.getByTestId("bot-created").innerText(),
      /^Created Token moves \(bot_\d+_[a-z0-9]+\), watching from block \d+\.$/
    )
    await page.screenshot({ path: join(shots, "bot-created.png") })

    await page.getByRole("button", { name: "Alerts" }).click()
    await page.getByText("No alert yet").waitFor()
    // Paused and resumed from the console.
    await page.getByRole("button", { name: "Pause" }).click()
    await page
      .getByTestId("bot-state")
      .getByText(/^Paused/)
      .waitFor()
    await page.getByRole("button", { name: "Resume" }).click()
    await page
      .getByTestId("bot-state")
      .getByText(/^Active/)
      .waitFor()

    // A transfer on the chain: its alert appears in the open page.
    const snapshot = await anvil.rpc<string>("evm_snapshot")
    const moved = await anvil.send({ abi: token.abi, address: deployed.address }, "transfer", [anvil.accounts[1], 5n])
    const alert = page.getByTestId("alert").first()
    await alert.waitFor({ timeout: 20_000 })
    assert.include(await alert.innerText(), moved.hash)
    assert.include(await alert.innerText(), "active")
    // Whose alert, how severe, and when in local time (UTC on hover).
    assert.match(await alert.innerText(), /^Token moves High · active/)
    assert.match((await alert.locator("time").getAttribute("title")) ?? "", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    // With its decoded evidence: the Transfer's arguments as the rule bound them.
    const evidence = (await alert.getByRole("list", { name: "evidence" }).innerText()).toLowerCase()
    // The amount in whole tokens (the Token's decimals() said 18 when it was registered), the raw value on hover.
    assert.match(evidence, /token\.transfer\(from: 0x[0-9a-f]{40}, to: 0x[0-9a-f]{40}, value: 0\.000000000000000005\)/)
    assert.strictEqual(await alert.getByTestId("amount").getAttribute("title"), "5 (raw, 18 decimals)")
    assert.include(evidence, `to: ${anvil.accounts[1]!.toLowerCase()}`)
    // Its message reached the channel, and the feed says so.
    await receiver!.until((got) => got.length >= 2)
    await alert.getByText(/delivered/).waitFor({ timeout: 20_000 })
    assert.match(await alert.innerText(), /alert to ops: delivered after 1 attempt/)
    assert.strictEqual(await alert.getByTestId("delivery").getAttribute("class"), "delivery delivery-delivered")
    assert.deepStrictEqual(await accessibilityViolations(page), [], "the alerts feed, with an alert")
    await page.screenshot({ path: join(shots, "alerts.png") })

    // The block leaves the chain: the same alert is shown retracted.
    assert.isTrue(await anvil.rpc<boolean>("evm_revert", [snapshot]))
    await anvil.mine(3)
    await page
      .getByTestId("alert")
      .first()
      .locator(".state", { hasText: /^retracted$/ })
      .waitFor({ timeout: 20_000 })
    assert.include(await page.getByTestId("alert").first().innerText(), moved.hash)
    await page.screenshot({ path: join(shots, "alert-retracted.png") })

    // The bot's rule edited in the console: its fields as stored, a typo caught with its caret, then a new revision.
    await page.getByRole("button", { name: "Edit rule" }).click()
    assert.match(
      await page.getByTestId("editing").innerText(),
      /^Editing Token moves \(bot_\d+_[a-z0-9]+\), revision 3\./
    )
    const edited = page.getByLabel("Rule: one expression per line, AND-ed as a bot takes them")
    assert.strictEqual(await edited.inputValue(), "system.emitted(tx1.Token.E.Transfer)")
    await edited.fill("system.emitted(tx1.Token.E.Transfer)\nsystem.uintCompare(tx1.Token.E.Transfer.valu, >, 10)")
    const caret = await page.getByTestId("problem").innerText()
    assert.include(caret, "system.uintCompare(tx1.Token.E.Transfer.valu, >, 10)")
    assert.include(caret, "value")
    await edited.fill("system.emitted(tx1.Token.E.Transfer)\nsystem.uintCompare(tx1.Token.E.Transfer.value, >, 10)")
    await page.getByTestId("rule-ok").waitFor()
    assert.strictEqual(await page.getByLabel("Bot name").inputValue(), "Token moves")
    assert.isTrue(await page.getByLabel("ops (slack)").isChecked())
    await page.getByRole("button", { name: "Save changes" }).click()
    assert.match(
      await page.getByTestId("bot-created").innerText(),
      /^Saved Token moves \(bot_\d+_[a-z0-9]+\), revision 4, watching from block \d+\.$/
    )
    await page.screenshot({ path: join(shots, "bot-edited.png") })
    await page.getByRole("button", { name: "Alerts" }).click()
    await page
      .getByTestId("bot-state")
      .getByText(/AND system\.uintCompare\(tx1\.Token\.E\.Transfer\.value, >, 10\)/)
      .waitFor()

    // Deleting what a bot uses: the contract only once confirmed (the API names the bot), the channel not at all.
    await page.getByRole("button", { name: "Contracts" }).click()
    await page.getByRole("button", { name: "Delete Token" }).click()
    assert.include(await page.getByTestId("confirm-delete").innerText(), "Token is used by Token moves")
    assert.deepStrictEqual(await accessibilityViolations(page), [], "deleting a contract in use")
    await page.screenshot({ path: join(shots, "contract-in-use.png") })
    await page.getByRole("button", { name: "Keep it" }).click()
    assert.strictEqual(await page.getByTestId("contracts").locator("tbody tr").count(), 1)
    await page.getByRole("button", { name: "Channels" }).click()
    await page.getByRole("button", { name: "Delete ops" }).click()
    assert.strictEqual(
      await page.getByTestId("channel-outcome").innerText(),
      "ops is used by Token moves: take it off those bots first."
    )
    // Confirmed, the contract goes; the bot, deleted (after the browser's confirmation), frees the channel.
    await page.getByRole("button", { name: "Contracts" }).click()
    await page.getByRole("button", { name: "Delete Token" }).click()
    await page.getByRole("button", { name: "Delete anyway" }).click()
    assert.strictEqual(await page.getByTestId("contract-outcome").innerText(), "Deleted Token.")
    await page.getByTestId("contracts-empty").waitFor()
    await page.getByRole("button", { name: "Alerts" }).click()
    page.once("dialog", (dialog) => void dialog.accept())
    await page.getByRole("button", { name: "Delete bot" }).click()
    await page.getByTestId("bots-empty").waitFor()
    await page.getByRole("button", { name: "Channels" }).click()
    await page.getByRole("button", { name: "Delete ops" }).click()
    assert.strictEqual(await page.getByTestId("channel-outcome").innerText(), "Deleted ops.")
    watched.clean()
    await page.close()
  }, 90_000)

  it("makes Telegram and email channels with the fields each needs, and sends each a test message", async () => {
    const page = await browser!.newPage()
    const watched = watch(page, new URL(url).origin)
    await signInAt(page, url, key)
    await page.getByRole("button", { name: "Channels" }).click()
    const outcome = page.getByTestId("channel-outcome")
    const testOf = (name: string) =>
      page.getByTestId("channels").locator("tr", { hasText: name }).getByRole("button", { name: "Send test" })

    await page.getByLabel("Type").selectOption("telegram")
    await page.getByLabel("Name").fill("on call")
    const token = "123456789:AAHconsoleTestToken_abcdefghijklmnopq"
    const sendMessage = `/telegram/bot${token}/sendMessage`
    await page.getByLabel("Bot token (from @BotFather)").fill(token)
    await page.getByLabel("Chat id or @channel").fill("@vigil_ops")
    await page.getByRole("button", { name: "Create channel" }).click()
    await outcome.getByText("Created on call.").waitFor()
    await testOf("on call").click()
    await receiver!.until((got) => got.some((r) => r.path === sendMessage))
    const sent = receiver!.received.find((r) => r.path === sendMessage)!
    assert.strictEqual(JSON.parse(sent.body).chat_id, "@vigil_ops")

    await page.getByLabel("Type").selectOption("email")
    await page.getByLabel("Name").fill("compliance")
    await page.getByLabel("Recipients (up to 10, separated by commas)").fill("ops@vigil.test, audit@vigil.test")
    await page.getByRole("button", { name: "Create channel" }).click()
    await outcome.getByText("Created compliance.").waitFor()
    await testOf("compliance").click()
    await relay!.until((mails) => mails.length >= 1)
    assert.deepStrictEqual(relay!.mails[0]!.to, ["ops@vigil.test", "audit@vigil.test"])
    await page.screenshot({ path: join(shots, "channels-telegram-email.png") })
    watched.clean()
    await page.close()
  }, 60_000)
})
