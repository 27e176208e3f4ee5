/**
 * Live monitoring with `vigil serve` following a local anvil node: latency from a block being mined to its alert
 * arriving at an HTTPS receiver (one block a second, polling every 500 ms, no confirmations; then with the node's
 * new heads over its websocket beside the polling), and the speed of the catch-up after 1,000 blocks of downtime beside a bare JSON-RPC fetch of the same blocks (the floor).
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Anvil, Solidity } from "@vigil/testkit"
import { fetchBlocks } from "../BareRpc.ts"
import { median, ratiosTo, type Scenario } from "../Harness.ts"
import { alertTxHash } from "../Messages.ts"
import { startServer } from "../Load.ts"
import { postgresCpu, postgresCpuBetween, runsHere, withDatabase } from "../Postgres.ts"
import { certificates } from "./Webhooks.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))
const POLL_MS = 500
const DOWNTIME_BLOCKS = 1_000
const blocksPerBatch = 10
const inFlight = 4

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** The scenario. */
export const scenario: Scenario = {
  name: "live",
  description: `\`vigil serve\` on SQLite following a local anvil node for one bot (a Transfer above a threshold) with a webhook channel to an HTTPS receiver. Latency: a matching transaction is mined every second and timed from \`evm_mine\` until its alert arrives (polling every ${POLL_MS} ms, 0 confirmations; target under two polling intervals), then again with the server subscribed to the node's new heads over its websocket (\`VIGIL_RPC_WS_URL_31337\`). Catch-up: the server is stopped, ${DOWNTIME_BLOCKS} blocks of one transfer each are mined (every tenth one matching), and the server restarted (in each round from a copy of its database as it was stopped; the median round); blocks per second from its listening until its cursor reaches the head, beside a bare JSON-RPC fetch of the same blocks with receipts in the same batches (the floor).`,
  run: async ({ rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-live-"))
    const certs = certificates(dir)
    const arrived = new Map<string, number>()
    const receiver = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c))
      req.on("end", () => {
        const txHash = alertTxHash(body)
        if (txHash !== undefined && !arrived.has(txHash)) arrived.set(txHash, performance.now())
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", () => done()))
    const port = (receiver.address() as { port: number }).port
    const node = await Anvil.start()
    try {
      const fixtures = Solidity.fixtures()
      const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
      const bob = node.accounts[1]!
      const db = join(dir, "live.db")
      const key = JSON.parse(
        execFileSync(process.execPath, [vigilBin, "keys", "create", "--db", db, "--name", "Bench"], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"]
        })
      ).key as string
      const env = {
        VIGIL_DB: db,
        VIGIL_HOST: "127.0.0.1",
        VIGIL_PORT: "0",
        VIGIL_RPC_URL_31337: node.url,
        VIGIL_FOLLOW_POLL_MS: String(POLL_MS),
        VIGIL_SOURCIFY_URL: "",
        VIGIL_ETHERSCAN_URL: "",
        VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        VIGIL_WEBHOOK_CA_FILE: certs.caFile
      }
      const subscribed = { ...env, VIGIL_RPC_WS_URL_31337: node.url.replace(/^http/, "ws") }
      let server = await startServer([vigilBin, "serve"], env)
      const call = async (method: string, path: string, body?: unknown) =>
        (await (
          await fetch(`${server.url}${path}`, {
            method,
            headers: { "x-api-key": key, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
        ).json()) as { follow?: Array<{ cursor?: number; heads?: string }>; channel: { id: string } }
      const cursor = async () => (await call("GET", "/health")).follow?.[0]?.cursor ?? -1
      await call("POST", "/v1/contracts", {
        chainId: 31337,
        contractAddress: token.address,
        label: "Token",
        ABI: token.abi
      })
      const channel = await call("POST", "/v1/notifications", {
        type: "webhook",
        name: "bench",
        url: `https://127.0.0.1:${port}/alerts`
      })
      await call("POST", "/v1/bots", {
        botName: "whales",
        chainId: 31337,
        watchRule: { expressions: ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"] },
        notifications: [channel.channel.id]
      })
      while ((await cursor()) < (await node.head())) await sleep(10)

      // Latency: one matching block a second, sorted.
      let sent = 0
      const latency = async () => {
        const latencies: Array<number> = []
        for (let i = 0; i < 10 * rounds; i++) {
          const hash = await node.submit(token, "transfer", [bob, 5_000n + BigInt(sent++)])
          const mined = performance.now()
          await node.rpc("evm_mine")
          while (!arrived.has(hash) && performance.now() - mined < 10_000) await sleep(1)
          const at = arrived.get(hash)
          if (at === undefined) throw new Error(`no alert for ${hash}`)
          latencies.push(at - mined)
          await sleep(Math.max(0, 1_000 - (performance.now() - mined)))
        }
        return latencies.sort((a, b) => a - b)
      }
      const polled = await latency()
      await server.stop()
      server = await startServer([vigilBin, "serve"], subscribed)
      while ((await call("GET", "/health")).follow?.[0]?.heads !== "subscribed") await sleep(10)
      const announced = await latency()

      // Catch-up after downtime.
      await server.stop()
      const first = (await node.head()) + 1
      const expected: Array<string> = []
      for (let i = 0; i < DOWNTIME_BLOCKS; i++) {
        const hash = await node.submit(token, "transfer", [bob, i % 10 === 0 ? 2_000n + BigInt(i) : 7n])
        if (i % 10 === 0) expected.push(hash)
        await node.mine(1)
      }
      const last = await node.head()
      // Each round restarts from a copy of the database as it was at the stop, so every round catches up the same blocks.
      const files = [db, `${db}-wal`, `${db}-shm`]
      const saved = files.filter(existsSync)
      for (const f of saved) copyFileSync(f, `${f}.saved`)
      const catchUps: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        for (const f of files) rmSync(f, { force: true })
        for (const f of saved) copyFileSync(`${f}.saved`, f)
        for (const h of expected) arrived.delete(h)
        server = await startServer([vigilBin, "serve"], subscribed)
        const started = performance.now()
        // Polled every 20 ms: each /health call writes to the database, and the server under test is the one answering.
        while ((await cursor()) < last) await sleep(20)
        catchUps.push((last - first + 1) / ((performance.now() - started) / 1000))
        while (expected.some((h) => !arrived.has(h)) && performance.now() - started < 60_000) await sleep(10)
        const missed = expected.filter((h) => !arrived.has(h)).length
        await server.stop()
        if (missed > 0) throw new Error(`${missed} alerts of the catch-up did not arrive`)
      }

      // The same catch-up on PostgreSQL: each round a new database holding what the file held at the stop (moved
      // there by `vigil migrate-store`, not timed), so every round catches up the same blocks.
      const pgCatchUps: Array<number> = []
      /** PostgreSQL's own CPU per block caught up (µs), each round. */
      const pgCpu: Array<number> = []
      let pgUnavailable: string | undefined
      for (let round = 0; round < rounds; round++) {
        const copy = join(dir, `pg-round-${round}.db`)
        for (const f of saved) copyFileSync(`${f}.saved`, f.replace(db, copy))
        const outcome = await withDatabase(async (url) => {
          execFileSync(process.execPath, [vigilBin, "migrate-store", "--from", copy, "--to", url], {
            stdio: ["ignore", "pipe", "pipe"]
          })
          for (const h of expected) arrived.delete(h)
          server = await startServer([vigilBin, "serve"], { ...subscribed, VIGIL_DB: url })
          try {
            const before = runsHere(url) ? postgresCpu() : undefined
            const started = performance.now()
            while ((await cursor()) < last) await sleep(20)
            const rate = (last - first + 1) / ((performance.now() - started) / 1000)
            const ms = before === undefined ? undefined : postgresCpuBetween(before, postgresCpu())
            if (ms !== undefined) pgCpu.push((ms * 1000) / (last - first + 1))
            while (expected.some((h) => !arrived.has(h)) && performance.now() - started < 60_000) await sleep(10)
            const missed = expected.filter((h) => !arrived.has(h)).length
            if (missed > 0) throw new Error(`${missed} alerts of the catch-up on PostgreSQL did not arrive`)
            return rate
          } finally {
            await server.stop()
          }
        })
        if ("value" in outcome) pgCatchUps.push(outcome.value)
        else {
          pgUnavailable = outcome.unavailable
          break
        }
      }

      const numbers = Array.from({ length: last - first + 1 }, (_, i) => first + i)
      const bare: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const t = performance.now()
        if ((await fetchBlocks(node.url, numbers, { traces: false, blocksPerBatch, inFlight })) !== DOWNTIME_BLOCKS)
          throw new Error("the bare fetch missed blocks")
        bare.push(numbers.length / ((performance.now() - t) / 1000))
      }
      const measurements = [
        { subject: "bare JSON-RPC fetch", figures: { "blocks/s": Math.round(median(bare)) } },
        {
          subject: "vigil catch-up (restart → cursor at head)",
          figures: { "blocks/s": Math.round(median(catchUps)) }
        },
        ...(pgCatchUps.length === 0
          ? []
          : [{ subject: "vigil catch-up, PostgreSQL", figures: { "blocks/s": Math.round(median(pgCatchUps)) } }]),
        ...(
          [
            ["block mined → alert received (polling)", polled],
            ["block mined → alert received (new heads over websocket)", announced]
          ] as const
        ).map(([subject, latencies]) => ({
          subject,
          figures: {
            "median ms": Math.round(median(latencies)),
            "p95 ms": Math.round(latencies[Math.floor(latencies.length * 0.95)] ?? 0),
            "max ms": Math.round(latencies.at(-1) ?? 0)
          }
        }))
      ]
      return {
        settings: {
          pollMillis: POLL_MS,
          confirmations: 0,
          latencySamples: polled.length,
          downtimeBlocks: DOWNTIME_BLOCKS,
          blocksPerBatch,
          inFlight
        },
        measurements,
        baseline: "bare JSON-RPC fetch",
        ratios: ratiosTo("bare JSON-RPC fetch", measurements),
        notes: [
          `Latency target: under two polling intervals plus confirmations (${2 * POLL_MS} ms).`,
          "Catch-up target: at least 0.85× the bare fetch's blocks/s on SQLite and 0.80× on PostgreSQL.",
          "The catch-up is timed from the restarted server listening until /health shows its cursor at the head; in every round, every one of the 100 matching transfers of the downtime was alerted.",
          pgCatchUps.length === 0
            ? `PostgreSQL not measured: ${pgUnavailable}`
            : `PostgreSQL: the same catch-up (the stopped file moved by vigil migrate-store into a new database each round) at ${(median(pgCatchUps) / median(catchUps)).toFixed(3)}× SQLite's blocks/s`,
          ...(pgCpu.length === 0
            ? []
            : [
                `PostgreSQL's own CPU (every process of the server on this machine) while catching up: ${Math.round(median(pgCpu))} µs per block (median of the rounds)`
              ])
        ]
      }
    } finally {
      await node.stop()
      receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
