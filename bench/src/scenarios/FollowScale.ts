/**
 * Live following at mainnet scale: `vigil serve` catching up blocks of 200 transactions (a mix of ERC-20
 * transfers, approvals, router calls that transfer internally, calls that revert inside, reverted transactions and
 * contract creations) for 1, 100 and 1,000 bots, beside a bare fetch of the same blocks with receipts and call
 * traces. Every alert is counted against what the blocks hold, as read back from the node.
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Anvil, Solidity } from "@vigil/testkit"
import { fetchBlocks } from "../BareRpc.ts"
import { median, ratiosTo, type Measurement, type Scenario } from "../Harness.ts"
import { startServer } from "../Load.ts"
import { postgresCpu, postgresCpuBetween, runsHere, withDatabase } from "../Postgres.ts"
import * as RecordedChain from "../RecordedChain.ts"
import { alertOf } from "../Messages.ts"
import { certificates } from "./Webhooks.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))
const BLOCKS = 40
const PER_BLOCK = 200
const TOKENS = 14
const ROUTERS = 4
const NOISY = 2
const KEYS = 10
const BOT_COUNTS = [1, 100, 1_000] as const
const blocksPerBatch = 10
const inFlight = 4
/** Token values are drawn from 1 to this. */
const VALUES = 1_000_000
/** Ethereum's block time, and a fast chain's, for the bots one core keeps up with. */
const BLOCK_TIMES = [12, 2] as const

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** A deterministic stream of numbers in [0, 1) (mulberry32), so every run mines the same blocks. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** What the bench sent in one transaction: enough to say, without Vigil, which bots it should alert. */
type Sent =
  | { readonly kind: "transfer" | "route"; readonly from: string; readonly token: number; readonly value: number }
  | { readonly kind: "approve"; readonly from: string; readonly token: number; readonly value: number }
  | { readonly kind: "noisy"; readonly from: string; readonly noisy: number; readonly n: number }
  | { readonly kind: "tryRoute" | "create"; readonly from: string }

/** A bot of the scenario: its rule, and how many alerts the blocks hold for it (counted from what was sent). */
interface BotPlan {
  readonly name: string
  readonly expressions: ReadonlyArray<string>
  readonly blockRange: number
  readonly expected: (blocks: ReadonlyArray<ReadonlyArray<Sent>>) => number
}

/**
 * Bot `b`'s rule: one of four shapes of the golden corpus by `b % 4`, with its own contract and threshold.
 * 0: an internal frame's event above a threshold (needs call traces); 1: an event anywhere in the transaction
 * above a threshold; 2: a reverted call with an argument above a threshold; 3: two transactions of one sender in
 * one block joined by an equality (an approval above a threshold, then a transfer of the same token).
 */
