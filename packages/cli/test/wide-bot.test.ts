/**
 * One tenant's accepted bot cannot take the service down: `vigil serve` follows anvil (four transfers to one token a
 * block) for two keys, and key A creates a bot joining three transactions on the token over 500 blocks, so that
 * every triple of the window matches. The process stays up and answers `/health/live` all along, the bot is paused
 * with its reason (stored, so a restart does not run it again), and key B's bot goes on alerting, exactly once; on
 * SQLite across a restart, and on PostgreSQL with two instances across the death of the one following.
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
const fixtures = Solidity.fixtures()

/** The bot of the issue: three transactions to the same address, within 500 blocks. */
const wide = {
  botName: "wide",
  chainId: 31337,
  watchRule: {
    expressions: ["system.addressCompare(tx1.to, ==, tx2.to) && system.addressCompare(tx2.to, ==, tx3.to)"]
  },
  options: { topLevelTxBlockRange: 500 }
}

/** Reads `/health/live` back to back until stopped: the answers that were not 200, and the slowest. */
const probe = (url: () => string) => {
  let reading = true
  const failures: Array<string> = []
  let slowest = 0
  const done = (async () => {
    while (reading) {
      const started = performance.now()
      try {
        const r = await fetch(`${url()}/health/live`, { signal: AbortSignal.timeout(5_000) })
        await r.arrayBuffer()
        if (r.status !== 200) failures.push(`status ${r.status}`)
      } catch (e) {
        failures.push((e as Error).message)
      }
      slowest = Math.max(slowest, performance.now() - started)
    }
  })()
  return {
    stop: async () => {
      reading = false
      await done
      return { failures, slowest }
    }
  }
}

/**
 * A node with the token, two keys on `db` with their contracts and webhook channels (A's to /wide, B's to /quiet),
 * and key B's bot alerting on transfers above 1,000; `body` is given what it needs. Everything stops after.
 */
const scenario = async (
  db: string,
  servers: (cwd: string, env: Record<string, string>) => Promise<Array<Running>>,
  body: (env: {
    readonly node: Anvil.Anvil
    readonly token: { readonly abi: ReadonlyArray<unknown>; readonly address: `0x${string}` }
    readonly receiver: Receiver.Receiver
    readonly cwd: string
    readonly env: Record<string, string>
    readonly running: Array<Running>
    readonly keys: { readonly a: string; readonly b: string }
    /** Mines `blocks` blocks of four transfers of 5 each, the last of a block `last` if given; its hashes. */
    readonly blocks: (blocks: number, last?: bigint) => Promise<Array<string>>
  }) => Promise<void>
) => {
  const node = await Anvil.start()
  const receiver = await Receiver.start(certs)
  const running: Array<Running> = []
  try {
    const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
    const cwd = tempDir()
    const key = async (name: string) => {
      const created = await runVigil(cwd, {}, ["keys", "create", "--db", db, "--name", name, "--qps", "1000"])
      assert.strictEqual(created.code, 0, created.stderr)
      return JSON.parse(created.stdout).key as string
    }
    const keys = { a: await key("A"), b: await key("B") }
    const env = {
      VIGIL_DB: db,
      VIGIL_RPC_URL_31337: node.url,
      VIGIL_FOLLOW_POLL_MS: "100",
      VIGIL_SOURCIFY_URL: "",
      VIGIL_ETHERSCAN_URL: "",
      VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
      VIGIL_WEBHOOK_CA_FILE: certs.caFile,
      VIGIL_WEBHOOK_BACKOFF_MS: "100"
    }
    running.push(...(await servers(cwd, env)))
    for (const [k, path] of [
      [keys.a, "/wide"],
      [keys.b, "/quiet"]
    ] as const) {
      const call = caller(() => running[0]!.url, k)
      const contract = await call("POST", "/v1/contracts", {
        chainId: 31337,
        contractAddress: token.address,
        label: "Token",
        ABI: token.abi
      })
      assert.strictEqual(contract.status, 201, JSON.stringify(contract.json))
      const channel = await call("POST", "/v1/notifications", { type: "webhook", name: "r", url: receiver.url(path) })
      assert.strictEqual(channel.status, 201, JSON.stringify(channel.json))
      if (k === keys.b) {
        const bot = await call("POST", "/v1/bots", {
          botName: "whales",
          chainId: 31337,
          watchRule: { expressions: ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"] },
          notifications: [channel.json.channel.id]
        })
        assert.strictEqual(bot.status, 201, JSON.stringify(bot.json))
      }
    }
    const bob = node.accounts[1]!
    const blocks = async (count: number, last?: bigint) => {
      const hashes: Array<string> = []
      for (let b = 0; b < count; b++) {
        for (let i = 0; i < 4; i++)
          hashes.push(
            await node.submit(token, "transfer", [bob, i === 3 && last !== undefined ? last : 5n], { gas: 100_000 })
          )
        await node.mine(1)
      }
      return hashes
    }
    await body({ node, token, receiver, cwd, env, running, keys, blocks })
  } finally {
    for (const s of running) s.child.kill("SIGKILL")
    await Promise.all([...running.map((s) => s.exited), node.stop(), receiver.close()])
  }
}

/** Polls `read` until `done` holds of its answer (every 25 ms, up to `ms`). */
const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, what: string, ms = 30_000): Promise<A> => {
  const started = performance.now()
  for (;;) {
    const a = await read()
    if (done(a)) return a
    if (performance.now() - started > ms) throw new Error(`not reached: ${what}: ${JSON.stringify(a)}`)
    await new Promise((next) => setTimeout(next, 25))
  }
}

