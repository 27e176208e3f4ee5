/**
 * What exposure answers must never get wrong, on a real node (anvil, its chain starting on 2025-06-01): a mint is
 * not a counterparty and the zero address is not a sanctioned wallet; a listed counterparty past the thousandth is
 * screened all the same; native transfers beyond the node's 300-block trace range are read by splitting the range,
 * and a node without traces makes the answer incomplete, saying so; a large account does not hide a receipt from a
 * listed address behind its own volume, while a receipt below the floor is reported as possibly unsolicited; and a
 * past `as_of` reads the chain as it stood at the end of that day.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Schemas } from "@vigil/adapter-http"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Schema } from "effect"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
import * as TestServer from "./TestServer.ts"

const { v3, issue, ingest } = TestServer

const fresh = (seed: number) => `0x${seed.toString(16).padStart(40, "0")}` as `0x${string}`
const zero = fresh(0)
const token = (n: bigint) => n * 10n ** 18n

/** 2025-06-01T00:00:00Z: the chain's first block. */
const genesis = Date.UTC(2025, 5, 1) / 1000

/**
 * A node in front of `target` that does not serve `trace_filter` (as a node without the trace API answers, JSON-RPC
 * -32601), passing every other call through.
 */
const withoutTraces = (target: string) =>
  new Promise<{ readonly url: string; readonly close: () => Promise<void> }>((resolve) => {
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        // Only JSON-RPC is served (the suite's fetch check asks every origin for /openapi.json).
        if (req.method !== "POST") return void res.writeHead(404).end()
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown
        const calls = (Array.isArray(body) ? body : [body]) as Array<{ id: number; method: string }>
        const refused = calls.filter((c) => c.method === "trace_filter")
        const passed = calls.filter((c) => c.method !== "trace_filter")
        const answer = (answers: Array<unknown>) => {
          const all = [
            ...answers,
            ...refused.map((c) => ({ jsonrpc: "2.0", id: c.id, error: { code: -32601, message: "Method not found" } }))
          ]
          res.setHeader("content-type", "application/json")
          res.end(JSON.stringify(Array.isArray(body) ? all : all[0]))
        }
        if (passed.length === 0) return answer([])
        const forward = request(target, { method: "POST", headers: { "content-type": "application/json" } }, (r) => {
          const parts: Array<Buffer> = []
          r.on("data", (c: Buffer) => parts.push(c))
          r.on("end", () => {
            const got = JSON.parse(Buffer.concat(parts).toString("utf8")) as unknown
            answer(Array.isArray(got) ? got : [got])
          })
        })
        forward.end(JSON.stringify(Array.isArray(body) ? passed : passed[0]))
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((done) => server.close(() => done()))
      })
    )
  })

const setUp = async () => {
  const anvil = await Anvil.start({ timestamp: genesis })
  const [deployer, listed, minter] = [anvil.accounts[0]!, anvil.accounts[1]!, anvil.accounts[2]!]
  const { Token, Spray } = Solidity.fixtures()
  const erc20 = { abi: Token.abi, address: (await anvil.deploy(Token, [token(10_000_000n)], deployer)).address }
  // A second token minted to `minter`, who does nothing else: its only transfer is from the zero address.
  await anvil.deploy(Token, [token(1_000n)], minter)
  await anvil.send(erc20, "transfer", [listed, token(100_000n)], { from: deployer })
  // A large account: 900,000 tokens of its own volume, then 900 straight from the listed address.
  await anvil.send(erc20, "transfer", [fresh(0xb1), token(900_000n)], { from: deployer })
  await anvil.send(erc20, "transfer", [fresh(0xb1), token(900n)], { from: listed })
  // Half a token from the listed address: below the floor of one.
  await anvil.send(erc20, "transfer", [fresh(0xb2), token(1n) / 2n], { from: listed })
  // 1,001 senders of one transfer each, the listed address last.
  const spray = { abi: Spray.abi, address: (await anvil.deploy(Spray, [], deployer)).address }
  const senders = [...Array.from({ length: 1_000 }, (_, i) => fresh(0x10000 + i)), listed]
  await anvil.send(spray, "spray", [senders, fresh(0xb3), 1n], { from: deployer })
  // Ether from the listed address, then 400 more blocks: the window is beyond anvil's 300-block trace range.
  await anvil.rpc("eth_sendTransaction", [
    { from: listed, to: fresh(0xb4), value: `0x${(2n * 10n ** 17n).toString(16)}` }
  ])
  await anvil.mine(1)
  await anvil.rpc("anvil_mine", ["0x190"])
  const lastOfFirstDay = await anvil.head()
  // Two days later, the listed address pays another address.
  await anvil.rpc("evm_setNextBlockTimestamp", [Date.UTC(2025, 5, 3, 12) / 1000])
  const late = await anvil.send(erc20, "transfer", [fresh(0xb5), token(10n)], { from: listed })
  const proxy = await withoutTraces(anvil.url)
  return {
    anvil,
    proxy,
    listed: listed.toLowerCase(),
    minter: minter.toLowerCase(),
    lastOfFirstDay,
    late,
    close: async () => {
      await proxy.close()
      await anvil.stop()
    }
  }
}