const plan = (b: number): BotPlan => {
  const k = (b * 5) % TOKENS
  const high = VALUES - 1 - ((b * 7919 + 25_000) % (VALUES / 20))
  const name = `b${b}`
  const count = (
    blocks: ReadonlyArray<ReadonlyArray<Sent>>,
    one: (tx: Sent, block: ReadonlyArray<Sent>, i: number) => number
  ) => blocks.reduce((sum, block) => sum + block.reduce((s, tx, i) => s + one(tx, block, i), 0), 0)
  switch (b % 4) {
    case 0:
      return {
        name,
        expressions: [`system.uintCompare(tx1.itx1.T${k}.E.Transfer.value, >, ${high})`],
        blockRange: 0,
        expected: (blocks) => count(blocks, (tx) => (tx.kind === "route" && tx.token === k && tx.value > high ? 1 : 0))
      }
    case 1:
      return {
        name,
        expressions: [`system.uintCompare(tx1.T${k}.E.Transfer.value, >, ${high})`],
        blockRange: 0,
        expected: (blocks) =>
          count(blocks, (tx) =>
            (tx.kind === "transfer" || tx.kind === "route") && tx.token === k && tx.value > high ? 1 : 0
          )
      }
    case 2: {
      const j = b % NOISY
      const above = 980 + (b % 19)
      return {
        name,
        expressions: [`system.reverted(tx1.N${j}.F.noisy)`, `system.uintCompare(tx1.N${j}.F.noisy.n, >, ${above})`],
        blockRange: 0,
        expected: (blocks) => count(blocks, (tx) => (tx.kind === "noisy" && tx.noisy === j && tx.n > above ? 1 : 0))
      }
    }
    default: {
      const above = VALUES - 1 - ((b * 104_729) % (VALUES / 10))
      return {
        name,
        expressions: [
          `system.uintCompare(tx1.T${k}.E.Approval.value, >, ${above})`,
          `system.emitted(tx2.T${k}.E.Transfer)`,
          "system.addressCompare(tx2.from, ==, tx1.from)"
        ],
        blockRange: 0,
        expected: (blocks) =>
          count(blocks, (tx, block, i) =>
            tx.kind === "approve" && tx.token === k && tx.value > above
              ? block
                  .slice(i + 1)
                  .filter((t) => (t.kind === "transfer" || t.kind === "route") && t.token === k && t.from === tx.from)
                  .length
              : 0
          )
      }
    }
  }
}

/** Which keys hold `bots` bots: one key for one bot, else `KEYS` keys sharing them evenly. */
const keysFor = (bots: number) => (bots < KEYS ? 1 : KEYS)