const overBounds =
  /^its rules (matched more than 100 times a block|tried more than 1000000 bindings in one step), at block \d+/

/**
 * Key A creates the wide bot (accepted: its transactions are joined), then three blocks are mined, each with a
 * transfer key B's bot alerts on; resolves once the wide bot is paused over its bounds: its id, its `paused`, and
 * the transfers key B expects alerts for.
 */
const createWide = async (
  a: ReturnType<typeof caller>,
  blocks: (count: number, last?: bigint) => Promise<Array<string>>
) => {
  const created = await a("POST", "/v1/bots", wide)
  assert.strictEqual(created.status, 201, "the bot is accepted: its transactions are joined")
  const id = created.json.bot.id as string
  const expected = (await blocks(3, 5_000n)).filter((_, i) => i % 4 === 3)
  const paused = await until(
    () => a("GET", `/v1/bots/${id}`),
    (r) => r.json.bot?.active === false,
    "the wide bot paused"
  )
  assert.match(paused.json.bot.paused.reason, overBounds)
  return { id, paused: paused.json.bot.paused as { reason: string }, expected }
}

/** Resolves once key B's receiver has `n` distinct alerts. */
const quietAlerts = (receiver: Receiver.Receiver, n: number) =>
  receiver.until((got) => alertsAt(got.filter((m) => m.path === "/quiet")).size >= n, 30_000)

