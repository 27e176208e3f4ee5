import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, expect, it } from "vitest"
import { createQuota } from "../src/quota-facade.ts"
import { createVigil } from "../src/create-vigil.ts"
import { makeHostServer, makeVigilHandler } from "../src/web-handler.ts"
import { verifyWebhook } from "../src/verify-webhook.ts"
import { backtest } from "../src/backtest-rules.ts"
import { Anvil, Solidity } from "@vigil/testkit"
import { WebhookSigning } from "@vigil/core"

const dir = mkdtempSync(join(tmpdir(), "vigil-examples-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A one-address list file (the address of a sanctioned Tornado Cash contract). */
const listFile = () => {
  const file = join(dir, "ours.txt")
  writeFileSync(file, "0x8589427373D6D84E98730D7795D8f6f8731FDA16\n")
  return file
}

describe("examples", () => {
  it("quota facade allows the limit per minute, refuses the rest, and remembers across reopening", async () => {
    const file = join(dir, "quota.db")
    const now = Date.UTC(2026, 0, 1, 12, 0, 30)
    const first = createQuota(file, 3)
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(await first.take("acme", now))
    await first.close()
    assert.deepStrictEqual(seen, [
      { allowed: true, remaining: 2 },
      { allowed: true, remaining: 1 },
      { allowed: true, remaining: 0 },
      { allowed: false, remaining: 0 }
    ])
    const again = createQuota(file, 3)
    assert.deepStrictEqual(await again.take("acme", now), { allowed: false, remaining: 0 })
    assert.deepStrictEqual(await again.take("other", now), { allowed: true, remaining: 2 })
    assert.deepStrictEqual(await again.take("acme", now + 60_000), { allowed: true, remaining: 2 })
    await again.close()
  })

  it("web handler screens an address posted through the host, method, headers and body forwarded", async () => {
    const db = join(dir, "host.db")
    const vigil = createVigil({ db })
    await vigil.ingest({
      kind: "address-list",
      input: listFile(),
      list: "ours",
      category: "sanctions",
      authority: "official"
    })
    const { key } = await vigil.keys.create({ name: "Host" })
    await vigil.close()
    const { SqliteAdapter } = await import("@vigil/adapter-sqlite")
    const server = makeHostServer(makeVigilHandler(SqliteAdapter.layer({ filename: db })))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      if (address === null || typeof address !== "object") throw new Error("no address")
      const base = `http://127.0.0.1:${address.port}/vigil`
      const v3 = await fetch(`${base}/api/v3/intel`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ address: "0x8589427373D6D84E98730D7795D8f6f8731FDA16" })
      })
      assert.strictEqual(v3.status, 200)
      const result = (await v3.json()) as { flags: { sanctioned: boolean }; recommendation: { action: string } }
      assert.isTrue(result.flags.sanctioned)
      assert.strictEqual(result.recommendation.action, "BLOCK")
      const v2 = await fetch(`${base}/api/v2/intel?address=0x8589427373d6d84e98730d7795d8f6f8731fda16`, {
        headers: { "x-api-key": key }
      })
      assert.strictEqual(v2.status, 200)
      assert.strictEqual(((await v2.json()) as { data: { entity: { type: string } } }).data.entity.type, "sanctioned")
      const anonymous = await fetch(`${base}/api/v3/intel`, { method: "POST", body: "{}" })
      assert.strictEqual(anonymous.status, 401)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("web handler serves Vigil under /vigil inside a host's own server", async () => {
    const server = makeHostServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      if (address === null || typeof address !== "object") throw new Error("no address")
      const base = `http://127.0.0.1:${address.port}`
      assert.strictEqual(await (await fetch(`${base}/`)).text(), "host app\n")
      const health = await fetch(`${base}/vigil/health`)
      assert.strictEqual(health.status, 200)
      const body = (await health.json()) as { status: string; storage: { kind: string } }
      assert.strictEqual(body.status, "ok")
      assert.strictEqual(body.storage.kind, "memory")
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("createVigil facade", () => {
  it("screens with Promises over a SQLite file filled by an ingest", async () => {
    const db = join(dir, "facade.db")
    const vigil = createVigil({ db })
    try {
      const ingested = await vigil.ingest({
        kind: "address-list",
        input: listFile(),
        list: "ours",
        category: "sanctions",
        authority: "official",
        asOf: "2024-01-01"
      })
      assert.deepInclude(ingested, { status: "committed", list: "ours", records: 1 })
      const hit = await vigil.screen("0x8589427373d6d84e98730d7795d8f6f8731fda16")
      assert.isTrue("score" in hit && hit.flags.sanctioned && hit.recommendation.action === "BLOCK")
      const bad = await vigil.screen("0x123")
      assert.deepStrictEqual(bad, {
        address: "0x123",
        error: { code: "invalid_address", message: "an EVM address has 40 hex characters after 0x, this has 3" }
      })
      // The new database started with the built-in official lists; the ingest added its own.
      assert.deepStrictEqual(
        (await vigil.lists()).map((l) => l.list),
        ["ofac-sdn", "ours", "usdt-ethereum"]
      )
      const batch = await vigil.screenBatch(["0x8589427373d6d84e98730d7795d8f6f8731fda16", "0x123"], { concurrency: 2 })
      assert.deepInclude(batch.summary, { total: 2, successful: 1, failed: 1, critical: 1 })
      await expect(vigil.screenBatch([])).rejects.toThrow(/1 to 25 addresses/)
      const issued = await vigil.keys.create({ name: "Acme" })
      assert.match(issued.key, /^vgl_/)
      assert.strictEqual((await vigil.keys.revoke(issued.record.id))?.id, issued.record.id)
      assert.deepStrictEqual(
        (await vigil.keys.list()).map((k) => [k.name, k.revokedAt !== undefined]),
        [["Acme", true]]
      )
      await expect(vigil.ingest({ kind: "address-list", input: listFile() })).rejects.toThrow(
        /address-list needs --list/
      )
      // List repairs: a second version rolled back, a date corrected, the list deleted.
      await vigil.ingest({
        kind: "address-list",
        input: listFile(),
        list: "ours",
        category: "sanctions",
        asOf: "2024-02-01",
        allowShrink: true,
        authority: "curated"
      })
      assert.strictEqual((await vigil.lists()).find((l) => l.list === "ours")?.authority, "curated")
      assert.deepInclude(await vigil.rollbackList("ours"), { list: "ours", version: 2, current: 1, asOf: "2024-01-01" })
      assert.strictEqual((await vigil.lists()).find((l) => l.list === "ours")?.authority, "official")
      await expect(vigil.rollbackList("ours")).rejects.toThrow(/AmendRefused: ours has only one version in effect/)
      assert.deepInclude(await vigil.redateList("ours", 1, "2023-12-01"), { current: 1, asOf: "2023-12-01" })
      await expect(vigil.redateList("ours", 1, "2023-02-30")).rejects.toThrow(/2023-02-30 is not a calendar date/)
      assert.deepStrictEqual(await vigil.deleteList("ours"), { list: "ours", version: 1, records: 1 })
      assert.isUndefined(await vigil.deleteList("ours"))
    } finally {
      await vigil.close()
    }
  })

  it("fits a calibration model in process and screens scraped-only answers with it", async () => {
    const vigil = createVigil({ db: join(dir, "calibrated.db") })
    try {
      await expect(vigil.calibrate({ asOf: "2025-01-01" })).rejects.toThrow(
        /CalibrationRefused: no scraped list names an address on 2025-01-01/
      )
      const addresses = Array.from({ length: 40 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`)
      const write = (name: string, list: ReadonlyArray<string>) => {
        const file = join(dir, name)
        writeFileSync(file, list.join("\n") + "\n")
        return file
      }
      // A scraped feed names all 40; a curated list confirms the first 30 of them.
      await vigil.ingest({
        kind: "address-list",
        input: write("feed.txt", addresses),
        list: "feed",
        category: "phishing",
        authority: "scraped",
        asOf: "2025-01-01"
      })
      await vigil.ingest({
        kind: "address-list",
        input: write("reviewed.txt", addresses.slice(0, 30)),
        list: "reviewed",
        category: "phishing",
        authority: "curated",
        asOf: "2025-01-01"
      })
      const model = await vigil.calibrate({ asOf: "2025-01-01" })
      assert.strictEqual("version" in model && model.version, 1)
      assert.strictEqual(model.training.examples + model.evaluation.examples, 40)
      const unconfirmed = addresses[35]!
      const calibrated = await vigil.screen(unconfirmed, { asOf: "2025-01-02" })
      const rules = await vigil.screen(unconfirmed, { asOf: "2025-01-02", agentic: false })
      assert.isTrue("score" in calibrated && calibrated.recommendation.ai_enhanced)
      assert.isTrue("score" in rules && !rules.recommendation.ai_enhanced && rules.score === 90)
      // About three in four of the feed's addresses are confirmed: the score moves toward 75.
      assert.isTrue("score" in calibrated && calibrated.score < 90 && calibrated.score >= 65)
    } finally {
      await vigil.close()
    }
  })

  it("screens with counterparty exposure in process: transfers read from a node, the listed sender named", async () => {
    const node = await Anvil.start()
    const vigil = createVigil({ db: join(dir, "exposure.db"), rpcUrls: { [node.chainId]: node.url } })
    try {
      const listed = node.accounts[1]!
      const recipient = "0x00000000000000000000000000000000000e0001"
      // One ether: above the dust floor of the native coin (0.1), so it counts.
      const sent = await node.rpc<string>("eth_sendTransaction", [
        { from: listed, to: recipient, value: `0x${(10n ** 18n).toString(16)}` }
      ])
      await node.mine(1)
      const file = join(dir, "listed.txt")
      writeFileSync(file, `${listed}\n`)
      await vigil.ingest({
        kind: "address-list",
        input: file,
        list: "ours",
        category: "sanctions",
        authority: "official"
      })
      const exposed = await vigil.screen(recipient, { exposure: true })
      assert.isTrue("score" in exposed)
      if (!("score" in exposed)) return
      assert.strictEqual(exposed.signals[0]?.type, "exposure_sanctioned")
      assert.deepStrictEqual(exposed.signals[0]?.evidence.exposure?.transactions, [sent])
      assert.strictEqual(exposed.recommendation.action, "REVIEW")
      const plain = await vigil.screen(recipient)
      assert.isTrue("score" in plain && plain.score === 0)
    } finally {
      await vigil.close()
      await node.stop()
    }
  })

  it("verifies a delivery signed the way Vigil signs it, and refuses tampering and replays", () => {
    const secret = WebhookSigning.newSecret()
    const body = JSON.stringify({ correlation_id: "req_x", data: { success: true } })
    const now = 1_800_000_000
    const headers = WebhookSigning.headers(secret, "msg_1", now, body)
    assert.isTrue(verifyWebhook(secret, headers, body, now))
    assert.isFalse(verifyWebhook(secret, headers, body.replace("true", "false"), now))
    assert.isFalse(verifyWebhook(secret, headers, body, now + 3600), "a replay an hour later")
    assert.isFalse(verifyWebhook(WebhookSigning.newSecret(), headers, body, now))
    assert.isFalse(verifyWebhook(secret, { ...headers, "webhook-id": "msg_2" }, body, now))
  })

  it("backtests watch rules in process over a node's blocks: what a bot would alert on, and a rule that does not check", async () => {
    const node = await Anvil.start()
    try {
      const token = Solidity.fixtures().Token
      const deployed = await node.deploy(token, [10n ** 30n])
      const contracts = [{ label: "Token", address: deployed.address, abi: token.abi }]
      const bob = node.accounts[1]!
      const t = { abi: token.abi, address: deployed.address }
      const big = await node.send(t, "transfer", [bob, 5_000n])
      await node.send(t, "transfer", [bob, 500n])
      const approve = await node.send(t, "approve", [bob, 1n])
      const after = await node.send(t, "transfer", [bob, 7_000n])
      const matches = await backtest({
        rpcUrl: node.url,
        chainId: 31337,
        contracts,
        expressions: [
          "system.uintCompare(tx1.Token.E.Transfer.value, >, 1000) && system.addressCompare(tx1.Token.E.Transfer.from, ==, tx1.from)",
          "system.emitted(tx1.Token.E.Approval) && system.uintCompare(tx2.Token.E.Transfer.value, >, 1000)"
        ],
        from: deployed.block + 1,
        to: await node.head(),
        blockRange: 3
      })
      assert.deepStrictEqual(
        matches.map((m) => [m.rule, m.transactions]),
        [
          [0, { tx1: big.hash }],
          [0, { tx1: after.hash }],
          [1, { tx1: approve.hash, tx2: after.hash }]
        ]
      )
      assert.strictEqual(
        (matches[0]!.evidence.occurrences["tx1.Token.E.Transfer"]?.args as { value?: unknown }).value,
        "5000"
      )
      await expect(
        backtest({
          rpcUrl: node.url,
          chainId: 31337,
          contracts,
          expressions: ["system.emitted(tx1.Token.E.Transfers)"],
          from: 0,
          to: 0
        })
      ).rejects.toThrow(/^expression 1, offset \d+: .*Transfers/)
    } finally {
      await node.stop()
    }
  }, 60_000)
})
