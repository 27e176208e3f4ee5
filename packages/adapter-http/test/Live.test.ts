/**
 * Live monitoring on a real node: anvil (mining only when told) with an ERC-20 compiled by solc, the real server
 * on SQLite following the chain every 50 ms, and a real HTTPS receiver as the bots' webhook channel. Alerts are
 * counted at the receiver by alert id.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EvmRpc } from "@vigil/adapter-evm"
import { Api } from "@vigil/adapter-http"
import { ChainData, Follower, Reanchor } from "@vigil/core"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Fiber, Schedule } from "effect"
import { OpenApi } from "effect/http-api"
import * as Receiver from "@vigil/core-test/Receiver.ts"
import { compileWebhooks } from "./OpenApiConformance.ts"
import * as TestServer from "./TestServer.ts"

const { call, issue } = TestServer
const fixtures = Solidity.fixtures()

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

/**
 * How the relay between the server and the node misbehaves: HTTP 429 to everything while `failing`; and, as a
 * replica behind the others would, null for the blocks (whole, or headers only) that `lacks` names.
 */
interface Proxy {
  failing: boolean
  lacks: ((number: number, read: "block" | "header") => boolean) | undefined
  /** The head the relay answers to eth_blockNumber, when set (a node that went backwards). */
  head: number | undefined
}

/**
 * A fresh node with the token deployed, the receiver, and the server following the node (polling every 50 ms
 * unless told otherwise; subscribed to new heads at `heads` of the node's websocket or, with `"relay"`, of the
 * relay, which is no websocket); all stopped after.
 */
