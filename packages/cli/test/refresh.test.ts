/**
 * `vigil refresh` against stand-ins of the publishers: OFAC's SDN Advanced XML served over HTTPS on loopback, and
 * an anvil node standing in for Ethereum with USDT's and USDC's freeze events emitted at their real addresses. The
 * store starts with the built-in lists, as a user's does.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Anvil, Solidity } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { hasSharedData, missingSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { runVigil, serve, tempDir } from "./VigilProcess.ts"

const subset = sharedData(
  "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
)
/** The Ronin Bridge exploiter (Lazarus Group): in the changed file its address is replaced by {@link moved}. */
const lazarus = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const moved = "0x2222222222222222222222222222222222222222"
const usdtAddress = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
const usdcAddress = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
/** Frozen by the refresh: on USDT, and on USDC. */
const frozenOnUsdt = "0x3333333333333333333333333333333333333333"
const frozenOnUsdc = "0x4444444444444444444444444444444444444444"

const builtin = JSON.parse(
  readFileSync(join(fileURLToPath(new URL("../../engine/builtin/official-lists.json", import.meta.url))), "utf8")
) as { lists: ReadonlyArray<{ list: string; records: ReadonlyArray<{ address: string; delistedAt?: string }> }> }
/** A USDT freeze in force in the built-in snapshot, which the node then ends. */
const unfrozen = builtin.lists
  .find((l) => l.list === "usdt-ethereum")!
  .records.find((r) => r.delistedAt === undefined)!.address

