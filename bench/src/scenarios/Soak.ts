/**
 * Monitoring as a shared service under load: `vigil serve` following a local anvil node for three keys. One key's
 * alert latency (a matching transfer mined → its alert at an HTTPS receiver) is measured alone, then while another
 * key runs a heavy bot and four more whose channel never answers, with four transfers a block, then while a third
 * key's 100 bots go over their bounds together; and how long `/health/live` takes meanwhile.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Anvil, Solidity } from "@vigil/testkit"
import { median, ratiosTo, type Scenario } from "../Harness.ts"
import { alertTxHash } from "../Messages.ts"
import { startServer } from "../Load.ts"
import { certificates } from "./Webhooks.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))
const POLL_MS = 250

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/** The scenario. */
export const scenario: Scenario = {
  name: "soak",
  description: `\`vigil serve\` on SQLite following a local anvil node (polling every ${POLL_MS} ms) for two keys. Key B has five bots (thresholds 0 to 4,000) sending to an HTTPS receiver; a matching transfer is mined every second and timed until key B's alert for it arrives. Alone first, then while key A runs a heavy bot (every pair of transfers to one receiver within 100 blocks: it goes over its bounds and is paused) and four bots whose channel never answers, with three more transfers in every block; \`/health/live\` is read back to back meanwhile. Then, after 150 more blocks of four transfers, key C switches on 100 bots together (four requests at a time), each joining transactions to the token over 500 blocks (half match every triple, half try every triple and match none), so each goes over its bounds as soon as it runs and is paused; key B's latency and \`/health/live\` are measured from that moment. Target: key B's latency within 2× its figure alone in both, \`/health/live\` under 100 ms.`,
  run: async ({ rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-soak-"))
    const certs = certificates(dir)
    const arrived = new Map<string, number>()
    const receiver = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c))
      req.on("end", () => {
        // The stalled channel never answers; its sends time out.
        if (req.url === "/stalled") return
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
      const db = join(dir, "soak.db")
      const newKey = (name: string) =>
        JSON.parse(
          execFileSync(process.execPath, [vigilBin, "keys", "create", "--db", db, "--name", name, "--qps", "1000"], {
            encoding: "utf8",
            stdio: ["ignore", "pipe", "pipe"]
          })
        ).key as string
      const keys = { a: newKey("A"), b: newKey("B"), c: newKey("C") }
      const server = await startServer([vigilBin, "serve"], {
        VIGIL_DB: db,
        VIGIL_HOST: "127.0.0.1",
        VIGIL_PORT: "0",
        VIGIL_RPC_URL_31337: node.url,
        VIGIL_FOLLOW_POLL_MS: String(POLL_MS),
        VIGIL_SOURCIFY_URL: "",
        VIGIL_ETHERSCAN_URL: "",
        VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        VIGIL_WEBHOOK_CA_FILE: certs.caFile
      })
      try {
        const call = async (key: string, method: string, path: string, body?: unknown) =>
          (await (
            await fetch(`${server.url}${path}`, {
              method,
              headers: { "x-api-key": key, "content-type": "application/json" },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })
          ).json()) as { follow?: Array<{ cursor?: number }>; channel: { id: string } }
        const setUp = async (
          key: string,
          path: string,
          bots: ReadonlyArray<ReadonlyArray<string>>,
          options: { readonly active?: boolean; readonly topLevelTxBlockRange?: number } = {}
        ) => {
          await call(key, "POST", "/v1/contracts", {
            chainId: 31337,
            contractAddress: token.address,
            label: "Token",
            ABI: token.abi
          })
          const channel = await call(key, "POST", "/v1/notifications", {
            type: "webhook",
            name: path,
            url: `https://127.0.0.1:${port}${path}`
          })
          const ids: Array<string> = []
          for (const [i, expressions] of bots.entries()) {
            const created = (await call(key, "POST", "/v1/bots", {
              botName: `bot ${i}`,
              chainId: 31337,
              watchRule: { expressions },
              notifications: [channel.channel.id],
              ...(options.active === undefined ? {} : { active: options.active }),
              ...(options.topLevelTxBlockRange === undefined
                ? {}
                : { options: { topLevelTxBlockRange: options.topLevelTxBlockRange } })
            })) as unknown as { bot?: { id: string } }
            if (created.bot === undefined) throw new Error(`bot not created: ${JSON.stringify(created)}`)
            ids.push(created.bot.id)
          }
          return ids
        }
        await setUp(
          keys.b,
          "/quiet",
          [0, 1000, 2000, 3000, 4000].map((t) => [`system.uintCompare(tx1.Token.E.Transfer.value, >, ${t})`])
        )
        const cursor = async () => (await call(keys.b, "GET", "/health")).follow?.[0]?.cursor ?? -1
        while ((await cursor()) < (await node.head())) await sleep(10)

        let sent = 0
        /** One matching transfer a second, with `filler` more in its block: key B's latencies, sorted. */
        const latency = async (filler: number) => {
          const latencies: Array<number> = []
          for (let i = 0; i < 10 * rounds; i++) {
            for (let f = 0; f < filler; f++) await node.submit(token, "transfer", [bob, 500n], { gas: 100_000 })
            const hash = await node.submit(token, "transfer", [bob, 5_000n + BigInt(sent++)], { gas: 100_000 })
            const mined = performance.now()
            await node.rpc("evm_mine")
            while (!arrived.has(hash) && performance.now() - mined < 15_000) await sleep(1)
            const at = arrived.get(hash)
            if (at === undefined) throw new Error(`no alert for ${hash}`)
            latencies.push(at - mined)
            await sleep(Math.max(0, 1_000 - (performance.now() - mined)))
          }
          return latencies.sort((a, b) => a - b)
        }
        const alone = await latency(0)

        await setUp(keys.a, "/stalled", [
          [
            "system.emitted(tx1.Token.E.Transfer) && system.emitted(tx2.Token.E.Transfer)",
            "system.addressCompare(tx2.Token.E.Transfer.to, ==, tx1.Token.E.Transfer.to)"
          ],
          ...[0, 1, 2, 3].map((t) => [`system.uintCompare(tx1.Token.E.Transfer.value, >, ${t})`])
        ])
        /** `/health/live` read back to back while `work` runs: the answers' times, sorted. */
        const probed = async <A>(work: () => Promise<A>) => {
          let probing = true
          const times: Array<number> = []
          const prober = (async () => {
            while (probing) {
              const t = performance.now()
              await fetch(`${server.url}/health/live`).then((r) => r.arrayBuffer())
              times.push(performance.now() - t)
            }
          })()
          const result = await work()
          probing = false
          await prober
          return { result, times: times.sort((a, b) => a - b) }
        }
        const { result: loaded, times: live } = await probed(() => latency(3))

        // Key C: 100 bots over 500 blocks, each going over its bounds as soon as it runs (half of them match
        // every triple of transfers to the token, half try every triple and match none), switched on together
        // over a window of 150 more blocks of four transfers.
        const triples = "system.addressCompare(tx1.to, ==, tx2.to) && system.addressCompare(tx2.to, ==, tx3.to)"
        const heavy = await setUp(
          keys.c,
          "/heavy",
          Array.from({ length: 100 }, (_, i) =>
            i % 2 === 0 ? [triples] : [`${triples} && system.uintCompare(tx3.value, >, 0)`]
          ),
          { active: false, topLevelTxBlockRange: 500 }
        )
        for (let b = 0; b < 150; b++) {
          for (let f = 0; f < 4; f++) await node.submit(token, "transfer", [bob, 500n], { gas: 100_000 })
          await node.mine(1)
        }
        while ((await cursor()) < (await node.head())) await sleep(10)
        const paused = async () => {
          let n = 0
          for (const id of heavy) {
            const bot = (await call(keys.c, "GET", `/v1/bots/${id}`)) as unknown as { bot: { paused?: unknown } }
            if (bot.bot.paused !== undefined) n++
          }
          return n
        }
        let switchedOn = 0
        const { result: bounded, times: liveBounded } = await probed(async () => {
          // Four requests at a time, as a client switching them on would: all on within a step or two.
          const queue = [...heavy]
          await Promise.all(
            [0, 1, 2, 3].map(async () => {
              for (let id = queue.shift(); id !== undefined; id = queue.shift())
                await call(keys.c, "PUT", `/v1/bots/${id}`, { active: true })
            })
          )
          switchedOn = performance.now()
          return latency(3)
        })
        let pausedAfter = await paused()
        while (pausedAfter < heavy.length && performance.now() - switchedOn < 300_000) {
          await sleep(1_000)
          pausedAfter = await paused()
        }
        if (pausedAfter !== heavy.length) throw new Error(`only ${pausedAfter} of key C's 100 bots were paused`)
        const allPaused = (performance.now() - switchedOn) / 1000

        const figures = (latencies: ReadonlyArray<number>) => ({
          "median ms": Math.round(median(latencies)),
          "p95 ms": Math.round(percentile(latencies, 0.95)),
          "max ms": Math.round(latencies.at(-1) ?? 0)
        })
        const liveFigures = (times: ReadonlyArray<number>) => ({
          "median ms": Math.round(median(times) * 10) / 10,
          "p95 ms": Math.round(percentile(times, 0.95) * 10) / 10,
          "max ms": Math.round(times.at(-1) ?? 0)
        })
        const measurements = [
          { subject: "key B alone", figures: figures(alone) },
          { subject: "key B beside key A's heavy bot and stalled channel", figures: figures(loaded) },
          { subject: "/health/live meanwhile", figures: liveFigures(live) },
          { subject: "key B while key C's 100 bots hit their bounds together", figures: figures(bounded) },
          { subject: "/health/live while key C's 100 bots hit their bounds", figures: liveFigures(liveBounded) }
        ]
        return {
          settings: { pollMillis: POLL_MS, samples: alone.length, transfersPerBlockLoaded: 4, bots: 110 },
          measurements,
          baseline: "key B alone",
          ratios: ratiosTo("key B alone", measurements),
          notes: [
            "Targets: key B's latency within 2× its latency alone, beside key A and while key C's bots hit their bounds; /health/live under 100 ms throughout.",
            `/health/live was read ${live.length} times while loaded, ${liveBounded.length} times while key C's bots hit their bounds.`,
            `All ${heavy.length} of key C's bots were paused over their bounds, the last ${allPaused.toFixed(0)} s after they were switched on (read once a second after key B's samples).`
          ]
        }
      } finally {
        await server.stop()
      }
    } finally {
      await node.stop()
      receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
