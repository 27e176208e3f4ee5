/**
 * `vigil migrate-store`: what a SQLite file holds, moved into a new PostgreSQL database in one transaction, answers
 * the same when served from there: keys, lists with their history, channels, contracts, bots. A target that
 * already holds data, a missing file and a wrong kind of store are refused in one line.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Postgres } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { caller, ingestWatchArgs, runVigil, serve, tempDir } from "./VigilProcess.ts"

const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
const TOKEN = "0x" + "a".repeat(40)
const transferAbi = [
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false }
    ]
  }
]

let run: Postgres.RunDatabase | undefined
beforeAll(async () => {
  run = await Postgres.createDatabase()
})
afterAll(async () => {
  await run?.drop()
})

describe("vigil migrate-store", () => {
  it("moves a SQLite file into PostgreSQL, where it answers the same; refuses a target holding data", async () => {
    const cwd = tempDir()
    const created = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", "--name", "Acme", "--qps", "100"])
    assert.strictEqual(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout).key as string
    writeFileSync(join(cwd, "one.txt"), `${LAZARUS}\n`)
    writeFileSync(join(cwd, "two.txt"), `${LAZARUS}\n${CLEAN}\n`)
    for (const [file, asOf] of [
      ["one.txt", "2025-01-01"],
      ["two.txt", "2025-06-01"]
    ] as const) {
      const ingested = await runVigil(
        cwd,
        { VIGIL_DB: "v.db" },
        ingestWatchArgs(file, asOf, ["--authority", "official"])
      )
      assert.strictEqual(ingested.code, 0, ingested.stderr)
    }
    // A refresh the guard refused: kept beside the list, and moved with it.
    writeFileSync(join(cwd, "empty.txt"), "\n")
    const refused = await runVigil(
      cwd,
      { VIGIL_DB: "v.db" },
      ingestWatchArgs("empty.txt", "2025-07-01", ["--authority", "official"])
    )
    assert.strictEqual(refused.code, 1, refused.stdout)
    const env = { VIGIL_SOURCIFY_URL: "", VIGIL_ETHERSCAN_URL: "", VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1" }
    const before = await serve(cwd, { ...env, VIGIL_DB: "v.db" })
    const call = caller(() => before.url, key)
    const contract = await call("POST", "/v1/contracts", {
      chainId: 1,
      contractAddress: TOKEN,
      label: "Token",
      ABI: transferAbi
    })
    assert.strictEqual(contract.status, 201, JSON.stringify(contract.json))
    const channel = await call("POST", "/v1/notifications", {
      type: "webhook",
      name: "ops",
      url: "https://127.0.0.1:9/vigil"
    })
    assert.strictEqual(channel.status, 201, JSON.stringify(channel.json))
    const bot = await call("POST", "/v1/bots", {
      botName: "whales",
      chainId: 1,
      active: false,
      watchRule: { expressions: ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"] },
      notifications: [channel.json.channel.id]
    })
    assert.strictEqual(bot.status, 201, JSON.stringify(bot.json))
    // A message waiting in the outbox (nothing answers on port 9): it moves too.
    const queued = await call("POST", `/v1/notifications/${channel.json.channel.id}/test`)
    assert.strictEqual(queued.status, 202, JSON.stringify(queued.json))
    const read = async (c: ReturnType<typeof caller>) => ({
      now: (await c("POST", "/api/v3/intel", { address: CLEAN })).json.recommendation?.action,
      then: (await c("POST", "/api/v3/intel", { address: CLEAN, options: { as_of: "2025-03-01" } })).json.recommendation
        ?.action,
      bots: (await c("GET", "/v1/bots")).json.bots,
      contracts: (await c("GET", "/v1/contracts")).json.contracts,
      channels: (await c("GET", "/v1/notifications")).json.channels.map((x: any) => [
        x.id,
        x.type,
        x.name,
        x.deliveries.pending + x.deliveries.failed
      ]),
      refusals: (await c("GET", "/v1/lists")).json.lists.map((x: any) => x.refused)
    })
    const expected = await read(call)
    assert.strictEqual(expected.refusals[0]?.origin, "empty.txt")
    assert.strictEqual(expected.now, "BLOCK")
    assert.notStrictEqual(expected.then, "BLOCK", "not listed before the second version")
    before.child.kill("SIGTERM")
    await before.exited

    const moved = await runVigil(cwd, {}, ["migrate-store", "--from", "v.db", "--to", run!.url])
    assert.strictEqual(moved.code, 0, moved.stderr)
    const summary = JSON.parse(moved.stdout)
    assert.deepInclude(summary.moved, {
      api_keys: 1,
      intel_versions: 2,
      intel_lists: 1,
      intel_refusals: 1,
      monitor_bots: 1,
      monitor_contracts: 1,
      webhooks: 1,
      webhook_deliveries: 1
    })

    const after = await serve(cwd, { ...env, VIGIL_DB: run!.url })
    try {
      assert.deepStrictEqual(await read(caller(() => after.url, key)), expected, "answers the same from PostgreSQL")
    } finally {
      after.child.kill("SIGTERM")
      await after.exited
    }

    const again = await runVigil(cwd, {}, ["migrate-store", "--from", "v.db", "--to", run!.url])
    assert.strictEqual(again.code, 1)
    assert.match(
      again.stderr.trim(),
      /^vigil: the target database already holds data \(api_keys, .*\); give an empty one, nothing was written$/
    )
    const missing = await runVigil(cwd, {}, ["migrate-store", "--from", "nope.db", "--to", run!.url])
    assert.strictEqual(missing.stderr.trim(), "vigil: --from nope.db: no such file")
    const wrong = await runVigil(cwd, {}, ["migrate-store", "--from", "v.db", "--to", "other.db"])
    assert.strictEqual(wrong.code, 2)
    assert.strictEqual(
      wrong.stderr.trim(),
      "vigil migrate-store: --to must be a postgres:// URL, not other.db; see vigil migrate-store --help"
    )
  }, 120_000)
})