let c: Awaited<ReturnType<typeof setUp>>
beforeAll(async () => {
  c = await setUp()
}, 60_000)
afterAll(async () => {
  await c?.close()
})

/** Runs `body` against a server reading `rpcUrl` as chain 31337's node, with the sanctions list and a key. */
const withServer = <A, E, R>(
  rpcUrl: () => string,
  body: (screen: ReturnType<typeof screener>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    yield* ingest("test-sanctions", "sanctions", [c.listed], "2025-01-01")
    // A feed that names the zero address, as USDT's events and label dumps do.
    yield* ingest("test-blacklist", "stablecoin_blacklist", [zero], "2025-01-01")
    const key = yield* issue({ name: "Acme" })
    return yield* body(screener(key))
  }).pipe(
    Effect.provide(
      TestServer.layer({ outbound: { rpcUrls: new Map([[31337, rpcUrl()]]) }, exposure: { budgetMillis: 10_000 } })
    )
  )

const screener =
  (key: string) =>
  (address: string, options: Record<string, unknown> = { exposure: true }) =>
    Effect.map(v3(key, { address, options }), (r) => {
      assert.strictEqual(r.status, 200, JSON.stringify(r.json))
      assert.doesNotThrow(() => Schema.decodeUnknownSync(Schemas.V3Result)(r.json))
      return r.json
    })