/** The scenario. */
export const scenario: Scenario = {
  name: "follow-scale",
  description: `\`vigil serve\` on SQLite catching up ${BLOCKS} blocks of ${PER_BLOCK} transactions, mined on a local anvil node and served again from a recording (anvil takes seconds to trace a block of this size) (about 45% ERC-20 transfers, 10% approvals, 25% router calls that transfer inside, 8% router calls whose inner transfer reverts, 7% reverted transactions, 5% contract creations; ${TOKENS} tokens, ${ROUTERS} routers and ${NOISY} reverting contracts, ${TOKENS + ROUTERS + NOISY} contracts registered by every key) for ${BOT_COUNTS.join(", ")} bots (one key for one bot, else ${KEYS} keys sharing them evenly, each key with one webhook channel and the same contracts under the same labels; the bots' rules are four shapes of the golden corpus: an internal frame's event above a threshold, an event above a threshold, a reverted call with an argument above a threshold, two transactions of one sender joined by an equality). Blocks per second from the restarted server listening until its cursor reaches the head (in each round from a copy of its database as it was stopped; the median round), and with ${BOT_COUNTS[BOT_COUNTS.length - 1]!.toLocaleString("en-US")} bots on PostgreSQL, beside a bare JSON-RPC fetch of the same blocks with receipts and call traces in the same batches (the floor), one pass right after each catch-up (the median of all passes). Judging ms/block: the seconds the server itself counted judging the catch-up's blocks (its vigil_follow_judge_seconds_total, read once the cursor reached the head) per block, the median round. In every round each alert is counted once against what the blocks hold, as read back from the node.`,
  run: async ({ rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-follow-scale-"))
    const certs = certificates(dir)
    /** Alerts received, by alert id: how many times each arrived, and for which bot. */
    const received = new Map<string, { bot: string; times: number }>()
    const receiver = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c))
      req.on("end", () => {
        const alert = alertOf(body)
        if (alert !== undefined) {
          const seen = received.get(alert.id)
          if (seen === undefined) received.set(alert.id, { bot: alert.bot, times: 1 })
          else seen.times++
        }
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", () => done()))
    const port = (receiver.address() as { port: number }).port
    const node = await Anvil.start()
    let recorded: RecordedChain.RecordedChain | undefined
    try {
      const fixtures = Solidity.fixtures()
      const accounts = node.accounts
      const [owner] = accounts as [`0x${string}`]
      await node.rpc("evm_setBlockGasLimit", ["0x5f5e100"])
      const deployAll = async (compiled: Solidity.Compiled, n: number, args: ReadonlyArray<unknown>) => {
        const made: Array<{ abi: ReadonlyArray<unknown>; address: `0x${string}` }> = []
        for (let i = 0; i < n; i++)
          made.push({ abi: compiled.abi, address: (await node.deploy(compiled, args)).address })
        return made
      }
      const tokens = await deployAll(fixtures.Token, TOKENS, [10n ** 30n])
      const routers = await deployAll(fixtures.Router, ROUTERS, [])
      const noisies = await deployAll(fixtures.Noisy, NOISY, [])
      const contracts = [
        ...tokens.map((c, i) => ({ label: `T${i}`, abi: fixtures.Token.abi, address: c.address })),
        ...routers.map((c, i) => ({ label: `R${i}`, abi: fixtures.Router.abi, address: c.address })),
        ...noisies.map((c, i) => ({ label: `N${i}`, abi: fixtures.Noisy.abi, address: c.address }))
      ]
      // Every account holds every token and lets every router move it.
      await node.submitAll(
        tokens.flatMap((token) =>
          accounts
            .slice(1)
            .map((to) => ({ from: owner, gas: 100_000, contract: token, fn: "transfer", args: [to, 10n ** 27n] }))
        )
      )
      await node.mine(1)
      await node.submitAll(
        accounts.flatMap((from) =>
          tokens.flatMap((token) =>
            routers.map((router) => ({
              from,
              gas: 100_000,
              contract: token,
              fn: "approve",
              args: [router.address, 10n ** 29n]
            }))
          )
        )
      )
      await node.mine(1)
      const recipients = Array.from(
        { length: 40 },
        (_, i) => `0x${(0xb0000 + i).toString(16).padStart(40, "0")}` as `0x${string}`
      )

      // The blocks, the same in every run.
      const draw = random(42)
      const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(draw() * xs.length)]!
      const value = () => 1 + Math.floor(draw() * VALUES)
      const first = (await node.head()) + 1
      const byHash = new Map<string, Sent>()
      for (let block = 0; block < BLOCKS; block++) {
        const planned: Array<{ sent: Sent; tx: Anvil.Transaction }> = []
        for (let i = 0; i < PER_BLOCK; i++) {
          const from = accounts[i % accounts.length]!
          const r = draw()
          const t = Math.floor(draw() * TOKENS)
          const token = tokens[t]!
          if (r < 0.45) {
            const v = value()
            planned.push({
              sent: { kind: "transfer", from, token: t, value: v },
              tx: { from, gas: 100_000, contract: token, fn: "transfer", args: [pick(recipients), BigInt(v)] }
            })
          } else if (r < 0.55) {
            const v = value()
            planned.push({
              sent: { kind: "approve", from, token: t, value: v },
              tx: { from, gas: 100_000, contract: token, fn: "approve", args: [pick(recipients), BigInt(v)] }
            })
          } else if (r < 0.8) {
            const v = value()
            planned.push({
              sent: { kind: "route", from, token: t, value: v },
              tx: {
                from,
                gas: 200_000,
                contract: pick(routers),
                fn: "route",
                args: [token.address, pick(recipients), BigInt(v)]
              }
            })
          } else if (r < 0.88) {
            // More than the allowance: the inner transferFrom reverts, the call carries on.
            planned.push({
              sent: { kind: "tryRoute", from },
              tx: {
                from,
                gas: 200_000,
                contract: pick(routers),
                fn: "tryRoute",
                args: [token.address, pick(recipients), 10n ** 40n]
              }
            })
          } else if (r < 0.95) {
            const j = Math.floor(draw() * NOISY)
            const n = Math.floor(draw() * 1_000)
            planned.push({
              sent: { kind: "noisy", from, noisy: j, n },
              tx: { from, gas: 100_000, contract: noisies[j]!, fn: "noisy", args: [BigInt(n)] }
            })
          } else {
            planned.push({
              sent: { kind: "create", from },
              tx: { from, gas: 1_500_000, deploy: fixtures.Token, args: [1_000n] }
            })
          }
        }
        const hashes = await node.submitAll(planned.map((p) => p.tx))
        hashes.forEach((h, i) => byHash.set(h, planned[i]!.sent))
        await node.mine(1)
      }
      const last = await node.head()
      if (last - first + 1 !== BLOCKS) throw new Error(`mined ${last - first + 1} blocks, not ${BLOCKS}`)
      // The blocks as the node holds them, in its order, each transaction's outcome checked against what was meant.
      const numbers = Array.from({ length: BLOCKS }, (_, i) => first + i)
      const blocks: Array<ReadonlyArray<Sent>> = []
      for (const n of numbers) {
        const receipts = await node.rpc<ReadonlyArray<{ transactionHash: string; status: string }>>(
          "eth_getBlockReceipts",
          [`0x${n.toString(16)}`]
        )
        if (receipts.length !== PER_BLOCK)
          throw new Error(`block ${n} holds ${receipts.length} transactions, not ${PER_BLOCK}`)
        blocks.push(
          receipts.map((r) => {
            const sent = byHash.get(r.transactionHash)
            if (sent === undefined) throw new Error(`block ${n} holds ${r.transactionHash}, which was not sent`)
            if ((r.status === "0x1") !== (sent.kind !== "noisy"))
              throw new Error(`${sent.kind} ${r.transactionHash} has status ${r.status}`)
            return sent
          })
        )
      }

      // Served again from a recording, so that the node's own speed at tracing (anvil takes seconds for a block of
      // this size) is not what is measured; at first only the blocks before these exist.
      const chain = await RecordedChain.record(node.url, last)
      recorded = chain
      chain.reveal(first - 1)
      // A database per bot count, its bots created and caught up to the head, then stopped and saved.
      const databases = new Map<number, { db: string; key: string }>()
      for (const bots of BOT_COUNTS) {
        const db = join(dir, `bots-${bots}.db`)
        const keys = Array.from(
          { length: keysFor(bots) },
          (_, i) =>
            JSON.parse(
              execFileSync(
                process.execPath,
                [vigilBin, "keys", "create", "--db", db, "--name", `Bench ${i}`, "--qps", "10000"],
                { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }
              )
            ).key as string
        )
        const server = await startServer([vigilBin, "serve"], serveEnv(db, chain.url, certs.caFile))
        try {
          const call = caller(server.url)
          for (const key of keys) {
            for (const c of contracts)
              await call(key, "POST", "/v1/contracts", {
                chainId: 31337,
                contractAddress: c.address,
                label: c.label,
                ABI: c.abi
              })
          }
          const channels = await Promise.all(
            keys.map(
              async (key) =>
                (
                  (await call(key, "POST", "/v1/notifications", {
                    type: "webhook",
                    name: "bench",
                    url: `https://127.0.0.1:${port}/alerts`
                  })) as { channel: { id: string } }
                ).channel.id
            )
          )
          for (let b = 0; b < bots; b++) {
            const k = b % keys.length
            const p = plan(b)
            await call(keys[k]!, "POST", "/v1/bots", {
              botName: p.name,
              chainId: 31337,
              options: { topLevelTxBlockRange: p.blockRange },
              watchRule: { expressions: p.expressions },
              notifications: [channels[k]]
            })
          }
          while ((await cursor(call, keys[0]!)) < first - 1) await sleep(20)
        } finally {
          await server.stop()
        }
        for (const f of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(f)) copyFileSync(f, `${f}.saved`)
        databases.set(bots, { db, key: keys[0]! })
      }

      chain.reveal(last)
      const rates = new Map<number, Array<number>>(BOT_COUNTS.map((n) => [n, []]))
      const pgRates: Array<number> = []
      const pgHealth: Array<number> = []
      /** PostgreSQL's own CPU per block caught up (µs), each round on it. */
      const pgCpu: Array<number> = []
      let pgUnavailable: string | undefined
      const alerts = new Map<number, number>()
      const bare: Array<number> = []
      /** The server's own count of the seconds it spent judging the catch-up's blocks, per bot count and round. */
      const judged = new Map<number, Array<number>>()
      /** The slowest /health answer while catching up, per bot count and round. */
      const health = new Map<number, Array<number>>()
      /**
       * One timed catch-up of `bots` bots by a server on `env`'s store: its blocks per second and slowest /health
       * answer, once every alert arrived once and each bot's count equals the matches the blocks hold.
       */
      const catchUp = async (bots: number, key: string, env: Readonly<Record<string, string>>) => {
        received.clear()
        const expected = new Map(Array.from({ length: bots }, (_, b) => [plan(b).name, plan(b).expected(blocks)]))
        const total = [...expected.values()].reduce((a, b) => a + b, 0)
        const server = await startServer([vigilBin, "serve"], env)
        let rate: number
        let judging: number
        let slowest = 0
        try {
          const call = caller(server.url)
          const database = env.VIGIL_DB?.startsWith("postgres") && runsHere(env.VIGIL_DB) ? postgresCpu() : undefined
          const started = performance.now()
          let resets = 0
          for (;;) {
            const asked = performance.now()
            let at: number
            try {
              at = await cursor(call, key)
            } catch (cause) {
              // A keep-alive connection closed by the server as the request went out: asked again on a new one.
              if (++resets > 20)
                throw new Error(
                  `the server with ${bots} bots stopped answering: ${String(cause)}\n${server.output().slice(-4000)}`
                )
              continue
            }
            slowest = Math.max(slowest, performance.now() - asked)
            if (at >= last) break
            await sleep(20)
          }
          rate = BLOCKS / ((performance.now() - started) / 1000)
          judging = await judgedSeconds(server.url)
          const ms = database === undefined ? undefined : postgresCpuBetween(database, postgresCpu())
          if (ms !== undefined) pgCpu.push((ms * 1000) / BLOCKS)
          while (received.size < total && performance.now() - started < 300_000) await sleep(20)
          // Late repeats would arrive within the outbox's next poll: wait one more second before counting.
          await sleep(1_000)
        } finally {
          await server.stop()
        }
        const got = new Map<string, number>()
        for (const { bot, times } of received.values()) {
          if (times > 1) throw new Error(`an alert of ${bot} arrived ${times} times`)
          got.set(bot, (got.get(bot) ?? 0) + 1)
        }
        for (const [bot, n] of expected)
          if ((got.get(bot) ?? 0) !== n)
            throw new Error(
              `${bot} (${plan(Number(bot.slice(1))).expressions.join(" && ")}): ${got.get(bot) ?? 0} alerts, the blocks hold ${n}`
            )
        if (received.size !== total)
          throw new Error(`${received.size} alerts for ${bots} bots, the blocks hold ${total}`)
        alerts.set(bots, total)
        return { rate, slowest, judging }
      }
      /** The floor, right after each catch-up, so both meet the machine in the same state (its speed drifts). */
      const bareFetch = async () => {
        const t = performance.now()
        if ((await fetchBlocks(chain.url, numbers, { traces: true, blocksPerBatch, inFlight })) !== BLOCKS * PER_BLOCK)
          throw new Error("the bare fetch missed transactions")
        bare.push(BLOCKS / ((performance.now() - t) / 1000))
      }
      const most = BOT_COUNTS[BOT_COUNTS.length - 1]!
      for (let round = 0; round < rounds; round++) {
        for (const bots of BOT_COUNTS) {
          const { db, key } = databases.get(bots)!
          for (const f of [db, `${db}-wal`, `${db}-shm`]) {
            rmSync(f, { force: true })
            if (existsSync(`${f}.saved`)) copyFileSync(`${f}.saved`, f)
          }
          const { rate, slowest, judging } = await catchUp(bots, key, serveEnv(db, chain.url, certs.caFile))
          health.set(bots, [...(health.get(bots) ?? []), slowest])
          rates.get(bots)!.push(rate)
          judged.set(bots, [...(judged.get(bots) ?? []), judging])
          await bareFetch()
        }
        // The most bots on PostgreSQL: each round a new database holding what the file held when its bots were
        // caught up to the first block (moved there by vigil migrate-store, not timed).
        if (pgUnavailable !== undefined) continue
        const { db, key } = databases.get(most)!
        const copy = join(dir, `pg-round-${round}.db`)
        for (const f of [db, `${db}-wal`, `${db}-shm`])
          if (existsSync(`${f}.saved`)) copyFileSync(`${f}.saved`, f.replace(db, copy))
        const outcome = await withDatabase(async (url) => {
          execFileSync(process.execPath, [vigilBin, "migrate-store", "--from", copy, "--to", url], {
            stdio: ["ignore", "pipe", "pipe"]
          })
          return catchUp(most, key, { ...serveEnv(db, chain.url, certs.caFile), VIGIL_DB: url })
        })
        if ("value" in outcome) {
          pgRates.push(outcome.value.rate)
          pgHealth.push(outcome.value.slowest)
          await bareFetch()
        } else pgUnavailable = outcome.unavailable
      }

      const bareRate = median(bare)
      /** Seconds a block takes with `n` bots. */
      const perBlock = (n: number) => 1 / median(rates.get(n)!)
      const fewest = BOT_COUNTS[0]
      const perBot = (perBlock(most) - perBlock(fewest)) / (most - fewest)
      const keepsUp = (seconds: number) => Math.max(0, Math.floor((seconds - perBlock(fewest)) / perBot) + fewest)
      /** Seconds of judging (decoding, evaluating, making alerts) a block takes with `n` bots, by the server's count. */
      const judgedPerBlock = (n: number) => median(judged.get(n)!) / BLOCKS
      const judgedPerBot = (judgedPerBlock(most) - judgedPerBlock(fewest)) / (most - fewest)
      const measurements: Array<Measurement> = [
        {
          subject: "bare JSON-RPC fetch (receipts and traces)",
          figures: { "blocks/s": Math.round(bareRate * 10) / 10 }
        },
        ...BOT_COUNTS.map((n) => ({
          subject: `vigil catch-up, ${n.toLocaleString("en-US")} bot${n === 1 ? "" : "s"}`,
          figures: {
            "blocks/s": Math.round(median(rates.get(n)!) * 10) / 10,
            "ms/block": Math.round(perBlock(n) * 1000),
            "judging ms/block": Math.round(judgedPerBlock(n) * 10_000) / 10,
            "slowest /health ms": Math.round(median(health.get(n)!)),
            alerts: alerts.get(n) ?? 0
          }
        })),
        ...(pgRates.length === 0
          ? []
          : [
              {
                subject: `vigil catch-up, ${most.toLocaleString("en-US")} bots, PostgreSQL`,
                figures: {
                  "blocks/s": Math.round(median(pgRates) * 10) / 10,
                  "ms/block": Math.round(1000 / median(pgRates)),
                  "slowest /health ms": Math.round(median(pgHealth)),
                  alerts: alerts.get(most) ?? 0
                }
              }
            ])
      ]
      return {
        settings: {
          blocks: BLOCKS,
          transactionsPerBlock: PER_BLOCK,
          contracts: contracts.length,
          keys: KEYS,
          blocksPerBatch,
          inFlight
        },
        measurements,
        baseline: "bare JSON-RPC fetch (receipts and traces)",
        ratios: ratiosTo("bare JSON-RPC fetch (receipts and traces)", measurements),
        notes: [
          `Target: 0.8× the bare fetch at ${most.toLocaleString("en-US")} bots.`,
          `Each bot beyond the first adds ${Math.round(perBot * 1e6)} µs to a block of ${PER_BLOCK} transactions ((ms/block at ${most.toLocaleString("en-US")} bots − at ${fewest}) ÷ ${most - fewest}; the server runs on one core). Extrapolating that line (untested beyond ${most.toLocaleString("en-US")} bots, and at most 100 bots a key), one core would keep up with ${BLOCK_TIMES.map((s) => `${s} s blocks for about ${(Math.round(keepsUp(s) / 1000) * 1000).toLocaleString("en-US")} bots`).join(" and ")} (the reading of the blocks included, as measured at ${fewest} bot).`,
          `Judging, by the server's own count (vigil_follow_judge_seconds_total after the catch-up: decoding the blocks, evaluating every bot's rule, making the alerts and their messages, and compiling each bot's rule, once a process; reading the blocks and storing the step aside; time on the clock, the /health answers given meanwhile included): ${BOT_COUNTS.map((n) => `${(judgedPerBlock(n) * 1000).toFixed(1)} ms a block with ${n.toLocaleString("en-US")} bot${n === 1 ? "" : "s"}`).join(", ")}; each bot beyond the first adds ${Math.round(judgedPerBot * 1e6)} µs of it to a block of ${PER_BLOCK} transactions. The rest of a bot's ${Math.round(perBot * 1e6)} µs above is outside judging: what the restart costs it once (its rule read and checked), storing its alerts, and the process's other work meanwhile, spread over the ${BLOCKS} blocks.`,
          pgRates.length === 0
            ? `PostgreSQL: not measured (${pgUnavailable ?? "no database"}).`
            : `PostgreSQL, ${most.toLocaleString("en-US")} bots: ${(median(pgRates) / median(rates.get(most)!)).toFixed(3)}× SQLite's blocks/s (each round a new database holding what the file held before the catch-up, moved there by vigil migrate-store, not timed; the database server's processes are not pinned to the server's core).`,
          ...(pgCpu.length === 0
            ? []
            : [
                `PostgreSQL's own CPU (every process of the server on this machine) while catching up with ${most.toLocaleString("en-US")} bots: ${Math.round(median(pgCpu))} µs per block (median of the rounds).`
              ]),
          `Alerts: in every round, every alert arrived once and each bot's count equals the matches the blocks hold for its rule, counted by the bench from the transactions it sent and their order and outcome as read back from the node.`
        ]
      }
    } finally {
      await recorded?.stop()
      await node.stop()
      receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The server's settings: the database, the node, no ABI sources, webhooks to the local receiver. */
const serveEnv = (db: string, rpc: string, caFile: string) => ({
  VIGIL_DB: db,
  VIGIL_HOST: "127.0.0.1",
  VIGIL_PORT: "0",
  VIGIL_RPC_URL_31337: rpc,
  VIGIL_FOLLOW_POLL_MS: "500",
  VIGIL_SOURCIFY_URL: "",
  VIGIL_ETHERSCAN_URL: "",
  VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
  VIGIL_WEBHOOK_CA_FILE: caFile
})

/** A JSON call to the server with a key; fails with the answer's text on a status that is not 2xx. */
const caller = (url: string) => async (key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as unknown
}

/** The seconds the server's follower spent judging blocks of the chain since it started, from its /metrics. */
const judgedSeconds = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text()
  const found = /^vigil_follow_judge_seconds_total\{chain="31337"\} (\S+)$/m.exec(text)
  if (found === null) throw new Error("the server's /metrics has no vigil_follow_judge_seconds_total for chain 31337")
  return Number(found[1])
}

/** The follower's cursor on the chain (-1 before it has one). */
const cursor = async (call: ReturnType<typeof caller>, key: string) =>
  ((await call(key, "GET", "/health")) as { follow?: Array<{ cursor?: number }> }).follow?.[0]?.cursor ?? -1
