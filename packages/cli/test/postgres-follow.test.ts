/**
 * Two `vigil serve` processes on one PostgreSQL database following one anvil chain: one holds the chain's lease and
 * follows it, the other stands by naming it; when the holder is killed with SIGKILL the other takes the chain over
 * from the stored cursor once the lease runs out. Every alert reaches the receiver exactly once (counted by alert
 * id and webhook-id), none is missed.
 */
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { Anvil, Postgres, Solidity } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { caller, runVigil, serve, tempDir, type Running } from "./VigilProcess.ts"

let certs: Receiver.Certificates
let run: Postgres.RunDatabase | undefined
beforeAll(async () => {
  certs = Receiver.certificates()
  run = await Postgres.createDatabase()
})
afterAll(async () => {
  certs.dispose()
  await run?.drop()
})

const { alertsAt } = Receiver

describe("two vigil serve processes on one PostgreSQL database following a chain", () => {
  it("follow it once, and when the holder is killed the other takes it over: every alert exactly once", async () => {
    const node = await Anvil.start()
    const receiver = await Receiver.start(certs)
    const servers: Array<Running> = []
    try {
      const fixtures = Solidity.fixtures()
      const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
      const cwd = tempDir()
      const db = run!.url
      const created = await runVigil(cwd, {}, ["keys", "create", "--db", db, "--name", "Acme", "--qps", "1000"])
      assert.strictEqual(created.code, 0, created.stderr)
      const key = JSON.parse(created.stdout).key as string
      const env = {
        VIGIL_DB: db,
        VIGIL_RPC_URL_31337: node.url,
        VIGIL_FOLLOW_POLL_MS: "100",
        VIGIL_FOLLOW_LEASE_MS: "1000",
        VIGIL_SOURCIFY_URL: "",
        VIGIL_ETHERSCAN_URL: "",
        VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        VIGIL_WEBHOOK_CA_FILE: certs.caFile,
        VIGIL_WEBHOOK_BACKOFF_MS: "100",
        // A delivery leased by the killed instance is sent again by the other once its lease (timeout + 2 s) ends.
        VIGIL_WEBHOOK_TIMEOUT_MS: "1000"
      }
      servers.push(
        ...(await Promise.all([
          serve(cwd, { ...env, VIGIL_INSTANCE: "alpha" }),
          serve(cwd, { ...env, VIGIL_INSTANCE: "beta" })
        ]))
      )
      const calls = servers.map((s) => caller(() => s.url, key))
      const health = async (i: number) => (await calls[i]!("GET", "/health")).json
      /** Polls until `predicate` holds of both servers' /health (a dead one counts as null). */
      const untilHealth = async (predicate: (a: any, b: any) => boolean, what: string, alive = [true, true]) => {
        for (let i = 0; i < 400; i++) {
          const [a, b] = await Promise.all([0, 1].map((j) => (alive[j] ? health(j) : Promise.resolve(null))))
          if (predicate(a, b)) return [a, b] as const
          await new Promise((done) => setTimeout(done, 25))
        }
        throw new Error(`not reached: ${what}`)
      }

      assert.strictEqual(
        (
          await calls[0]!("POST", "/v1/contracts", {
            chainId: 31337,
            contractAddress: token.address,
            label: "Token",
            ABI: token.abi
          })
        ).status,
        201
      )
      const channel = await calls[0]!("POST", "/v1/notifications", {
        type: "webhook",
        name: "receiver",
        url: receiver.url("/alerts")
      })
      const bot = await calls[1]!("POST", "/v1/bots", {
        botName: "whales",
        chainId: 31337,
        watchRule: { expressions: ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"] },
        notifications: [channel.json.channel.id]
      })
      assert.strictEqual(bot.status, 201, JSON.stringify(bot.json))

      // One follows, the other stands by and says who follows.
      const head = await node.head()
      const [a, b] = await untilHealth(
        (a, b) =>
          [a, b].some((h) => h.follow?.[0]?.state === "following" && h.follow[0].cursor >= head) &&
          [a, b].some((h) => h.follow?.[0]?.state === "standby"),
        "one following, one in standby"
      )
      assert.deepStrictEqual([a.instance, b.instance], ["alpha", "beta"])
      const holder = a.follow[0].state === "following" ? 0 : 1
      const other = 1 - holder
      const names = ["alpha", "beta"]
      assert.strictEqual([a, b][holder].follow[0].holder, names[holder])
      assert.strictEqual([a, b][other].follow[0].holder, names[holder], "the standby names the holder")
      assert.match([a, b][other].follow[0].holderUntil, /^\d{4}-\d\d-\d\dT/)

      const bob = node.accounts[1]!
      const expected: Array<string> = []
      const transfer = async (value: bigint) => {
        const sent = await node.send(token, "transfer", [bob, value])
        if (value > 1000n) expected.push(sent.hash)
      }
      for (const value of [5_000n, 10n, 6_000n]) await transfer(value)
      await receiver.until((got) => alertsAt(got).size >= 2)

      // The holder dies without a word; transfers go on; the other takes the chain over from the stored cursor.
      servers[holder]!.child.kill("SIGKILL")
      await servers[holder]!.exited
      for (let i = 0; i < 6; i++) await transfer(i % 2 === 0 ? 2_000n + BigInt(i) : 5n)
      const last = await node.head()
      const alive = [holder !== 0, holder !== 1]
      await untilHealth(
        (...hs) => {
          const h = hs[other]
          return (
            h?.follow?.[0]?.state === "following" && h.follow[0].holder === names[other] && h.follow[0].cursor >= last
          )
        },
        "taken over and caught up",
        alive
      )
      await receiver.until((got) => alertsAt(got).size >= expected.length, 30_000)

      const byAlert = alertsAt(receiver.received)
      assert.strictEqual(byAlert.size, expected.length, "one alert per matching transaction")
      assert.deepStrictEqual([...byAlert.values()].map((x) => x.tx).sort(), [...expected].sort())
      for (const [id, x] of byAlert) assert.strictEqual(x.deliveries.size, 1, `alert ${id} delivered once`)
      const listed = await calls[other]!("GET", `/v1/bots/${bot.json.bot.id}/alerts?limit=200`)
      assert.strictEqual(listed.json.alerts.length, expected.length, "and stored once")
    } finally {
      for (const s of servers) s.child.kill("SIGKILL")
      await Promise.all([...servers.map((s) => s.exited), node.stop(), receiver.close()])
    }
  }, 120_000)
})