describe("exposure answers that hold (options.exposure)", () => {
  it.live("a mint is not exposure, and the zero address is what it is, not a sanctioned wallet", () =>
    withServer(
      () => c.anvil.url,
      (screen) =>
        Effect.gen(function* () {
          const minted = yield* screen(c.minter)
          assert.deepStrictEqual(minted.signals, [])
          assert.strictEqual(minted.score, 0)
          assert.strictEqual(minted.recommendation.action, "ALLOW")
          assert.deepInclude(minted.metadata.exposure, { counterparties: 0, system_transfers: 1, complete: true })

          const itself = yield* screen(zero, {})
          assert.deepStrictEqual(itself.entity, {
            name: "Zero address (mints come from it, many burns go to it)",
            type: "system",
            category: "burn"
          })
          assert.strictEqual(itself.score, 0)
          assert.strictEqual(itself.recommendation.action, "REVIEW")
          assert.strictEqual(itself.confidence, 1, "what the address is does not depend on the lists")
          assert.isFalse(itself.flags.blacklisted)
          assert.include(itself.recommendation.details, "no one holds its key")
          assert.include(itself.recommendation.details, "test-blacklist")
        })
    )
  )

  it.live("screens every counterparty: the listed one past the thousandth is found", () =>
    withServer(
      () => c.anvil.url,
      (screen) =>
        Effect.gen(function* () {
          const sprayed = yield* screen(fresh(0xb3))
          assert.deepStrictEqual(
            sprayed.signals.map((s: any) => [s.type, s.evidence.exposure.counterparty]),
            [["exposure_sanctioned", c.listed]]
          )
          assert.deepInclude(sprayed.metadata.exposure, { counterparties: 1_001, listed: 1, complete: true })
        })
    )
  )

  it.live("reads native transfers beyond the node's trace range by splitting it", () =>
    withServer(
      () => c.anvil.url,
      (screen) =>
        Effect.gen(function* () {
          const ether = yield* screen(fresh(0xb4))
          assert.deepStrictEqual(ether.signals[0]?.evidence.exposure.amounts, [
            { token: "native", standard: "native", incoming: "200000000000000000", outgoing: "0", share: 1 }
          ])
          assert.isTrue(ether.metadata.exposure.windows[0].native)
          assert.isAbove(ether.metadata.exposure.windows[0].to_block, 300)
          assert.deepInclude(ether.metadata.exposure, { gaps: [], complete: true })
        })
    )
  )

  it.live("a node without traces leaves native transfers as a gap: incomplete, and said", () =>
    withServer(
      () => c.proxy.url,
      (screen) =>
        Effect.gen(function* () {
          const partial = yield* screen(fresh(0xb4))
          assert.deepStrictEqual(partial.signals, [])
          assert.isFalse(partial.metadata.exposure.complete)
          assert.isFalse(partial.metadata.exposure.windows[0].native)
          assert.deepInclude(partial.metadata.exposure.gaps[0], {
            kind: "native",
            reason: "the node does not serve trace_filter"
          })
          assert.isTrue(
            partial.metadata.warnings.some((w: string) => w.startsWith("chain-31337: native transfers in blocks 0–"))
          )
          assert.include(partial.recommendation.details, "Counterparty exposure was not read in full")
          // Its token transfers are read all the same.
          const large = yield* screen(fresh(0xb1))
          assert.strictEqual(large.signals[0].type, "exposure_sanctioned")
        })
    )
  )

  it.live("the dust floor is an amount: volume hides nothing, and a receipt below it is reported as unsolicited", () =>
    withServer(
      () => c.anvil.url,
      (screen) =>
        Effect.gen(function* () {
          const large = yield* screen(fresh(0xb1))
          assert.strictEqual(large.signals[0]?.type, "exposure_sanctioned")
          assert.strictEqual(large.signals[0].evidence.exposure.amounts[0].incoming, token(900n).toString())
          assert.strictEqual(large.score, 60)

          const dusted = yield* screen(fresh(0xb2))
          assert.strictEqual(dusted.score, 0)
          assert.deepStrictEqual(dusted.signals, [])
          assert.deepStrictEqual(
            dusted.metadata.exposure.unsolicited.map((u: any) => [u.counterparty, u.reason, u.amounts[0].incoming]),
            [[c.listed, "received below the dust floor", (token(1n) / 2n).toString()]]
          )
          assert.isTrue(dusted.metadata.warnings.some((w: string) => w.includes("possibly unsolicited")))
          const lowered = yield* screen(fresh(0xb2), { exposure: { dust_floor: { token: "0.1" } } })
          assert.strictEqual(lowered.signals[0].type, "exposure_sanctioned")
          assert.deepStrictEqual(lowered.metadata.exposure.dust_floor, { native: "0.1", token: "0.1", tokens: {} })

          const bad = yield* v3(yield* issue({ name: "Other" }), {
            address: fresh(0xb2),
            options: { exposure: { dust_floor: { native: "-1" } } }
          })
          assert.strictEqual(bad.status, 400)
          assert.include(JSON.stringify(bad.json), "dust_floor")
        })
    )
  )

  it.live("a past as_of reads the chain as it stood at the end of that day, against that day's lists", () =>
    withServer(
      () => c.anvil.url,
      (screen) =>
        Effect.gen(function* () {
          const before = yield* screen(fresh(0xb5), { exposure: true, as_of: "2025-06-02" })
          assert.deepStrictEqual(before.signals, [])
          assert.strictEqual(before.metadata.exposure.windows[0].to_block, c.lastOfFirstDay)
          const after = yield* screen(fresh(0xb5), { exposure: true, as_of: "2025-06-03" })
          assert.deepStrictEqual(after.signals[0]?.evidence.exposure.transactions, [c.late.hash])
          assert.strictEqual(after.metadata.exposure.windows[0].to_block, c.late.block)
          // Before the listing, the same transfers are no exposure.
          const unlisted = yield* screen(fresh(0xb1), { exposure: true, as_of: "2024-12-31" })
          assert.deepStrictEqual(unlisted.signals, [])
        })
    )
  )
})
