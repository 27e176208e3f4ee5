/**
 * End to end: `vigil serve` following anvil, killed with SIGKILL between blocks and in the middle of a catch-up,
 * then restarted: every expected alert reaches the receiver, none twice (counted by alert id), no block skipped.
 */
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { Anvil, Solidity } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { caller, runVigil, serve, tempDir, type Running } from "./VigilProcess.ts"

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

const { alertsAt } = Receiver

describe("live monitoring across crashes", () => {
  it("kill -9 between blocks and during a catch-up, then restarts: every alert exactly once", async () => {
    // Also: a bad follow setting is refused in one line.
    for (const [name, value] of [
      ["VIGIL_FOLLOW_POLL_MS", "5"],
      ["VIGIL_FOLLOW_BATCH", "0"],
      ["VIGIL_CONFIRMATIONS_x", "1"],
      ["VIGIL_CONFIRMATIONS", "-1"],
      ["VIGIL_RPC_BATCH", "0"],
      ["VIGIL_RPC_IN_FLIGHT", "17"],
      ["VIGIL_FOLLOW_LEASE_MS", "999"],
      ["VIGIL_INSTANCE", "two words"],
      ["VIGIL_ACTIVITY_BUDGET_MS", "5"]
    ] as const) {
      const refused = await runVigil(tempDir(), { VIGIL_DB: "v.db", VIGIL_PORT: "0", [name]: value }, ["serve"])
      assert.strictEqual(refused.code, 1, name)
      assert.match(refused.stderr, new RegExp(`invalid ${name}`))
    }
    const node = await Anvil.start()
    const receiver = await Receiver.start(certs)
    try {
      const fixtures = Solidity.fixtures()
      const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
      const cwd = tempDir()
      const created = await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", "--name", "Acme", "--qps", "1000"])
      const key = JSON.parse(created.stdout).key as string
      const env = {
        VIGIL_DB: "v.db",
        VIGIL_RPC_URL_31337: node.url,
        VIGIL_FOLLOW_POLL_MS: "50",
        VIGIL_FOLLOW_BATCH: "4",
        // Two blocks a request, one request at a time: the catch-up steps read in two requests each.
        VIGIL_RPC_BATCH: "2",
        VIGIL_RPC_IN_FLIGHT: "1",
        VIGIL_SOURCIFY_URL: "",
        VIGIL_ETHERSCAN_URL: "",
        VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        VIGIL_WEBHOOK_CA_FILE: certs.caFile,
        VIGIL_WEBHOOK_BACKOFF_MS: "100"
      }
      let server: Running = await serve(cwd, env)
      const call = caller(() => server.url, key)
      /** Resolves once the follower has processed block `n` (read from /health). */
      const processed = async (n: number) => {
        for (let i = 0; i < 600; i++) {
          const health = await call("GET", "/health")
          if ((health.json.follow?.[0]?.cursor ?? -1) >= n) return
          await new Promise((done) => setTimeout(done, 25))
        }
        throw new Error(`block ${n} not processed`)
      }
      const restart = async () => {
        server.child.kill("SIGKILL")
        await server.exited
        server = await serve(cwd, env)
      }

      assert.strictEqual(
        (
          await call("POST", "/v1/contracts", {
            chainId: 31337,
            contractAddress: token.address,
            label: "Token",
            ABI: token.abi
          })
        ).status,
        201
      )
      const channel = await call("POST", "/v1/notifications", {
        type: "webhook",
        name: "receiver",
        url: receiver.url("/alerts")
      })
      const bot = await call("POST", "/v1/bots", {
        botName: "whales",
        chainId: 31337,
        watchRule: { expressions: ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"] },
        notifications: [channel.json.channel.id]
      })
      assert.strictEqual(bot.status, 201)
      await processed(await node.head())

      const bob = node.accounts[1]!
      const expected: Array<string> = []
      const transfer = async (value: bigint) => {
        const sent = await node.send(token, "transfer", [bob, value])
        if (value > 1000n) expected.push(sent.hash)
        return sent
      }
      // Between blocks: processed and delivered, then killed.
      for (const value of [5_000n, 10n, 6_000n]) await transfer(value)
      await processed(await node.head())
      await receiver.until((got) => alertsAt(got).size >= 2)
      await restart()

      // Down while 40 blocks are mined (every other one matching); killed again once the catch-up has begun.
      server.child.kill("SIGKILL")
      await server.exited
      for (let i = 0; i < 40; i++) await transfer(i % 2 === 0 ? 2_000n + BigInt(i) : 5n)
      server = await serve(cwd, env)
      // Catching up 4 blocks a step: killed once the first steps have alerted.
      await receiver.until((got) => alertsAt(got).size >= 4)
      await restart()
      const head = await node.head()
      await processed(head)
      await receiver.until((got) => alertsAt(got).size >= expected.length, 20_000)

      const byAlert = alertsAt(receiver.received)
      assert.strictEqual(byAlert.size, expected.length, "one alert per matching transaction")
      assert.deepStrictEqual([...byAlert.values()].map((a) => a.tx).sort(), [...expected].sort())
      for (const [id, a] of byAlert) assert.strictEqual(a.deliveries.size, 1, `alert ${id} delivered once`)
      const listed = await call("GET", `/v1/bots/${bot.json.bot.id}/alerts?limit=200`)
      assert.strictEqual(listed.json.alerts.length, expected.length, "and stored once")
      server.child.kill("SIGKILL")
      await server.exited
    } finally {
      await Promise.all([node.stop(), receiver.close()])
    }
  }, 120_000)
})