describe("a bot that joins every transaction of a wide window", () => {
  it("on SQLite: the process stays up, the bot is paused with its reason, the other key alerts; a restart stays up", async () => {
    await scenario(
      "v.db",
      async (cwd, env) => [await serve(cwd, env)],
      async ({ cwd, env, running, keys, blocks, receiver }) => {
        const a = caller(() => running[0]!.url, keys.a)
        const b = caller(() => running[0]!.url, keys.b)
        const cursor = async () => (await b("GET", "/health")).json.follow?.[0]?.cursor ?? -1
        // 150 blocks of four transfers each: 600 transactions, about 36 million triples.
        await blocks(150)
        await until(cursor, (c) => c >= 150, "the chain followed")

        const live = probe(() => running[0]!.url)
        const { id, paused, expected } = await createWide(a, blocks)
        assert.include((await b("GET", "/health")).json.follow[0].skipped, `bot ${id}: paused: ${paused.reason}`)
        await quietAlerts(receiver, expected.length)
        const { failures, slowest } = await live.stop()
        assert.deepStrictEqual(failures, [], "/health/live answered 200 all along")
        assert.strictEqual(running[0]!.child.exitCode, null, "the process is up")
        console.log(
          `wide bot on SQLite: paused (${paused.reason.slice(0, 60)}…); slowest /health/live ${slowest.toFixed(0)} ms`
        )

        // A restart on the same store stays up, runs the paused bot no more, and key B alerts on.
        running[0]!.child.kill("SIGKILL")
        await running[0]!.exited
        running[0] = await serve(cwd, env)
        const again = probe(() => running[0]!.url)
        expected.push(...(await blocks(3, 6_000n)).filter((_, i) => i % 4 === 3))
        const last = (await b("GET", "/health")).json.follow?.[0]?.head ?? 0
        await until(cursor, (c) => c >= last, "followed after the restart")
        await quietAlerts(receiver, expected.length)
        const after = await again.stop()
        assert.deepStrictEqual(after.failures, [])
        assert.strictEqual(running[0]!.child.exitCode, null, "the restarted process is up")
        const still = await a("GET", `/v1/bots/${id}`)
        assert.deepStrictEqual(still.json.bot.paused, paused, "still paused, not run again")

        const quiet = alertsAt(receiver.received.filter((m) => m.path === "/quiet"))
        assert.deepStrictEqual([...quiet.values()].map((x) => x.tx).sort(), [...expected].sort())
        for (const [alert, x] of quiet) assert.strictEqual(x.deliveries.size, 1, `alert ${alert} delivered once`)
        assert.strictEqual(receiver.received.filter((m) => m.path === "/wide").length, 0, "the wide bot sent nothing")
      }
    )
  }, 120_000)

  it("on PostgreSQL with two instances: neither dies, and the one taking over from a killed holder stays up", async () => {
    const env2 = { VIGIL_FOLLOW_LEASE_MS: "1000", VIGIL_WEBHOOK_TIMEOUT_MS: "1000" }
    await scenario(
      run!.url,
      async (cwd, env) =>
        await Promise.all([
          serve(cwd, { ...env, ...env2, VIGIL_INSTANCE: "alpha" }),
          serve(cwd, { ...env, ...env2, VIGIL_INSTANCE: "beta" })
        ]),
      async ({ running, keys, blocks, receiver }) => {
        let serving = 0
        const a = caller(() => running[serving]!.url, keys.a)
        const health = (i: number) => caller(() => running[i]!.url, keys.b)("GET", "/health")
        await blocks(150)
        const [h0, h1] = await until(
          () => Promise.all([health(0), health(1)]),
          ([x, y]) => [x, y].some((h) => h.json.follow?.[0]?.state === "following" && h.json.follow[0].cursor >= 150),
          "one instance following"
        )
        const holder = h0.json.follow[0].state === "following" ? 0 : 1
        const other = 1 - holder
        assert.strictEqual([h0, h1][other]!.json.follow[0].state, "standby")

        const probes = [probe(() => running[0]!.url), probe(() => running[1]!.url)]
        const { id, paused, expected } = await createWide(a, blocks)
        await quietAlerts(receiver, expected.length)
        for (const p of probes) assert.deepStrictEqual((await p.stop()).failures, [], "/health/live answered all along")
        assert.deepStrictEqual(
          running.map((s) => s.child.exitCode),
          [null, null],
          "both instances are up"
        )

        // The holder dies; the other takes the chain over, does not run the paused bot, and key B alerts on.
        running[holder]!.child.kill("SIGKILL")
        await running[holder]!.exited
        serving = other
        const survivor = probe(() => running[other]!.url)
        expected.push(...(await blocks(3, 6_000n)).filter((_, i) => i % 4 === 3))
        await quietAlerts(receiver, expected.length)
        assert.deepStrictEqual((await survivor.stop()).failures, [])
        assert.strictEqual(running[other]!.child.exitCode, null, "the instance that took over is up")
        const taken = await health(other)
        assert.strictEqual(taken.json.follow[0].state, "following")
        assert.deepStrictEqual((await a("GET", `/v1/bots/${id}`)).json.bot.paused, paused)

        const quiet = alertsAt(receiver.received.filter((m) => m.path === "/quiet"))
        assert.deepStrictEqual([...quiet.values()].map((x) => x.tx).sort(), [...expected].sort())
        for (const [alert, x] of quiet) assert.strictEqual(x.deliveries.size, 1, `alert ${alert} delivered once`)
      }
    )
  }, 150_000)
})
