/**
 * Historical analysis through the HTTP API against a real node: anvil with an ERC-20, a router that calls it
 * internally and a contract that emits and reverts (solc). Contracts and bots are registered over HTTP, blocks
 * submitted, and the query gives exactly the expected matches for each kind of rule.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { it } from "@effect/vitest"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Fiber, Schedule } from "effect"
import { afterAll, assert, beforeAll, describe } from "vitest"
import { call, issue } from "./TestServer.ts"
import * as TestServer from "./TestServer.ts"

const fixtures = Solidity.fixtures()
let node: Anvil.Anvil
const addresses: Record<string, string> = {}
const sent: Record<string, { hash: string; block: number }> = {}
const beyond2to53 = 9_007_199_254_740_993n

beforeAll(async () => {
  node = await Anvil.start()
  const bob = node.accounts[1]!
  const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
  const router = { abi: fixtures.Router.abi, address: (await node.deploy(fixtures.Router)).address }
  addresses.Token = token.address
  addresses.Router = router.address
  sent.approve = await node.send(token, "approve", [router.address, 10n ** 24n])
  sent.routeBig = await node.send(router, "route", [token.address, bob, 5000n])
  sent.routeSmall = await node.send(router, "route", [token.address, bob, 500n])
  sent.tryRoute = await node.send(router, "tryRoute", [token.address, bob, 10n ** 27n])
  sent.exact = await node.send(token, "transfer", [bob, beyond2to53])
  sent.above = await node.send(token, "transfer", [bob, beyond2to53 + 1n])
  sent.failing = await node.send(token, "transfer", [node.accounts[0]!, 10n ** 29n], { from: bob, gas: 100_000 })
  await node.mine(5)
  sent.lastApprove = await node.send(token, "approve", [router.address, 1n])
}, 60_000)

afterAll(async () => {
  await node?.stop()
})

const server = () =>
  TestServer.layer({
    outbound: { rpcUrls: new Map([[31337, node.url]]), abiSources: { sourcifyUrl: "", etherscanUrl: "" } }
  })

/** A key with the token registered and a bot on it watching its transfers (`active` as given): its headers and id. */
const tokenBot = (active = true) =>
  Effect.gen(function* () {
    const headers = { "x-api-key": yield* issue({ name: "Acme" }) }
    yield* call("POST", "/v1/contracts", {
      headers,
      json: { chainId: 31337, contractAddress: addresses.Token, label: "Token", ABI: fixtures.Token.abi }
    })
    const created = yield* call("POST", "/v1/bots", {
      headers,
      json: {
        botName: "b",
        chainId: 31337,
        active,
        watchRule: { expressions: ["system.emitted(tx1.Token.E.Transfer)"] }
      }
    })
    assert.strictEqual(created.status, 201, created.text)
    return { headers, botId: created.json.bot.id as string }
  })

/** Registers the contracts and a bot with `expressions`, submits every block, runs the query: the matches by name. */
const analyse = (expressions: ReadonlyArray<string>, options: Record<string, unknown> = {}, rawLiteralDefs?: string) =>
  Effect.gen(function* () {
    const key = yield* issue({ name: "Acme" })
    const headers = { "x-api-key": key }
    for (const [label, abi] of [
      ["Token", fixtures.Token.abi],
      ["Router", fixtures.Router.abi]
    ] as const) {
      const r = yield* call("POST", "/v1/contracts", {
        headers,
        json: { chainId: 31337, contractAddress: addresses[label], label, ABI: abi }
      })
      assert.strictEqual(r.status, 201, r.text)
    }
    const bot = { botName: "b", chainId: 31337, watchRule: { expressions }, options }
    const text = JSON.stringify(bot)
    const created = yield* call("POST", "/v1/bots", {
      headers: { ...headers, "content-type": "application/json" },
      body:
        rawLiteralDefs === undefined
          ? text
          : text.replace(/\}$/, "").replace(/"options":\{/, `"options":{"literalDefs":${rawLiteralDefs},`) + "}"
    })
    assert.strictEqual(created.status, 201, created.text)
    const botId = created.json.bot.id as string
    const head = yield* Effect.promise(() => node.head())
    const submitted = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
      headers,
      json: { chainId: 31337, blocks: Array.from({ length: head + 1 }, (_, i) => i) }
    })
    assert.strictEqual(submitted.status, 200, submitted.text)
    const query = yield* call("POST", `/v1/bots/${botId}/execute-historical-query`, {
      headers,
      json: { chainId: 31337 }
    })
    assert.strictEqual(query.status, 200, query.text)
    const nameOf = (hash: string) => Object.keys(sent).find((k) => sent[k]!.hash === hash) ?? "deployToken"
    return {
      byRule: (rule: number) =>
        (query.json.matches as Array<{ rule: number; evidence: { transactions: Record<string, { hash: string }> } }>)
          .filter((m) => m.rule === rule)
          .map((m) =>
            Object.values(m.evidence.transactions)
              .map((t) => nameOf(t.hash))
              .join("+")
          ),
      query: query.json,
      submitted: submitted.json,
      headers,
      botId
    }
  }).pipe(Effect.provide(server()))