describe.skipIf(!hasSharedData)(`vigil refresh${hasSharedData ? "" : ` (${missingSharedData})`}`, () => {
  const certs = Receiver.certificates()
  let sdnBody = readFileSync(subset, "utf8")
  let reachable = true
  const sdnServer = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    if (!reachable) return req.socket.destroy()
    if (req.url !== "/sdn_advanced.xml") return res.writeHead(404).end()
    res.writeHead(200, { "content-type": "application/xml" }).end(sdnBody)
  })
  let node: Anvil.Anvil
  let sdnUrl = ""

  beforeAll(async () => {
    await new Promise<void>((resolve) => sdnServer.listen(0, "127.0.0.1", resolve))
    sdnUrl = `https://127.0.0.1:${(sdnServer.address() as AddressInfo).port}/sdn_advanced.xml`
    // A chain well past the end of the built-in USDT export (block 16670912), under Ethereum's chain id.
    node = await Anvil.start({ chainId: 1, number: 16_700_000 })
    const fixtures = Solidity.fixtures()
    // The issuers' events at the issuers' addresses: each stand-in's code put where the token lives.
    for (const [contract, at] of [
      [fixtures.TetherFreezes, usdtAddress],
      [fixtures.CircleFreezes, usdcAddress]
    ] as const) {
      const deployed = await node.deploy(contract)
      const code = await node.rpc<string>("eth_getCode", [deployed.address, "latest"])
      await node.rpc("anvil_setCode", [at, code])
    }
  }, 120_000)
  afterAll(async () => {
    await node?.stop()
    sdnServer.close()
    certs.dispose()
  })

  const env = () => ({
    VIGIL_BUILTIN_LISTS: undefined,
    VIGIL_REFRESH_SDN_URL: sdnUrl,
    VIGIL_RPC_URL_1: node.url,
    VIGIL_CONFIRMATIONS_1: "0",
    NODE_EXTRA_CA_CERTS: certs.caFile
  })
  const screen = async (cwd: string, address: string) => {
    const out = await runVigil(cwd, env(), ["screen", address])
    assert.strictEqual(out.code, 0, out.stderr)
    return JSON.parse(out.stdout) as {
      flags: { sanctioned: boolean; blacklisted: boolean }
      recommendation: { action: string }
      signals: ReadonlyArray<{ evidence: { list: string; listAsOf?: string } }>
    }
  }
  const refresh = async (cwd: string) => {
    const out = await runVigil(cwd, env(), ["refresh", "--json"])
    return {
      ...out,
      reports: out.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { list: string; status: string; line: string; outcome?: Record<string, unknown> })
    }
  }

  it("ingests a changed SDN file and new freeze events as new dated versions; a second refresh finds nothing new", async () => {
    const cwd = tempDir()
    // The publisher's new file: a week later, the Lazarus Group's address replaced.
    sdnBody = readFileSync(subset, "utf8").replace("<Day>19</Day>", "<Day>26</Day>").replace(lazarus, moved)
    const usdt = { abi: Solidity.fixtures().TetherFreezes.abi, address: usdtAddress } as const
    const usdc = { abi: Solidity.fixtures().CircleFreezes.abi, address: usdcAddress } as const

    assert.strictEqual((await screen(cwd, moved)).recommendation.action, "ALLOW")
    // Before any freeze of USDC: no list is made of nothing (the SDN's address answers 404 this once).
    const early = await runVigil(cwd, { ...env(), VIGIL_REFRESH_SDN_URL: sdnUrl.replace("sdn_advanced", "missing") }, [
      "refresh",
      "--json"
    ])
    assert.strictEqual(early.code, 1)
    assert.match(early.stderr, /ofac-sdn not refreshed/)
    const usdcEarly = early.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { list: string; status: string; line: string })
      .find((r) => r.list === "usdc-ethereum")!
    assert.strictEqual(usdcEarly.status, "unchanged")
    assert.match(usdcEarly.line, /^usdc-ethereum: no freeze in blocks \d+–\d+ of chain 1; no list made$/)
    await node.send(usdt, "addBlackList", [frozenOnUsdt])
    await node.send(usdt, "removeBlackList", [unfrozen])
    await node.send(usdc, "blacklist", [frozenOnUsdc])
    const first = await refresh(cwd)
    assert.strictEqual(first.code, 0, first.stderr)
    const byList = Object.fromEntries(first.reports.map((r) => [r.list, r]))
    assert.deepInclude(byList["ofac-sdn"]!.outcome, { status: "committed", version: 2, asOf: "2025-11-26" })
    assert.deepInclude(byList["ofac-sdn"]!.outcome, { added: 1, delisted: 1 })
    assert.deepInclude(byList["usdt-ethereum"]!.outcome, { status: "committed", version: 2 })
    assert.include(byList["usdt-ethereum"]!.line, "1 new freeze, 1 ended")
    assert.deepInclude(byList["usdc-ethereum"]!.outcome, { status: "committed", version: 1, added: 1 })

    const nowSanctioned = await screen(cwd, moved)
    assert.strictEqual(nowSanctioned.recommendation.action, "BLOCK")
    assert.strictEqual(nowSanctioned.signals[0]!.evidence.listAsOf, "2025-11-26")
    assert.isFalse((await screen(cwd, lazarus)).flags.sanctioned)
    assert.isTrue((await screen(cwd, frozenOnUsdt)).flags.blacklisted)
    assert.isTrue((await screen(cwd, frozenOnUsdc)).flags.blacklisted)
    assert.isFalse((await screen(cwd, unfrozen)).flags.blacklisted)

    // Read on from the last block read: nothing new anywhere.
    const second = await refresh(cwd)
    assert.strictEqual(second.code, 0, second.stderr)
    assert.deepStrictEqual(
      second.reports.map((r) => [r.list, r.status]),
      [
        ["ofac-sdn", "unchanged"],
        ["usdt-ethereum", "unchanged"],
        ["usdc-ethereum", "unchanged"]
      ]
    )
    // A later freeze is read from where the last version stopped.
    const later = "0x5555555555555555555555555555555555555555"
    await node.send(usdt, "addBlackList", [later])
    const third = await refresh(cwd)
    assert.include(third.reports.find((r) => r.list === "usdt-ethereum")!.line, "1 new freeze, 0 ended")
    assert.isTrue((await screen(cwd, later)).flags.blacklisted)
  }, 120_000)

  it("keeps the lists in force serving when a source cannot be reached, says so in one line, and notes it in /health", async () => {
    const cwd = tempDir()
    reachable = false
    try {
      const out = await runVigil(cwd, { ...env(), VIGIL_RPC_URL_1: "http://127.0.0.1:9/" }, ["refresh"])
      assert.strictEqual(out.code, 1)
      const lines = out.stderr.trim().split("\n")
      const sdnLine = lines.find((l) => l.startsWith("vigil: ofac-sdn: cannot refresh from https://"))
      assert.isDefined(sdnLine, out.stderr)
      assert.include(sdnLine!, "the list in force (as of 2025-11-19) keeps serving")
      assert.isDefined(lines.find((l) => l.startsWith("vigil: usdt-ethereum: cannot refresh from chain 1's node")))
      assert.strictEqual(
        lines.at(-1),
        "vigil: ofac-sdn, usdt-ethereum, usdc-ethereum not refreshed; the lists in force keep serving"
      )

      assert.strictEqual((await screen(cwd, lazarus)).recommendation.action, "BLOCK")
      const server = await serve(cwd, { VIGIL_BUILTIN_LISTS: undefined })
      const health = (await (await fetch(`${server.url}/health`)).json()) as {
        status: string
        lists: ReadonlyArray<{ list: string; as_of: string; note?: string }>
      }
      assert.strictEqual(health.status, "ok")
      const sdn = health.lists.find((l) => l.list === "ofac-sdn")!
      assert.strictEqual(sdn.as_of, "2025-11-19")
      assert.match(sdn.note ?? "", /refresh failed: cannot read https:\/\/127\.0\.0\.1:\d+\/sdn_advanced\.xml/)
      assert.match(
        health.lists.find((l) => l.list === "usdt-ethereum")!.note ?? "",
        /refresh failed: cannot read chain 1's node: /
      )
    } finally {
      reachable = true
    }
  }, 60_000)
})