const live = <A, E>(
  body: (env: {
    readonly proxy: Proxy
    readonly node: Anvil.Anvil
    readonly token: { readonly abi: ReadonlyArray<unknown>; readonly address: `0x${string}` }
    readonly receiver: Receiver.Receiver
  }) => Effect.Effect<A, E, any>,
  options: {
    readonly pollMillis?: number
    readonly confirmations?: number
    readonly heads?: "node" | "relay"
    readonly receiver?: Receiver.Behaviour
    /** Blocks per request and requests in flight of the server's chain reader (default 10 and 4). */
    readonly reads?: {
      readonly blocksPerBatch?: number
      readonly inFlight?: number
      readonly retries?: number
      readonly retryBaseMillis?: number
    }
    /** The work a bot may do in a step (default the follower's). */
    readonly limits?: Follower.Settings["limits"]
    /** Recent block hashes kept: the deepest reorganisation followed (default the follower's). */
    readonly keep?: number
    /** Where the server's log lines go, for a test that provokes warnings (default: the test's output). */
    readonly logs?: Array<string>
  } = {}
) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const node = await Anvil.start()
      const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
      const receiver = await Receiver.start(certs, options.receiver)
      const proxy: Proxy = { failing: false, lacks: undefined, head: undefined }
      const relay = createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c))
        req.on("end", () => {
          if (req.method !== "POST") return void res.writeHead(404).end()
          if (proxy.failing) return void res.writeHead(429, { "content-type": "text/plain" }).end("slow down")
          void fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body })
            .then(async (r) => {
              let text = await r.text()
              if (proxy.head !== undefined && r.status === 200) {
                const head = `0x${proxy.head.toString(16)}`
                const asked = JSON.parse(body) as { method?: string } | Array<{ id: number; method: string }>
                const answers = JSON.parse(text) as
                  { id: number; result: unknown } | Array<{ id: number; result: unknown }>
                if (!Array.isArray(asked) && !Array.isArray(answers) && asked.method === "eth_blockNumber")
                  text = JSON.stringify({ ...answers, result: head })
                else if (Array.isArray(asked) && Array.isArray(answers)) {
                  const ids = new Set(asked.filter((c) => c.method === "eth_blockNumber").map((c) => c.id))
                  text = JSON.stringify(answers.map((a) => (ids.has(a.id) ? { ...a, result: head } : a)))
                }
              }
              const lacks = proxy.lacks
              if (lacks !== undefined && r.status === 200) {
                const calls = JSON.parse(body) as Array<{ id: number; method: string; params: Array<unknown> }>
                const behind = new Set(
                  calls
                    .filter(
                      (c) =>
                        c.method === "eth_getBlockByNumber" &&
                        lacks(Number(c.params[0]), c.params[1] === true ? "block" : "header")
                    )
                    .map((c) => c.id)
                )
                const answers = JSON.parse(text) as Array<{ id: number; result: unknown }>
                text = JSON.stringify(answers.map((a) => (behind.has(a.id) ? { ...a, result: null } : a)))
              }
              res.writeHead(r.status, { "content-type": "application/json" }).end(text)
            })
            .catch(() => res.writeHead(502).end())
        })
      })
      await new Promise<void>((done) => relay.listen(0, "127.0.0.1", () => done()))
      const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`
      return { node, token, receiver, proxy, url, close: () => new Promise<void>((done) => relay.close(() => done())) }
    }),
    (env) =>
      body(env).pipe(
        Effect.provide(
          TestServer.layer({
            ...(options.logs === undefined ? {} : { logs: options.logs }),
            webhooks: {
              allowHosts: ["127.0.0.1"],
              delivery: { timeoutMillis: 2_000, retries: 3, backoffMillis: 20, pollMillis: 20 }
            },
            follow: {
              pollMillis: options.pollMillis ?? 50,
              ...(options.confirmations === undefined ? {} : { confirmations: { 31337: options.confirmations } }),
              ...(options.limits === undefined ? {} : { limits: options.limits }),
              ...(options.keep === undefined ? {} : { keep: options.keep })
            },
            outbound: {
              allowHosts: ["127.0.0.1"],
              ca: certs.ca,
              rpcUrls: new Map([[31337, env.url]]),
              ...(options.heads === undefined
                ? {}
                : {
                    rpcWsUrls: new Map([
                      [31337, (options.heads === "node" ? env.node.url : env.url).replace(/^http/, "ws")]
                    ])
                  }),
              rpc: { retries: 1, retryBaseMillis: 20, ...options.reads },
              abiSources: { sourcifyUrl: "", etherscanUrl: "" }
            }
          })
        )
      ) as Effect.Effect<A, E>,
    (env) => Effect.promise(() => Promise.all([env.node.stop(), env.receiver.close(), env.close()]))
  )

/** Reads `read` until `done` holds: a wait for a state, never for a length of time (gives up after 400 reads). */
const until = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.flatMap((a) => (done(a) ? Effect.succeed(a) : Effect.fail("not yet" as const))),
    Effect.retry({ schedule: Schedule.spaced("25 millis"), times: 400 }),
    Effect.orDie
  )

/** The followers' states. */
const followers = Effect.flatMap(Effect.service(Follower.Follower), (f) => f.status)

/** Waits until the followers' states satisfy `done`. */
const followed = (done: (states: ReadonlyArray<Follower.ChainState>) => boolean) => until(followers, done)

/** Waits until the follower of chain 31337 has processed block `n`. */
const processed = (n: number) => followed((states) => (states.find((s) => s.chainId === 31337)?.cursor ?? -1) >= n)

/** What /openapi.json's `webhooks` say a channel's message is. */
const described = compileWebhooks(OpenApi.fromApi(Api.VigilApi) as unknown as Parameters<typeof compileWebhooks>[0])

/** The alert and retraction messages the receiver got, as [kind, alert id], each as the document describes it. */
const messages = (r: Receiver.Receiver) =>
  r.received.map((m) => {
    assert.deepStrictEqual(described("channelMessage", m.headers, m.body), [], m.body)
    const body = JSON.parse(m.body)
    return [body.type as string, body.data.id as string, body.data.txHash as string] as const
  })

/** A key with the token registered and a webhook channel to the receiver. */
const setUp = (
  token: { readonly abi: ReadonlyArray<unknown>; readonly address: string },
  r: Receiver.Receiver,
  path = "/alerts"
) =>
  Effect.gen(function* () {
    const key = yield* issue({ name: "Acme" })
    const headers = { "x-api-key": key }
    const contract = yield* call("POST", "/v1/contracts", {
      headers,
      json: { chainId: 31337, contractAddress: token.address, label: "Token", ABI: token.abi }
    })
    assert.strictEqual(contract.status, 201, contract.text)
    const channel = yield* call("POST", "/v1/notifications", {
      headers,
      json: { type: "webhook", name: "receiver", url: r.url(path) }
    })
    assert.strictEqual(channel.status, 201, channel.text)
    const bot = (name: string, expressions: ReadonlyArray<string>, options: object = {}) =>
      Effect.map(
        call("POST", "/v1/bots", {
          headers,
          json: {
            botName: name,
            chainId: 31337,
            watchRule: { expressions },
            notifications: [channel.json.channel.id],
            options
          }
        }),
        (a) => {
          assert.strictEqual(a.status, 201, a.text)
          return a.json.bot.id as string
        }
      )
    return { headers, bot }
  })

describe("live monitoring on a real node", () => {
  it.live(
    "a matching transaction alerts once; a paused bot alerts on nothing; a two-transaction rule fires across blocks",
    () =>
      live(({ node, token, receiver }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const bob = node.accounts[1]!
          const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
          yield* processed(yield* Effect.promise(() => node.head()))

          const big = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
          const small = yield* Effect.promise(() => node.send(token, "transfer", [bob, 500n]))
          yield* processed(small.block)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
          assert.deepStrictEqual(
            messages(receiver).map(([kind, , tx]) => [kind, tx]),
            [["alert", big.hash]]
          )
          const listed = yield* until(
            call("GET", `/v1/bots/${whales}/alerts`, { headers }),
            (a) => a.json.alerts?.[0]?.notifications?.[0]?.status === "delivered"
          )
          assert.strictEqual(listed.status, 200, listed.text)
          const [alert] = listed.json.alerts
          assert.deepStrictEqual(
            [alert.id, alert.state, alert.blockNumber, alert.rule, alert.transactions],
            [messages(receiver)[0]![1], "active", big.block, 0, { tx1: big.hash }]
          )
          assert.match(alert.id, /^al_[0-9a-f]{32}$/)
          assert.strictEqual(alert.evidence.occurrences["tx1.Token.E.Transfer"].args.value, "5000")

          // Paused: nothing, from the next block on.
          const paused = yield* call("PUT", `/v1/bots/${whales}`, { headers, json: { active: false } })
          assert.strictEqual(paused.status, 200, paused.text)
          const pairs = yield* bot(
            "approve then move",
            [
              "system.emitted(tx1.Token.E.Approval) && system.uintCompare(tx2.Token.E.Transfer.value, >, 1000) && system.addressCompare(tx2.from, ==, tx1.from)"
            ],
            { topLevelTxBlockRange: 3 }
          )
          const approve = yield* Effect.promise(() => node.send(token, "approve", [bob, 1n]))
          yield* Effect.promise(() => node.mine(1))
          const within = yield* Effect.promise(() => node.send(token, "transfer", [bob, 7000n]))
          yield* Effect.promise(() => node.mine(3))
          const beyond = yield* Effect.promise(() => node.send(token, "transfer", [bob, 8000n]))
          assert.strictEqual(within.block - approve.block, 2)
          assert.strictEqual(beyond.block - approve.block, 6)
          yield* processed(beyond.block)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 2))
          const pairAlerts = yield* call("GET", `/v1/bots/${pairs}/alerts`, { headers })
          assert.deepStrictEqual(
            pairAlerts.json.alerts.map((a: { transactions: unknown }) => a.transactions),
            [{ tx1: approve.hash, tx2: within.hash }],
            "two blocks apart is within the range of 3; six is not"
          )
          assert.strictEqual(pairAlerts.json.alerts[0].blockNumber, within.block)
          assert.strictEqual(
            (yield* call("GET", `/v1/bots/${whales}/alerts`, { headers })).json.alerts.length,
            1,
            "the paused bot alerted on nothing"
          )
          assert.deepStrictEqual(
            messages(receiver).map(([kind, , tx]) => [kind, tx]),
            [
              ["alert", big.hash],
              ["alert", approve.hash]
            ]
          )
          const ids = messages(receiver).map(([, id]) => id)
          assert.strictEqual(new Set(ids).size, ids.length, "no alert twice")
        })
      ),
    60_000
  )

  it.live(
    "an alert its channel refused through every retry is sent again, alone, with its first delivery id",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers, bot } = yield* setUp(token, receiver)
            const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            yield* processed(yield* Effect.promise(() => node.head()))
            const bob = node.accounts[1]!
            const first = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5_000n]))
            yield* processed(first.block)
            // The receiver refuses the first four requests: the first alert's attempt and its three retries.
            const refused = yield* until(
              call("GET", `/v1/bots/${whales}/alerts`, { headers }),
              (a) => a.json.alerts?.[0]?.notifications?.[0]?.status === "dead"
            )
            const alertId = refused.json.alerts[0].id as string
            assert.strictEqual(receiver.received.length, 4)
            // A second alert, delivered at once, is not sent again with the first.
            const second = yield* Effect.promise(() => node.send(token, "transfer", [bob, 6_000n]))
            yield* processed(second.block)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 5))

            const again = yield* call("POST", `/v1/bots/${whales}/alerts/${alertId}/redeliver`, { headers })
            assert.strictEqual(again.status, 202, again.text)
            assert.deepStrictEqual(
              [again.json.botId, again.json.alertId, again.json.requeued, again.json.message],
              [whales, alertId, 1, "1 message(s) queued again"]
            )
            const healed = yield* until(call("GET", `/v1/bots/${whales}/alerts`, { headers }), (a) =>
              a.json.alerts.every((x: any) => x.notifications[0].status === "delivered")
            )
            assert.strictEqual(healed.json.alerts.length, 2)
            assert.deepStrictEqual(
              messages(receiver).map(([kind, , tx]) => [kind, tx]),
              [...Array(4).fill(["alert", first.hash]), ["alert", second.hash], ["alert", first.hash]]
            )
            const [firstTry, , , , , resent] = receiver.received
            assert.strictEqual(resent!.body, firstTry!.body, "the same message")
            assert.strictEqual(resent!.headers["webhook-id"], firstTry!.headers["webhook-id"], "the same delivery id")

            const none = yield* call("POST", `/v1/bots/${whales}/alerts/${alertId}/redeliver`, { headers })
            assert.deepStrictEqual([none.status, none.json.requeued], [202, 0])
            const unknown = yield* call("POST", `/v1/bots/${whales}/alerts/al_missing/redeliver`, { headers })
            assert.deepStrictEqual(
              [unknown.status, unknown.json.error, unknown.json.details],
              [404, "Not Found", { botId: whales, id: "al_missing" }]
            )
            assert.strictEqual(unknown.json.message, `bot ${whales} has no alert al_missing`)
            const other = { "x-api-key": yield* issue({ name: "Other" }) }
            const foreign = yield* call("POST", `/v1/bots/${whales}/alerts/${alertId}/redeliver`, { headers: other })
            assert.strictEqual(foreign.status, 404, "another key's bot")
            const metrics = yield* call("GET", "/metrics")
            assert.include(
              metrics.text,
              'vigil_http_requests_total{method="POST",route="/v1/bots/:botId/alerts/:alertId/redeliver",status="202"} 2'
            )
          }),
        { receiver: (n) => (n < 4 ? 503 : 200) }
      ),
    60_000
  )

  it.live(
    "a node's new heads over its websocket wake the follower at once: an alert long before the next poll",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { bot } = yield* setUp(token, receiver)
            yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            const head = yield* Effect.promise(() => node.head())
            const state = yield* followed((states) =>
              states.some((s) => s.heads === "subscribed" && (s.cursor ?? -1) >= head)
            )
            assert.deepStrictEqual(
              state.map((s) => [s.chainId, s.heads, s.headsError]),
              [[31337, "subscribed", undefined]]
            )
            const health = yield* call("GET", "/health")
            assert.deepStrictEqual(
              health.json.follow.map((c: { heads: string }) => c.heads),
              ["subscribed"]
            )
            assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_heads_subscribed{chain="31337"} 1')
            // The next poll is ten minutes away: only the announcement of the new block can start the step.
            const bob = node.accounts[1]!
            const big = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
            assert.deepStrictEqual(
              messages(receiver).map(([kind, , tx]) => [kind, tx]),
              [["alert", big.hash]]
            )
          }),
        { pollMillis: 600_000, heads: "node" }
      ),
    60_000
  )

  it.live(
    "a websocket URL that is no websocket is reported and retried, and polling alerts all the same",
    () => {
      const logs: Array<string> = []
      return live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { bot } = yield* setUp(token, receiver)
            yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            const state = yield* followed((states) => states.some((s) => s.headsError !== undefined))
            assert.strictEqual(state[0]!.heads, "polling")
            assert.match(state[0]!.headsError!, /^the websocket failed: /)
            const health = yield* call("GET", "/health")
            assert.match(health.json.follow[0].headsError, /^the websocket failed: /)
            assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_heads_subscribed{chain="31337"} 0')
            yield* processed(yield* Effect.promise(() => node.head()))
            const big = yield* Effect.promise(() => node.send(token, "transfer", [node.accounts[1]!, 5000n]))
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
            assert.deepStrictEqual(
              messages(receiver).map(([kind, , tx]) => [kind, tx]),
              [["alert", big.hash]]
            )
            assert.isTrue(logs.some((l) => /^Warn: new heads of chain 31337: the websocket failed: .*404/.test(l)))
          }),
        { heads: "relay", logs }
      )
    },
    60_000
  )

  it.live(
    "with two confirmations a block is processed, and its match alerted, once two blocks are mined on top of it",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers, bot } = yield* setUp(token, receiver)
            // Blocks past the token's deployment (its mint is a Transfer too): the follower starts two below the head.
            yield* Effect.promise(() => node.mine(3))
            const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            yield* processed((yield* Effect.promise(() => node.head())) - 2)
            const big = yield* Effect.promise(() => node.send(token, "transfer", [node.accounts[1]!, 5000n]))
            const listed = () =>
              Effect.map(call("GET", `/v1/bots/${whales}/alerts`, { headers }), (a) => a.json.alerts.length as number)
            for (const above of [0, 1]) {
              if (above > 0) yield* Effect.promise(() => node.mine(1))
              // The follower has reached two blocks below the head: the transfer's block is not processed yet.
              const states = yield* processed(big.block + above - 2)
              assert.deepStrictEqual(
                states.map((c) => [c.cursor, c.lag]),
                [[big.block + above - 2, 2]]
              )
              assert.strictEqual(yield* listed(), 0, `${above} block(s) on top: not yet`)
              assert.strictEqual(receiver.received.length, 0)
            }
            yield* Effect.promise(() => node.mine(1))
            yield* processed(big.block)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
            assert.deepStrictEqual(
              messages(receiver).map(([kind, , tx]) => [kind, tx]),
              [["alert", big.hash]]
            )
            assert.strictEqual(yield* listed(), 1)
          }),
        { confirmations: 2 }
      ),
    60_000
  )

  it.live(
    "a bot switched on that reaches further back than the others binds what its own range reaches, as after a restart",
    () =>
      live(({ node, token, receiver }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const rule =
            "system.emitted(tx1.Token.E.Approval) && system.uintCompare(tx2.Token.E.Transfer.value, >, 1000) && system.addressCompare(tx2.from, ==, tx1.from)"
          const near = yield* bot("near", [rule], { topLevelTxBlockRange: 2 })
          yield* processed(yield* Effect.promise(() => node.head()))
          const approve = yield* Effect.promise(() => node.send(token, "approve", [node.accounts[1]!, 1n]))
          yield* Effect.promise(() => node.mine(5))
          yield* processed(yield* Effect.promise(() => node.head()))
          const far = yield* bot("far", [rule], { topLevelTxBlockRange: 10 })
          yield* followed((states) => states[0]?.bots === 2)
          const transfer = yield* Effect.promise(() => node.send(token, "transfer", [node.accounts[1]!, 5000n]))
          assert.strictEqual(transfer.block - approve.block, 6)
          yield* processed(transfer.block)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
          const alerts = (id: string) =>
            Effect.map(call("GET", `/v1/bots/${id}/alerts`, { headers }), (a) =>
              a.json.alerts.map((x: { transactions: unknown }) => x.transactions)
            )
          assert.deepStrictEqual(yield* alerts(far), [{ tx1: approve.hash, tx2: transfer.hash }])
          assert.deepStrictEqual(yield* alerts(near), [], "six blocks apart is beyond the range of 2")
        })
      ),
    60_000
  )

  it.live(
    "a replica behind the others while a reorganisation is checked is waited for: only the orphaned alert is retracted",
    () =>
      live(({ node, token, receiver, proxy }) =>
        Effect.gen(function* () {
          const { bot } = yield* setUp(token, receiver)
          const bob = node.accounts[1]!
          yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
          const start = yield* Effect.promise(() => node.head())
          yield* processed(start)
          const standing = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
          const snapshot = yield* Effect.promise(() => node.rpc<string>("evm_snapshot"))
          const orphan = yield* Effect.promise(() => node.send(token, "transfer", [bob, 6000n]))
          yield* processed(orphan.block)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 2))

          // The node reorganises one block deep, while header reads come from a replica that lacks both new blocks.
          proxy.lacks = (n, read) => read === "header" && n >= standing.block
          assert.isTrue(yield* Effect.promise(() => node.rpc<boolean>("evm_revert", [snapshot])))
          const kept = yield* Effect.promise(() => node.send(token, "transfer", [bob, 7000n]))
          yield* Effect.promise(() => node.mine(1))
          const waiting = yield* followed((states) => states[0]?.state === "backing off")
          assert.match(waiting[0]!.lastError!, /without block \d+ .*waiting for it rather than retracting/)
          assert.strictEqual(receiver.received.length, 2, "nothing retracted on the replica's word")
          proxy.lacks = undefined
          yield* processed(kept.block + 1)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 4))
          assert.deepStrictEqual(
            messages(receiver).map(([kind, , tx]) => [kind, tx]),
            [
              ["alert", standing.hash],
              ["alert", orphan.hash],
              ["retraction", orphan.hash],
              ["alert", kept.hash]
            ]
          )
        })
      ),
    60_000
  )

  it.live(
    "a replica lacking a block of the window being read again is waited for: the two-transaction match is not lost",
    () =>
      live(({ node, token, receiver, proxy }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const bob = node.accounts[1]!
          const pairs = yield* bot(
            "approve then move",
            [
              "system.emitted(tx1.Token.E.Approval) && system.uintCompare(tx2.Token.E.Transfer.value, >, 1000) && system.addressCompare(tx2.from, ==, tx1.from)"
            ],
            { topLevelTxBlockRange: 3 }
          )
          yield* processed(yield* Effect.promise(() => node.head()))
          const approve = yield* Effect.promise(() => node.send(token, "approve", [bob, 1n]))
          yield* processed(approve.block)
          // A failed step drops the window; the next one reads it again, from a replica without the approval's block.
          proxy.failing = true
          yield* followed((states) => states[0]?.state === "backing off")
          proxy.lacks = (n, read) => read === "block" && n === approve.block
          proxy.failing = false
          const transfer = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
          const waiting = yield* followed(
            (states) => states[0]?.lastError?.includes("in the window kept before the cursor") === true
          )
          assert.strictEqual(waiting[0]!.cursor, approve.block, "the transfer's block waits for the window")
          proxy.lacks = undefined
          yield* processed(transfer.block)
          yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
          const listed = yield* call("GET", `/v1/bots/${pairs}/alerts`, { headers })
          assert.deepStrictEqual(
            listed.json.alerts.map((a: { transactions: unknown }) => a.transactions),
            [{ tx1: approve.hash, tx2: transfer.hash }]
          )
        })
      ),
    60_000
  )

  for (const depth of [1, 3])
    it.live(
      `a reorganisation ${depth} block${depth === 1 ? "" : "s"} deep retracts the orphaned alert and alerts on the new branch`,
      () =>
        live(({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers, bot } = yield* setUp(token, receiver)
            const bob = node.accounts[1]!
            const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            const start = yield* Effect.promise(() => node.head())
            yield* processed(start)
            const snapshot = yield* Effect.promise(() => node.rpc<string>("evm_snapshot"))
            const orphan = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
            if (depth > 1) yield* Effect.promise(() => node.mine(depth - 1))
            assert.strictEqual(yield* Effect.promise(() => node.head()), start + depth)
            yield* processed(start + depth)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))

            assert.isTrue(yield* Effect.promise(() => node.rpc<boolean>("evm_revert", [snapshot])))
            const kept = yield* Effect.promise(() => node.send(token, "transfer", [bob, 6000n]))
            yield* Effect.promise(() => node.mine(depth))
            assert.strictEqual(kept.block, start + 1)
            yield* processed(start + depth + 1)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 3))
            const [first, retraction, second] = messages(receiver)
            assert.deepStrictEqual(first, ["alert", first![1], orphan.hash])
            assert.deepStrictEqual(retraction, ["retraction", first![1], orphan.hash], "the same alert id")
            assert.deepStrictEqual(second!.slice(0, 1).concat(second![2]), ["alert", kept.hash])
            const listed = yield* until(
              call("GET", `/v1/bots/${whales}/alerts`, { headers }),
              (a) =>
                a.json.alerts?.length === 2 &&
                a.json.alerts.every((x: { notifications: Array<{ status: string }> }) =>
                  x.notifications.every((n) => n.status === "delivered")
                )
            )
            assert.deepStrictEqual(
              listed.json.alerts.map((a: any) => [
                a.transactions.tx1,
                a.state,
                a.notifications.map((n: { kind: string }) => n.kind)
              ]),
              [
                [kept.hash, "active", ["alert"]],
                [orphan.hash, "retracted", ["alert", "retraction"]]
              ]
            )
            assert.deepStrictEqual(
              (yield* call("GET", `/v1/bots/${whales}/alerts?state=active`, { headers })).json.alerts.map(
                (a: { id: string }) => a.id
              ),
              [second![1]]
            )
            const state = (yield* followers).find((x) => x.chainId === 31337)!
            assert.deepStrictEqual([state.reorganisations, state.retractions], [1, 1])
            const metrics = (yield* call("GET", "/metrics")).text
            const scrape = (yield* call("GET", "/metrics")).text
            for (const text of [metrics, scrape]) {
              assert.include(text, 'vigil_follow_retractions_total{chain="31337"} 1')
              assert.include(text, 'vigil_follow_alerts_total{chain="31337"} 2')
              assert.include(text, 'vigil_follow_reorganisations_total{chain="31337"} 1')
              assert.include(text, 'vigil_follow_head_lag_blocks{chain="31337"} 0')
            }
            const judged = (text: string) =>
              Number(/^vigil_follow_judge_seconds_total\{chain="31337"\} (\S+)$/m.exec(text)?.[1])
            assert.isAbove(judged(metrics), 0, "the bots were run over the blocks for a while")
            assert.isAtLeast(judged(scrape), judged(metrics), "a counter only grows")
            const health = yield* call("GET", "/health")
            assert.deepStrictEqual(
              health.json.follow.map((c: any) => [c.chainId, c.state, c.bots, c.cursor, c.lag]),
              [[31337, "following", 1, start + depth + 1, 0]]
            )
          })
        ),
      60_000
    )

  it.live(
    "historical analysis and the live follower are one engine: the same matches over the same blocks",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers } = yield* setUp(token, receiver)
            const router = {
              abi: fixtures.Router.abi,
              address: (yield* Effect.promise(() => node.deploy(fixtures.Router))).address
            }
            assert.strictEqual(
              (yield* call("POST", "/v1/contracts", {
                headers,
                json: { chainId: 31337, contractAddress: router.address, label: "Router", ABI: router.abi }
              })).status,
              201
            )
            const expressions = [
              "system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)",
              "system.emitted(tx1.Token.E.Approval) && system.emitted(tx2.Token.E.Transfer) && system.addressCompare(tx2.from, ==, tx1.from)",
              "system.emitted(tx1.Token.E.Approval) && !system.emitted(tx2.Token.E.Transfer)",
              "system.emitted(tx1.itx*.Token.E.Transfer) && system.uintCompare(tx1.itx*.Token.E.Transfer.value, <, 3000)"
            ]
            // One bot per expression (a bot's expressions are one rule): each compared with its own history.
            const botIds: Array<string> = []
            for (const [i, expression] of expressions.entries()) {
              const created = yield* call("POST", "/v1/bots", {
                headers,
                json: {
                  botName: `rule ${i}`,
                  chainId: 31337,
                  watchRule: { expressions: [expression] },
                  options: { topLevelTxBlockRange: 2 }
                }
              })
              assert.strictEqual(created.status, 201, created.text)
              botIds.push(created.json.bot.id as string)
            }
            const start = yield* Effect.promise(() => node.head())
            yield* processed(start)
            const bob = node.accounts[1]!
            yield* Effect.promise(() => node.send(token, "approve", [router.address, 10n ** 24n]))
            // A fixed, varied sequence: transfers above and below the threshold, approvals followed or not by a
            // transfer within two blocks, internal transfers through the router, empty blocks, two per block.
            for (let i = 0; i < 24; i++) {
              const step = i % 6
              if (step === 0) yield* Effect.promise(() => node.send(token, "transfer", [bob, 500n + BigInt(i) * 100n]))
              if (step === 1) yield* Effect.promise(() => node.send(token, "approve", [bob, BigInt(i)]))
              if (step === 2)
                yield* Effect.promise(() => node.send(router, "route", [token.address, bob, 1000n * BigInt(i)]))
              if (step === 3) {
                yield* Effect.promise(() => node.send(token, "approve", [bob, 3n]))
                yield* Effect.promise(() => node.mine(3))
              }
              if (step === 4) {
                yield* Effect.promise(() => node.submit(token, "approve", [bob, 7n]))
                yield* Effect.promise(() => node.submit(token, "transfer", [bob, 5_000n], { gas: 100_000 }))
                yield* Effect.promise(() => node.mine(1))
              }
              if (step === 5) yield* Effect.promise(() => node.mine(2))
            }
            // Past the longest window, so no negation is left open at the end.
            yield* Effect.promise(() => node.mine(3))
            const end = yield* Effect.promise(() => node.head())
            yield* processed(end)

            const liveMatches: Array<string> = []
            const historical: Array<string> = []
            for (const [rule, botId] of botIds.entries()) {
              const alerts = (yield* call("GET", `/v1/bots/${botId}/alerts?limit=200`, { headers })).json.alerts
              liveMatches.push(
                ...alerts.map(
                  (a: { transactions: Record<string, string> }) =>
                    `${rule}:${Object.entries(a.transactions)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(",")}`
                )
              )
              const submitted = yield* call("POST", `/v1/bots/${botId}/historical-blocks`, {
                headers,
                json: { chainId: 31337, blocks: Array.from({ length: end + 1 }, (_, i) => i) }
              })
              assert.strictEqual(submitted.status, 200, submitted.text)
              const query = yield* call("POST", `/v1/bots/${botId}/execute-historical-query`, {
                headers,
                json: { chainId: 31337 }
              })
              assert.strictEqual(query.status, 200, query.text)
              historical.push(
                ...(
                  query.json.matches as Array<{
                    evidence: { transactions: Record<string, { hash: string; blockNumber: number }> }
                  }>
                )
                  // The live follower began after block `start`: what completed before it is not its to see.
                  .filter((m) => Math.max(...Object.values(m.evidence.transactions).map((t) => t.blockNumber)) > start)
                  .map(
                    (m) =>
                      `${rule}:${Object.entries(m.evidence.transactions)
                        .map(([k, t]) => `${k}=${t.hash}`)
                        .join(",")}`
                  )
              )
            }
            assert.isAbove(historical.length, 10)
            for (const rule of [0, 1, 2, 3])
              assert.isTrue(
                historical.some((m) => m.startsWith(`${rule}:`)),
                `rule ${rule} matched something`
              )
            assert.deepStrictEqual([...liveMatches].sort(), [...historical].sort())
          }),
        // One block a request, one request at a time: anvil 1.7.1 stops answering when call traces are read
        // concurrently (in one batch or several requests) while it mines, and this test mines while they are read.
        { reads: { blocksPerBatch: 1, inFlight: 1 } }
      ),
    60_000
  )

  it.live(
    "notification limits on block time: a threshold of matches in a window and a minimum interval; all alerts recorded",
    () =>
      live(({ node, token, receiver }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const bob = node.accounts[1]!
          const limited = yield* bot("limited", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"], {
            alertThreshold: { count: 2, windowSeconds: 150 },
            notifyMinIntervalSeconds: 200
          })
          const shown = yield* call("GET", `/v1/bots/${limited}`, { headers })
          assert.deepStrictEqual(
            [shown.json.bot.options.alertThreshold, shown.json.bot.options.notifyMinIntervalSeconds],
            [{ count: 2, windowSeconds: 150 }, 200]
          )
          yield* processed(yield* Effect.promise(() => node.head()))
          yield* Effect.promise(() => node.rpc("anvil_setBlockTimestampInterval", [60]))
          const sent: Array<string> = []
          for (let i = 0; i < 6; i++)
            sent.push((yield* Effect.promise(() => node.send(token, "transfer", [bob, 2_000n + BigInt(i)]))).hash)
          yield* processed(yield* Effect.promise(() => node.head()))
          const listed = yield* call("GET", `/v1/bots/${limited}/alerts`, { headers })
          const byTx = new Map(
            (
              listed.json.alerts as Array<{ transactions: { tx1: string }; suppressed?: string; blockTime: number }>
            ).map((a) => [a.transactions.tx1, a])
          )
          // 60 s apart: the first alone is under the threshold of 2 in 150 s; the second is notified; the next three
          // fall within 200 s of it; the sixth is 240 s after it.
          assert.deepStrictEqual(
            sent.map((h) => byTx.get(h)?.suppressed ?? "notified"),
            ["threshold", "notified", "interval", "interval", "interval", "notified"]
          )
          assert.deepStrictEqual(
            sent.map((h) => byTx.get(h)!.blockTime - byTx.get(sent[0]!)!.blockTime),
            [0, 60, 120, 180, 240, 300]
          )
          assert.deepStrictEqual(
            listed.json.alerts.map((a: { notifications: Array<unknown> }) => a.notifications.length).reverse(),
            [0, 1, 0, 0, 0, 1],
            "a message is queued for the notified alerts only (in the step that stored them)"
          )
          yield* Effect.promise(() => receiver.until((got) => got.length >= 2))
          assert.deepStrictEqual(
            messages(receiver).map(([, , tx]) => tx),
            [sent[1], sent[5]]
          )
          const bad = yield* call("PUT", `/v1/bots/${limited}`, {
            headers,
            json: { options: { alertThreshold: { count: 0, windowSeconds: 10 } } }
          })
          assert.strictEqual(bad.status, 400)
          assert.include(bad.json.message, "options.alertThreshold")
        })
      ),
    60_000
  )

  it.live(
    "a bot watches from the block its creation answered, however late the follower notices it; its expressions are AND-ed",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers } = yield* setUp(token, receiver)
            const channels = yield* call("GET", "/v1/notifications", { headers })
            const channel = channels.json.channels[0].id as string
            const create = (name: string, expressions: ReadonlyArray<string>) =>
              call("POST", "/v1/bots", {
                headers,
                json: { botName: name, chainId: 31337, watchRule: { expressions }, notifications: [channel] }
              })
            const bob = node.accounts[1]!
            // The first bot of the chain: the follower notices it at its next look (a second later here), after
            // the transfers below are mined. Two expressions, one rule: a 1-token transfer is not 1,000 tokens.
            const head = yield* Effect.promise(() => node.head())
            const created = yield* create("large transfers", [
              "system.emitted(tx1.Token.E.Transfer)",
              "system.uintCompare(tx1.Token.E.Transfer.value, >=, 1000000000000000000000)"
            ])
            assert.strictEqual(created.status, 201, created.text)
            assert.deepStrictEqual(created.json.bot.watchingFrom, { chainId: 31337, blockNumber: head + 1 })
            assert.notProperty(created.json, "warnings")
            const large = created.json.bot.id as string
            const small = yield* Effect.promise(() => node.send(token, "transfer", [bob, 10n ** 18n]))
            const big = yield* Effect.promise(() => node.send(token, "transfer", [bob, 2n * 10n ** 21n]))
            yield* processed(big.block)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
            const alerted = yield* call("GET", `/v1/bots/${large}/alerts`, { headers })
            assert.deepStrictEqual(
              alerted.json.alerts.map((a: { transactions: { tx1: string } }) => a.transactions.tx1),
              [big.hash],
              `only the large transfer (not ${small.hash})`
            )
            assert.strictEqual(
              alerted.json.alerts[0].expression,
              "system.emitted(tx1.Token.E.Transfer) && system.uintCompare(tx1.Token.E.Transfer.value, >=, 1000000000000000000000)"
            )

            // A bot skipped while a contract its rules name is gone is run, once it is back, over what it missed.
            const second = yield* call("POST", "/v1/contracts", {
              headers,
              json: { chainId: 31337, contractAddress: token.address, label: "Token2", ABI: token.abi }
            })
            assert.strictEqual(second.status, 201, second.text)
            const watcher = yield* create("any transfer", ["system.uintCompare(tx1.Token2.E.Transfer.value, >, 1000)"])
            const watcherId = watcher.json.bot.id as string
            const removed = yield* call("DELETE", `/v1/contracts/${second.json.contract.id}?force=true`, { headers })
            assert.strictEqual(removed.status, 200, removed.text)
            const during = yield* Effect.promise(() => node.send(token, "transfer", [bob, 3_000n]))
            yield* processed(during.block)
            const skipped = yield* call("GET", "/health")
            assert.match(skipped.json.follow[0].skipped[0], new RegExp(`bot ${watcherId}.*Token2`))
            const back = yield* call("POST", "/v1/contracts", {
              headers,
              json: { chainId: 31337, contractAddress: token.address, label: "Token2", ABI: token.abi }
            })
            assert.strictEqual(back.status, 201, back.text)
            const found = yield* until(
              call("GET", `/v1/bots/${watcherId}/alerts`, { headers }),
              (a) => a.json.alerts?.length >= 1
            )
            assert.deepStrictEqual(
              found.json.alerts.map((a: { transactions: { tx1: string } }) => a.transactions.tx1),
              [during.hash]
            )

            // Switched off and on again: it watches from the head then; a rename keeps where it watches from.
            const off = yield* call("PUT", `/v1/bots/${watcherId}`, { headers, json: { active: false } })
            assert.notProperty(off.json.bot, "watchingFrom")
            const renamed = yield* call("PUT", `/v1/bots/${large}`, { headers, json: { botName: "whales" } })
            assert.deepStrictEqual(renamed.json.bot.watchingFrom, created.json.bot.watchingFrom)
            const limited = yield* call("PUT", `/v1/bots/${large}`, {
              headers,
              json: { options: { notifyMinIntervalSeconds: 0 } }
            })
            assert.deepStrictEqual(
              limited.json.bot.watchingFrom,
              created.json.bot.watchingFrom,
              "a notification limit is not a new rule"
            )
            const unwatched = yield* Effect.promise(() => node.send(token, "transfer", [bob, 3_500n]))
            const on = yield* call("PUT", `/v1/bots/${watcherId}`, { headers, json: { active: true } })
            assert.deepStrictEqual(on.json.bot.watchingFrom, { chainId: 31337, blockNumber: unwatched.block + 1 })
            const after = yield* Effect.promise(() => node.send(token, "transfer", [bob, 4_000n]))
            yield* until(call("GET", `/v1/bots/${watcherId}/alerts`, { headers }), (a) => a.json.alerts?.length >= 2)
            yield* processed(after.block)
            const all = yield* call("GET", `/v1/bots/${watcherId}/alerts`, { headers })
            assert.deepStrictEqual(
              all.json.alerts.map((a: { transactions: { tx1: string } }) => a.transactions.tx1),
              [after.hash, during.hash],
              "nothing while it was off"
            )
            const ids = messages(receiver).map(([, id]) => id)
            assert.strictEqual(new Set(ids).size, ids.length, "no alert twice")
          }),
        { pollMillis: 1_000 }
      ),
    60_000
  )

  it.live(
    "a bot over its bounds is paused with the reason, on the bot and in /health; another key's bot goes on alerting",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const noisy = yield* setUp(token, receiver)
            const quiet = yield* setUp(token, receiver)
            const flood = yield* noisy.bot("every transfer", ["system.emitted(tx1.Token.E.Transfer)"])
            const whales = yield* quiet.bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 2003)"])
            const bob = node.accounts[1]!
            // Six matches in one block, over the five a block this server allows.
            for (let i = 0; i < 6; i++)
              yield* Effect.promise(() => node.submit(token, "transfer", [bob, 2_000n + BigInt(i)], { gas: 100_000 }))
            yield* Effect.promise(() => node.mine(1))
            const crowded = yield* Effect.promise(() => node.head())
            yield* processed(crowded)
            const bot = yield* until(
              call("GET", `/v1/bots/${flood}`, { headers: noisy.headers }),
              (b) => b.json.bot.paused !== undefined
            )
            assert.strictEqual(bot.json.bot.active, false)
            assert.strictEqual(bot.json.bot.paused.blockNumber, crowded)
            assert.match(bot.json.bot.paused.reason, /matched more than 5 times a block, at block \d+: narrow the rule/)
            assert.deepStrictEqual(
              (yield* call("GET", `/v1/bots/${flood}/alerts`, { headers: noisy.headers })).json.alerts,
              [],
              "nothing of the step it went over in"
            )
            const health = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.skipped !== undefined)
            assert.include(health.json.follow[0].skipped, `bot ${flood}: paused: ${bot.json.bot.paused.reason}`)
            // The other key's bot alerted on its two of the six, and goes on.
            const quietAlerts = yield* until(
              call("GET", `/v1/bots/${whales}/alerts`, { headers: quiet.headers }),
              (a) => a.json.alerts?.length === 2
            )
            assert.strictEqual(quietAlerts.json.alerts[0].blockNumber, crowded)
            const later = yield* Effect.promise(() => node.send(token, "transfer", [bob, 9_000n]))
            yield* until(
              call("GET", `/v1/bots/${whales}/alerts`, { headers: quiet.headers }),
              (a) => a.json.alerts?.[0]?.transactions?.tx1 === later.hash
            )
            // Switched on again: no longer paused, and it alerts from then on.
            const on = yield* call("PUT", `/v1/bots/${flood}`, { headers: noisy.headers, json: { active: true } })
            assert.strictEqual(on.status, 200, on.text)
            assert.notProperty(on.json.bot, "paused")
            const after = yield* Effect.promise(() => node.send(token, "transfer", [bob, 1n]))
            yield* until(
              call("GET", `/v1/bots/${flood}/alerts`, { headers: noisy.headers }),
              (a) => a.json.alerts?.[0]?.transactions?.tx1 === after.hash
            )
            const healed = yield* until(call("GET", "/health"), (h) => h.json.follow[0].skipped === undefined)
            assert.notProperty(healed.json.follow[0], "skipped")
          }),
        { limits: { bindingsPerStep: 1_000_000, matchesPerBlock: 5 } }
      ),
    60_000
  )

  it.live(
    "a node that lacks a block it announced, or whose head goes backwards, is reported with its reason and since when; the follower goes on once it is whole",
    () =>
      live(({ node, token, receiver, proxy }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
          yield* processed(yield* Effect.promise(() => node.head()))
          // The node announces the block (its head) but answers null for it: a replica behind, a pruned node.
          const lacking = yield* Effect.promise(() => node.send(token, "transfer", [node.accounts[1]!, 4_000n]))
          proxy.lacks = (n, read) => n === lacking.block && read === "block"
          const stalled = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince !== undefined)
          assert.strictEqual(stalled.status, 200, "the API still serves")
          assert.match(
            stalled.json.follow[0].lastError,
            new RegExp(`^block ${lacking.block}, at or below the node's head`)
          )
          const metrics = yield* until(
            call("GET", "/metrics"),
            (m) =>
              /vigil_follow_stalled_seconds\{chain="31337"\} [1-9]/.test(m.text) ||
              /vigil_follow_stalled_seconds\{chain="31337"\} 0\.\d*[1-9]/.test(m.text)
          )
          assert.match(metrics.text, /vigil_follow_head_lag_blocks\{chain="31337"\} 1/)
          proxy.lacks = undefined
          yield* processed(lacking.block)
          const healed = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince === undefined)
          assert.notProperty(healed.json.follow[0], "lastError")
          assert.deepStrictEqual(
            (yield* call("GET", `/v1/bots/${whales}/alerts`, { headers })).json.alerts.map(
              (a: { transactions: { tx1: string } }) => a.transactions.tx1
            ),
            [lacking.hash]
          )
          // The node's head goes back below what was processed: waited for, and said.
          proxy.head = lacking.block - 1
          const behind = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince !== undefined)
          assert.match(
            behind.json.follow[0].lastError,
            new RegExp(`^the node's head ${lacking.block - 1} is below block ${lacking.block}`)
          )
          proxy.head = undefined
          yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince === undefined)
        })
      ),
    60_000
  )

  it.live(
    "a reorganisation deeper than the hashes kept halts the chain (/health 503); re-anchoring retracts what left the chain and the follower goes on",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const { headers, bot } = yield* setUp(token, receiver)
            const bob = node.accounts[1]!
            const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            const start = yield* Effect.promise(() => node.head())
            yield* processed(start)
            const snapshot = yield* Effect.promise(() => node.rpc<string>("evm_snapshot"))
            const orphan = yield* Effect.promise(() => node.send(token, "transfer", [bob, 5000n]))
            yield* Effect.promise(() => node.mine(5))
            yield* processed(start + 6)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 1))
            // Six blocks replaced, three hashes kept: the follower cannot find where its branch left the node's.
            assert.isTrue(yield* Effect.promise(() => node.rpc<boolean>("evm_revert", [snapshot])))
            yield* Effect.promise(() => node.mine(8))
            const halted = yield* until(call("GET", "/health"), (h) => h.status === 503)
            assert.deepStrictEqual([halted.json.status, halted.json.reason], ["degraded", "FollowHalted"])
            assert.match(halted.json.message, /^chain 31337: the chain reorganised deeper than the 3 blocks kept/)
            assert.include(halted.json.message, "vigil follow reset --chain 31337")
            const state = (yield* followers).find((x) => x.chainId === 31337)!
            assert.strictEqual(state.state, "halted")
            assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_halted{chain="31337"} 1')
            assert.deepStrictEqual(
              (yield* call("GET", `/v1/bots/${whales}/alerts?state=active`, { headers })).json.alerts.length,
              1,
              "the orphaned alert still stands while halted"
            )

            // What `vigil follow reset --chain 31337` does, on the server's own store.
            const done = yield* Reanchor.reset(31337).pipe(
              Effect.provideService(ChainData.ChainData, EvmRpc.make({ urls: new Map([[31337, node.url]]) }))
            )
            const head = yield* Effect.promise(() => node.head())
            assert.deepStrictEqual([done.cursor.number, done.retracted, done.unverified, done.kept], [head, 1, 0, 0])
            yield* until(call("GET", "/health"), (h) => h.status === 200 && h.json.follow?.[0]?.state === "following")
            yield* Effect.promise(() => receiver.until((got) => got.length >= 2))
            assert.deepStrictEqual(
              messages(receiver).map(([kind, , tx]) => [kind, tx]),
              [
                ["alert", orphan.hash],
                ["retraction", orphan.hash]
              ]
            )
            const listed = yield* call("GET", `/v1/bots/${whales}/alerts`, { headers })
            assert.deepStrictEqual(
              listed.json.alerts.map((a: { state: string }) => a.state),
              ["retracted"]
            )
            // The re-anchoring's retraction is counted by the server that follows the chain.
            assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_retractions_total{chain="31337"} 1')
            // And it follows the new branch from there.
            const after = yield* Effect.promise(() => node.send(token, "transfer", [bob, 7000n]))
            yield* processed(after.block)
            yield* Effect.promise(() => receiver.until((got) => got.length >= 3))
            assert.deepStrictEqual(messages(receiver)[2]!.slice(0, 1).concat(messages(receiver)[2]![2]), [
              "alert",
              after.hash
            ])
          }),
        { keep: 3 }
      ),
    60_000
  )

  it.live(
    "soak: 10 bots over 2 keys, 4 transfers a block, one heavy bot and one stalled channel: the other key gets every alert exactly once",
    () =>
      live(
        ({ node, token, receiver }) =>
          Effect.gen(function* () {
            const noisy = yield* setUp(token, receiver, "/stalled")
            const quiet = yield* setUp(token, receiver, "/quiet")
            // Key A: one heavy bot (every pair of transfers to the same receiver within 100 blocks) and four more,
            // all sending to a channel that never answers. Key B: five bots at thresholds 0, 1000, … 4000.
            const heavy = yield* noisy.bot("pairs", [
              "system.emitted(tx1.Token.E.Transfer) && system.emitted(tx2.Token.E.Transfer)",
              "system.addressCompare(tx2.Token.E.Transfer.to, ==, tx1.Token.E.Transfer.to)"
            ])
            for (let i = 0; i < 4; i++)
              yield* noisy.bot(`a${i}`, [`system.uintCompare(tx1.Token.E.Transfer.value, >, ${i * 1000})`])
            const thresholds = [0, 1000, 2000, 3000, 4000]
            const quietBots: Array<string> = []
            for (const t of thresholds)
              quietBots.push(yield* quiet.bot(`b${t}`, [`system.uintCompare(tx1.Token.E.Transfer.value, >, ${t})`]))
            // /health/live is read back to back all along; its slowest answer is reported (bench measures it).
            let slowest = 0
            let reading = true
            const prober = yield* Effect.forkChild(
              Effect.gen(function* () {
                while (reading) {
                  const started = performance.now()
                  const r = yield* call("GET", "/health/live")
                  assert.strictEqual(r.status, 200)
                  slowest = Math.max(slowest, performance.now() - started)
                }
              })
            )
            const bob = node.accounts[1]!
            const values = [500n, 1500n, 2500n, 3500n, 4500n]
            const sent: Array<bigint> = []
            for (let block = 0; block < 30; block++) {
              for (let i = 0; i < 4; i++) {
                const value = values[(block * 4 + i) % values.length]!
                yield* Effect.promise(() => node.submit(token, "transfer", [bob, value], { gas: 100_000 }))
                sent.push(value)
              }
              yield* Effect.promise(() => node.mine(1))
            }
            const last = yield* Effect.promise(() => node.head())
            yield* processed(last)
            const expected = thresholds.reduce((n, t) => n + sent.filter((v) => v > BigInt(t)).length, 0)
            yield* Effect.promise(() =>
              receiver.until((got) => got.filter((m) => m.path === "/quiet").length >= expected, 30_000)
            )
            reading = false
            yield* Fiber.join(prober)
            const quietIds = receiver.received
              .filter((m) => m.path === "/quiet")
              .map((m) => JSON.parse(m.body).data.id as string)
            assert.strictEqual(quietIds.length, expected, "every alert of the quiet key")
            assert.strictEqual(new Set(quietIds).size, expected, "none twice")
            for (const [i, t] of thresholds.entries()) {
              const listed = yield* call("GET", `/v1/bots/${quietBots[i]}/alerts?limit=200`, { headers: quiet.headers })
              assert.strictEqual(listed.json.alerts.length, sent.filter((v) => v > BigInt(t)).length)
            }
            const heavyBot = (yield* call("GET", `/v1/bots/${heavy}`, { headers: noisy.headers })).json.bot
            assert.strictEqual(heavyBot.active, false, "the heavy bot went over its bounds and was paused")
            assert.match(heavyBot.paused.reason, /matched more than 100 times a block|bindings/)
            console.log(
              `soak: ${sent.length} transfers in 30 blocks, ${expected} alerts of the quiet key; slowest /health/live ${slowest.toFixed(0)} ms`
            )
          }),
        { receiver: (_, path) => (path === "/stalled" ? "hang" : 200), pollMillis: 100 }
      ),
    120_000
  )

  it.live(
    "a node's trouble shows from its first failed attempt, while the reader still retries",
    () =>
      live(
        ({ node, token, receiver, proxy }) =>
          Effect.gen(function* () {
            const { bot } = yield* setUp(token, receiver)
            yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
            yield* processed(yield* Effect.promise(() => node.head()))
            proxy.failing = true
            const failing = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince !== undefined)
            assert.match(failing.json.follow[0].lastError, /^the node is failing, retrying: .*429/)
            assert.notStrictEqual(failing.json.follow[0].state, "backing off", "the retries have not given up")
            // How far behind is not known while the node fails: no lag, not the last one.
            assert.notProperty(failing.json.follow[0], "lag")
            assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_head_lag_blocks{chain="31337"} NaN')
            proxy.failing = false
            const healed = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.stalledSince === undefined)
            assert.isNumber(healed.json.follow[0].lag)
          }),
        // Many retries, the first after a second: a step stays in the reader's retries for the whole test.
        { reads: { retries: 20, retryBaseMillis: 1_000 } }
      ),
    60_000
  )

  it.live(
    "a node in trouble (429) is backed off from and reported, and no block is skipped once it answers again",
    () =>
      live(({ node, token, receiver, proxy }) =>
        Effect.gen(function* () {
          const { headers, bot } = yield* setUp(token, receiver)
          const whales = yield* bot("whales", ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)"])
          yield* processed(yield* Effect.promise(() => node.head()))
          proxy.failing = true
          const during = yield* Effect.promise(() => node.send(token, "transfer", [node.accounts[1]!, 4_000n]))
          yield* Effect.promise(() => node.mine(3))
          const troubled = yield* until(call("GET", "/health"), (h) => h.json.follow?.[0]?.state === "backing off")
          assert.strictEqual(troubled.status, 200, "the API still serves")
          assert.match(troubled.json.follow[0].lastError, /429|rate/i)
          assert.include((yield* call("GET", "/metrics")).text, 'vigil_follow_backing_off{chain="31337"} 1')
          proxy.failing = false
          yield* processed(during.block + 3)
          const listed = yield* call("GET", `/v1/bots/${whales}/alerts`, { headers })
          assert.deepStrictEqual(
            listed.json.alerts.map((a: { transactions: { tx1: string } }) => a.transactions.tx1),
            [during.hash]
          )
          const recovered = yield* call("GET", "/health")
          assert.strictEqual(recovered.json.follow[0].state, "following")
          assert.notProperty(recovered.json.follow[0], "lastError")
        })
      ),
    60_000
  )
})