describe("historical analysis over HTTP on a real node", () => {
  it.live(
    "events in internal calls, thresholds, reverted calls and reverted inner calls",
    () =>
      Effect.gen(function* () {
        const [any, big, small, reverted, inner] = yield* Effect.forEach(
          [
            "system.emitted(tx1.itx1.Token.E.Transfer)",
            "system.uintCompare(tx1.itx1.Token.E.Transfer.value, >, 1000)",
            "system.uintCompare(tx1.itx1.Token.E.Transfer.value, <, 1000)",
            "system.reverted(tx1.Token.F.transfer)",
            "system.reverted(tx1.itx*.Token.F.transferFrom) && !system.reverted(tx1)"
          ],
          (expression) => analyse([expression])
        )
        assert.deepStrictEqual(any!.byRule(0), ["routeBig", "routeSmall"])
        assert.deepStrictEqual(big!.byRule(0), ["routeBig"])
        assert.deepStrictEqual(small!.byRule(0), ["routeSmall"])
        assert.deepStrictEqual(reverted!.byRule(0), ["failing"])
        assert.deepStrictEqual(inner!.byRule(0), ["tryRoute"])
        const pattern = big!.query.patterns[0]
        assert.strictEqual(pattern.matches, 1)
        assert.deepStrictEqual(pattern.occurrences, { "Token.E.Transfer": 1 })
        assert.strictEqual(pattern.firstBlock, sent.routeBig!.block)
        assert.strictEqual(any!.query.patterns[0].lastBlock, sent.routeSmall!.block)
      }),
    60_000
  )

  it.live(
    "a bot's expressions are one rule: AND-ed, with tx1 the same transaction in each",
    () =>
      Effect.gen(function* () {
        // FailSafe: several expressions are "equivalent to using the && operator". A 1-token transfer must not match.
        const large = yield* analyse([
          "system.emitted(tx1.Token.E.Transfer)",
          "system.uintCompare(tx1.Token.E.Transfer.value, >=, 1000000000000000000000)"
        ])
        assert.deepStrictEqual(large.byRule(0), ["deployToken"])
        assert.strictEqual(large.query.patterns.length, 1)
        assert.strictEqual(
          large.query.patterns[0].expression,
          "system.emitted(tx1.Token.E.Transfer) && system.uintCompare(tx1.Token.E.Transfer.value, >=, 1000000000000000000000)"
        )
        // Across strings, txN names the same transaction: as one expression joined with &&.
        const split = yield* analyse(
          [
            "system.invoked(tx1.Token.F.approve)",
            "system.invoked(tx2.Router.F.route)",
            "system.addressCompare(tx2.from, ==, tx1.from)"
          ],
          {
            topLevelTxBlockRange: 1
          }
        )
        assert.deepStrictEqual(split.byRule(0), ["approve+routeBig"])
        // A negation may stand in an expression of its own: the other expressions say which transaction.
        const negated = yield* analyse(["system.invoked(tx1.Token.F.approve)", "!system.invoked(tx2.Router.F.route)"], {
          topLevelTxBlockRange: 3
        })
        assert.deepStrictEqual(negated.byRule(0), ["lastApprove"])
      }),
    60_000
  )

  it.live(
    "two transactions within and beyond topLevelTxBlockRange, and a forward negation",
    () =>
      Effect.gen(function* () {
        const pair =
          "system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route) && system.addressCompare(tx2.from, ==, tx1.from)"
        const within = yield* analyse([pair], { topLevelTxBlockRange: 1 })
        assert.deepStrictEqual(within.byRule(0), ["approve+routeBig"])
        const wider = yield* analyse([pair], { topLevelTxBlockRange: 2 })
        assert.deepStrictEqual(wider.byRule(0), ["approve+routeBig", "approve+routeSmall"])
        const negation = yield* analyse(
          ["system.invoked(tx1.Token.F.approve) && !system.invoked(tx2.Router.F.route)"],
          { topLevelTxBlockRange: 3 }
        )
        assert.deepStrictEqual(negation.byRule(0), ["lastApprove"])
      }),
    60_000
  )

  it.live(
    "a literalDefs number beyond 2^53, exactly",
    () =>
      Effect.gen(function* () {
        const above = yield* analyse(
          ["system.uintCompare(tx1.Token.E.Transfer.value, >, ${limit})"],
          { topLevelTxBlockRange: 0 },
          `{"limit": ${beyond2to53}}`
        )
        assert.deepStrictEqual(above.byRule(0), ["deployToken", "above"])
        const exact = yield* analyse(
          ["system.uintCompare(tx1.Token.E.Transfer.value, ==, ${limit})"],
          { topLevelTxBlockRange: 0 },
          `{"limit": ${beyond2to53}}`
        )
        assert.deepStrictEqual(exact.byRule(0), ["exact"])
      }),
    60_000
  )

  it.live(
    "submissions are idempotent, report a block the node does not have, and the query needs blocks first",
    () =>
      Effect.gen(function* () {
        const { headers, botId } = yield* tokenBot()
        const early = yield* call("POST", `/v1/bots/${botId}/execute-historical-query`, {
          headers,
          json: { chainId: 31337 }
        })
        assert.strictEqual(early.status, 409)
        assert.match(early.json.message, /no blocks were submitted/)
        const head = yield* Effect.promise(() => node.head())
        const first = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
          headers,
          json: { chainId: 31337, blocks: [1, 2, head + 100] }
        })
        assert.deepStrictEqual(
          first.json.blocks.map((b: { status: string }) => b.status),
          ["stored", "stored", "missing"]
        )
        assert.match(first.json.blocks[2].reason, /does not exist/)
        const again = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
          headers,
          json: { chainId: 31337, blocks: [2, 1] }
        })
        assert.deepStrictEqual(
          again.json.blocks.map((b: { status: string }) => b.status),
          ["already stored", "already stored"]
        )
        assert.strictEqual(again.json.total, 2)
        const progress = () =>
          Effect.map(call("GET", `/v1/bots/${botId}/historical-blocks`, { headers }), (a) => a.json)
        const seen = yield* progress()
        assert.deepStrictEqual([seen.blocks, seen.firstBlock, seen.lastBlock, seen.running], [2, 1, 2, undefined])
        // Two steps of 100: every block the node has is stored, the rest reported, in the order asked.
        const wide = Array.from({ length: 150 }, (_, i) => 150 - i)
        const long = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
          headers,
          json: { chainId: 31337, blocks: wide }
        })
        assert.strictEqual(long.status, 200, long.text)
        assert.deepStrictEqual(
          long.json.blocks.map((b: { number: number }) => b.number),
          Array.from({ length: 150 }, (_, i) => i + 1)
        )
        assert.deepStrictEqual(
          long.json.blocks.map((b: { status: string }) => b.status),
          Array.from({ length: 150 }, (_, i) => (i + 1 <= 2 ? "already stored" : i + 1 <= head ? "stored" : "missing"))
        )
        const after = yield* progress()
        assert.deepStrictEqual([after.blocks, after.firstBlock, after.lastBlock], [head, 1, head])
        assert.strictEqual((yield* call("GET", `/v1/bots/bot_0_missing/historical-blocks`, { headers })).status, 404)
        const wrongChain = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
          headers,
          json: { chainId: 1, blocks: [1] }
        })
        assert.strictEqual(wrongChain.status, 400)
        assert.strictEqual(wrongChain.json.details.field, "chainId")
        const tooMany = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
          headers,
          json: { chainId: 31337, blocks: Array.from({ length: 1001 }, (_, i) => i) }
        })
        assert.strictEqual(tooMany.status, 400)
        assert.strictEqual(tooMany.json.details.field, "blocks")
      }).pipe(Effect.provide(server())),
    60_000
  )

  it.live(
    "a long submission shows its progress while it runs: requested, processed, started",
    () =>
      Effect.acquireUseRelease(
        Effect.promise(async () => {
          // A relay to the node that holds the requests for blocks above 100 until released.
          let release!: () => void
          const released = new Promise<void>((done) => (release = done))
          const relay = createServer((req, res) => {
            let body = ""
            req.on("data", (c: Buffer) => (body += c))
            req.on("end", () => {
              const forward = () =>
                fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body })
                  .then(async (r) =>
                    res.writeHead(r.status, { "content-type": "application/json" }).end(await r.text())
                  )
                  .catch(() => res.writeHead(502).end())
              // The blocks of the first step (1 to 100) go through; those of the second wait.
              const calls = body === "" ? [] : (JSON.parse(body) as Array<{ params: Array<unknown> }>)
              const held = calls.some((c) => typeof c.params[0] === "string" && Number(c.params[0]) > 100)
              void (held ? released.then(forward) : forward())
            })
          })
          await new Promise<void>((done) => relay.listen(0, "127.0.0.1", () => done()))
          return {
            url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
            release,
            close: () => new Promise<void>((done) => relay.close(() => done()))
          }
        }),
        (relay) =>
          Effect.gen(function* () {
            // Not followed live: every request through the relay is the submission's.
            const { headers, botId } = yield* tokenBot(false)
            const progress = call("GET", `/v1/bots/${botId}/historical-blocks`, { headers })
            // 150 blocks: a first step of 100, let through, then one held.
            const submission = yield* Effect.forkChild(
              call("POST", `/v1/bots/${botId}/historical-blocks`, {
                headers,
                json: { chainId: 31337, blocks: Array.from({ length: 150 }, (_, i) => i + 1) }
              })
            )
            const during = yield* progress.pipe(
              Effect.flatMap((a) =>
                a.json.running?.processed === 100 ? Effect.succeed(a) : Effect.fail("not yet" as const)
              ),
              Effect.retry({ schedule: Schedule.spaced("25 millis"), times: 400 }),
              Effect.orDie
            )
            assert.deepStrictEqual(Object.keys(during.json.running).sort(), ["processed", "requested", "started"])
            assert.strictEqual(during.json.running.requested, 150)
            assert.isTrue(Number.isFinite(Date.parse(during.json.running.started)))
            const head = yield* Effect.promise(() => node.head())
            assert.strictEqual(during.json.blocks, head, "the blocks of the first step are stored already")
            relay.release()
            const done = yield* Fiber.join(submission)
            assert.strictEqual(done.status, 200, done.text)
            const after = yield* progress
            assert.deepStrictEqual([after.json.running, after.json.blocks], [undefined, head])
          }).pipe(
            Effect.provide(
              TestServer.layer({
                outbound: {
                  rpcUrls: new Map([[31337, relay.url]]),
                  abiSources: { sourcifyUrl: "", etherscanUrl: "" }
                }
              })
            )
          ),
        (relay) =>
          Effect.promise(async () => {
            relay.release()
            await relay.close()
          })
      ),
    60_000
  )
})
