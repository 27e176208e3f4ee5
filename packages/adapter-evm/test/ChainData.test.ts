/**
 * Chain data from a real EVM node: anvil with an ERC-20, a router that calls it internally and a contract that
 * emits and reverts, compiled with solc. The JSON-RPC reader fetches whole blocks (with call traces), ChainFacts
 * decodes them, and checked rules are evaluated over them: the facts measured on the node, end to end. Also the
 * reader's behaviour with a node that lacks methods, limits requests or is down.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { EvmRpc } from "@vigil/adapter-evm"
import { Abi, ChainData, ChainFacts, Rules, Scan } from "@vigil/core"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Fiber, Schema, Stream } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const contracts = Solidity.fixtures()
const token = contracts.Token!
const router = contracts.Router!
const noisy = contracts.Noisy!

let node: Anvil.Anvil
let registered: ReadonlyArray<ChainFacts.Contract>
/** What each scenario's transaction is, by name: its hash and block. */
const sent: Record<string, { hash: string; block: number; status: boolean }> = {}
const beyond2to53 = 9_007_199_254_740_993n

beforeAll(async () => {
  node = await Anvil.start()
  const [alice, bob] = node.accounts as [`0x${string}`, `0x${string}`]
  const deployed = await node.deploy(token, [10n ** 30n])
  sent.deployToken = { ...deployed, status: true }
  const t = { abi: token.abi, address: deployed.address }
  const r = { abi: router.abi, address: (await node.deploy(router)).address }
  const n = { abi: noisy.abi, address: (await node.deploy(noisy)).address }
  registered = [
    { label: "Token", address: t.address, abi: Schema.decodeUnknownSync(Abi.Abi)(token.abi) },
    { label: "Router", address: r.address, abi: Schema.decodeUnknownSync(Abi.Abi)(router.abi) },
    { label: "Noisy", address: n.address, abi: Schema.decodeUnknownSync(Abi.Abi)(noisy.abi) }
  ]
  sent.approve = await node.send(t, "approve", [r.address, 10n ** 24n])
  sent.routeBig = await node.send(r, "route", [t.address, bob, 5000n])
  sent.routeSmall = await node.send(r, "route", [t.address, bob, 500n])
  sent.tryRoute = await node.send(r, "tryRoute", [t.address, bob, 10n ** 27n])
  sent.exact = await node.send(t, "transfer", [bob, beyond2to53])
  sent.above = await node.send(t, "transfer", [bob, beyond2to53 + 1n])
  sent.shrug = await node.send(r, "shrug", [n.address])
  sent.failing = await node.send(t, "transfer", [alice, 10n ** 29n], { from: bob, gas: 100_000 })
  await node.mine(5)
  sent.lastApprove = await node.send(t, "approve", [r.address, 1n])
}, 60_000)

afterAll(async () => {
  await node?.stop()
})

const reader = (url?: string, options: Partial<EvmRpc.Options> = {}) =>
  EvmRpc.make({ urls: new Map([[31337, url ?? node.url]]), retryBaseMillis: 1, ...options })

/** Every block of the node, read whole with traces. */
const allBlocks = async () => {
  const chain = reader()
  const head = await Effect.runPromise(chain.head(31337))
  const results = await Effect.runPromise(
    chain.blocks(
      31337,
      Array.from({ length: head + 1 }, (_, i) => i),
      { traces: true }
    )
  )
  return results.map((b) => {
    if (b._tag !== "Found") throw new Error(b.error.message)
    return b.data
  })
}

/** The hashes of the first transaction of each match of `source`. */
const matching = async (
  source: string,
  options: { readonly blockRange?: number; readonly head?: number; readonly literalDefs?: string } = {}
) => {
  const literalDefs = Effect.runSync(Rules.Literals.fromJson(options.literalDefs))
  const checked = Rules.Checker.check(source, { contracts: registered, literalDefs })
  if (!checked.ok) throw new Error(checked.problems.map((p) => p.message).join("; "))
  const facts = ChainFacts.fromBlocks(await allBlocks(), registered, {
    blockRange: options.blockRange ?? 0,
    ...(options.head === undefined ? {} : { head: options.head })
  })
  return Rules.Evaluator.evaluate(checked.rule.expr, facts).map((m) => ({
    hashes: Object.values(m.evidence.transactions).map((t) => t.hash),
    pending: m.pending,
    evidence: m.evidence
  }))
}
const names = (found: ReadonlyArray<{ hashes: ReadonlyArray<string> }>) =>
  found.map((m) => m.hashes.map((h) => Object.keys(sent).find((k) => sent[k]!.hash === h) ?? h).join("+"))

describe("rules over a real node's blocks", () => {
  it("sees an event emitted in an internal call, as the internal frame's", async () => {
    assert.deepStrictEqual(names(await matching("system.emitted(tx1.itx1.Token.E.Transfer)")), [
      "routeBig",
      "routeSmall"
    ])
    // Without a frame, any Transfer of the transaction (the top-level transfers too).
    assert.deepStrictEqual(names(await matching("system.emitted(tx1.Token.E.Transfer)")), [
      "deployToken",
      "routeBig",
      "routeSmall",
      "exact",
      "above"
    ])
    const [m] = await matching("system.emitted(tx1.itx1.Token.E.Transfer)")
    const occurrence = Object.values(m!.evidence.occurrences)[0]!
    assert.strictEqual((occurrence.args as Record<string, string>).value, "5000")
  })

  it("compares a decoded argument with a threshold, above and below", async () => {
    assert.deepStrictEqual(names(await matching("system.uintCompare(tx1.itx1.Token.E.Transfer.value, >, 1000)")), [
      "routeBig"
    ])
    assert.deepStrictEqual(names(await matching("system.uintCompare(tx1.itx1.Token.E.Transfer.value, <, 1000)")), [
      "routeSmall"
    ])
  })

  it("tells a reverted transaction from a reverted inner call inside a successful one", async () => {
    assert.strictEqual(sent.failing!.status, false)
    assert.deepStrictEqual(names(await matching("system.reverted(tx1.Token.F.transfer)")), ["failing"])
    assert.deepStrictEqual(names(await matching("system.reverted(tx1.itx1.Token.F.transferFrom)")), ["tryRoute"])
    assert.deepStrictEqual(
      names(await matching("system.reverted(tx1.itx*.Token.F.transferFrom) && !system.reverted(tx1)")),
      ["tryRoute"]
    )
    // The successful inner calls are not reverted.
    assert.deepStrictEqual(
      names(await matching("system.invoked(tx1.itx1.Token.F.transferFrom) && !system.reverted(tx1.itx1)")),
      ["routeBig", "routeSmall"]
    )
  })

  it("drops a log emitted under a frame that reverted", async () => {
    assert.deepStrictEqual(names(await matching("system.emitted(tx1.any.Noisy.E.Noise)")), [])
    assert.deepStrictEqual(names(await matching("system.reverted(tx1.itx1.Noisy.F.noisy)")), ["shrug"])
    assert.deepStrictEqual(names(await matching("system.emitted(tx1.Router.E.Routed)")).includes("shrug"), true)
  })

  it("binds two transactions within topLevelTxBlockRange, and not beyond it", async () => {
    const rule = "system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route)"
    assert.strictEqual(sent.routeBig!.block - sent.approve!.block, 1)
    assert.deepStrictEqual(names(await matching(rule, { blockRange: 1 })), ["approve+routeBig"])
    assert.deepStrictEqual(names(await matching(rule, { blockRange: 2 })), ["approve+routeBig", "approve+routeSmall"])
    assert.deepStrictEqual(names(await matching(rule, { blockRange: 0 })), [])
  })

  it("closes a forward negation only once its window is past", async () => {
    const rule = "system.invoked(tx1.Token.F.approve) && !system.invoked(tx2.Router.F.route)"
    // The first approve is followed by a route; the last is not (historical analysis: every window closed).
    assert.deepStrictEqual(names(await matching(rule, { blockRange: 3 })), ["lastApprove"])
    const head = await node.head()
    const live = await matching(rule, { blockRange: 3, head })
    assert.deepStrictEqual(
      live.map((m) => m.pending),
      [true],
      "the window after the last approve is still open"
    )
    assert.deepStrictEqual(
      (await matching(rule, { blockRange: 3, head: head + 3 })).map((m) => m.pending),
      [false]
    )
  })

  it("compares with a literalDefs number beyond 2^53 exactly", async () => {
    const options = { literalDefs: `{"limit": ${beyond2to53}}` }
    assert.deepStrictEqual(
      names(await matching("system.uintCompare(tx1.Token.E.Transfer.value, >, ${limit})", options)),
      ["deployToken", "above"]
    )
    assert.deepStrictEqual(
      names(await matching("system.uintCompare(tx1.Token.E.Transfer.value, ==, ${limit})", options)),
      ["exact"]
    )
  })
})

describe("historical scan in windows", () => {
  it("finds what one evaluation over every block finds, whatever the window, each match once", async () => {
    const rules = [
      ["system.uintCompare(tx1.Token.E.Transfer.value, >, 1000)", 0],
      ["system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route)", 2],
      ["system.invoked(tx1.Token.F.approve) && !system.invoked(tx2.Router.F.route)", 3],
      ["!system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route)", 1],
      ["system.emitted(tx1.Router.E.Routed) && system.emitted(tx2.Router.E.Routed)", 4]
    ] as const
    const head = await node.head()
    const numbers = Array.from({ length: head + 1 }, (_, i) => i)
    const chain = reader()
    for (const [source, blockRange] of rules) {
      const checked = Rules.Checker.check(source, { contracts: registered })
      if (!checked.ok) throw new Error(checked.problems[0]!.message)
      const whole = Rules.Evaluator.evaluate(
        checked.rule.expr,
        ChainFacts.fromBlocks(await allBlocks(), registered, { blockRange })
      ).map((m) => Object.values(m.evidence.transactions).map((t) => t.hash))
      assert.isAbove(whole.length, 0, source)
      for (const chunk of [1, 2, 3, 7]) {
        const found: Array<ReadonlyArray<string>> = []
        const outcome = await Effect.runPromise(
          Scan.scan({
            chainId: 31337,
            blocks: numbers,
            contracts: registered,
            rules: [{ index: 0, expr: checked.rule.expr, needsTraces: checked.rule.needsTraces }],
            blockRange,
            chunk,
            onMatch: (f) =>
              Effect.sync(() => void found.push(Object.values(f.evidence.transactions).map((t) => t.hash)))
          }).pipe(Effect.provideService(ChainData.ChainData, chain))
        )
        assert.strictEqual(outcome.blocks, head + 1)
        const sorted = (xs: ReadonlyArray<ReadonlyArray<string>>) => xs.map((x) => x.join("+")).sort()
        assert.deepStrictEqual(sorted(found), sorted(whole), `${source} in windows of ${chunk}`)
      }
    }
  })
})

/** A JSON-RPC proxy to the node that can refuse methods, answer HTTP errors first, or alter results. */
const proxy = async (behave: {
  readonly refuse?: ReadonlyArray<string>
  readonly failFirst?: ReadonlyArray<number>
  readonly alter?: (method: string, result: unknown) => unknown
}): Promise<{
  readonly url: string
  readonly requests: () => number
  /** The most JSON-RPC requests it had at once, received and not yet answered. */
  readonly busiest: () => number
  readonly close: () => Promise<void>
}> => {
  let requests = 0
  let open = 0
  let busiest = 0
  const server: Server = createServer((req, res) => {
    // Only JSON-RPC is proxied (the tests' fetch check also asks every origin for an OpenAPI document).
    if (req.method !== "POST") {
      res.writeHead(404).end()
      return
    }
    busiest = Math.max(busiest, ++open)
    res.on("finish", () => open--)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const status = behave.failFirst?.[requests]
      requests++
      if (status !== undefined) {
        res.writeHead(status).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as
        Array<{ id: number; method: string }> | { id: number; method: string }
      const calls = Array.isArray(body) ? body : [body]
      const forwarded = calls.filter((c) => !(behave.refuse ?? []).includes(c.method))
      const refused = calls
        .filter((c) => (behave.refuse ?? []).includes(c.method))
        .map((c) => ({
          jsonrpc: "2.0",
          id: c.id,
          error: { code: -32601, message: `the method ${c.method} does not exist/is not available` }
        }))
      const answer = async () =>
        forwarded.length === 0
          ? []
          : ((await (
              await fetch(node.url, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(forwarded)
              })
            ).json()) as Array<unknown>)
      void answer().then((answers) => {
        const methodOf = new Map(forwarded.map((c) => [c.id, c.method]))
        const altered = answers.map((a) => {
          const { id, result } = a as { id: number; result: unknown }
          return behave.alter === undefined ? a : { ...(a as object), result: behave.alter(methodOf.get(id)!, result) }
        })
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify([...altered, ...refused]))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    busiest: () => busiest,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

describe("the JSON-RPC reader", () => {
  it("reports a block the node does not have, per block, without failing the others", async () => {
    const head = await node.head()
    const results = await Effect.runPromise(reader().blocks(31337, [head, head + 50], { traces: false }))
    assert.deepStrictEqual(
      results.map((r) => r._tag),
      ["Found", "Missing"]
    )
    const missing = results[1]!
    assert.strictEqual(missing._tag === "Missing" && missing.error.reason, "NotFound")
  })

  it("reads receipts one by one from a node without eth_getBlockReceipts, and says when it has no traces", async () => {
    const p = await proxy({ refuse: ["eth_getBlockReceipts", "debug_traceBlockByNumber"] })
    try {
      const chain = reader(p.url)
      const [found] = await Effect.runPromise(chain.blocks(31337, [sent.routeBig!.block], { traces: false }))
      assert.strictEqual(found!._tag, "Found")
      if (found!._tag === "Found") assert.strictEqual(found!.data.receipts.length, 1)
      assert.strictEqual(await Effect.runPromise(chain.tracesAvailable(31337)), false)
      const error = await Effect.runPromise(Effect.flip(chain.blocks(31337, [sent.routeBig!.block], { traces: true })))
      assert.strictEqual(error.reason, "Unsupported")
      assert.match(error.message, /no call traces/)
      assert.strictEqual(await Effect.runPromise(reader().tracesAvailable(31337)), true)
    } finally {
      await p.close()
    }
  })

  it("reads of one chain share its request slots: two at once never ask the node more than inFlight at a time", async () => {
    const p = await proxy({})
    try {
      const chain = reader(p.url, { blocksPerBatch: 1, inFlight: 2 })
      const head = await node.head()
      const numbers = Array.from({ length: Math.min(head + 1, 8) }, (_, i) => i)
      const [a, b] = await Effect.runPromise(
        Effect.all([chain.blocks(31337, numbers, { traces: false }), chain.blocks(31337, numbers, { traces: false })], {
          concurrency: 2
        })
      )
      assert.deepStrictEqual(
        [...a!, ...b!].map((r) => r._tag),
        [...numbers, ...numbers].map(() => "Found")
      )
      assert.strictEqual(p.requests(), numbers.length * 2)
      // Each read alone may ask two at once; both together, unshared, would ask up to four.
      assert.isAtMost(p.busiest(), 2, "never more than two requests at once")
    } finally {
      await p.close()
    }
  })

  it("takes receipts of another version of a block for a missing block, to be read again", async () => {
    const p = await proxy({
      alter: (method, result) =>
        method === "eth_getBlockReceipts" && Array.isArray(result)
          ? result.map((r: Record<string, unknown>) => ({ ...r, blockHash: `0x${"ab".repeat(32)}` }))
          : result
    })
    try {
      const [read] = await Effect.runPromise(reader(p.url).blocks(31337, [sent.routeBig!.block], { traces: false }))
      assert.strictEqual(read!._tag, "Missing")
      if (read!._tag === "Missing") {
        assert.strictEqual(read!.error.reason, "Unavailable")
        assert.isTrue(read!.error.isRetryable)
        assert.strictEqual(
          read!.error.message,
          `block ${sent.routeBig!.block}: receipt 0 is not of this block's transaction 0 (the chain changed while the block was read)`
        )
      }
    } finally {
      await p.close()
    }
  })

  it("takes call traces of another version of a block for a missing block too", async () => {
    const p = await proxy({
      alter: (method, result) =>
        method === "debug_traceBlockByNumber" && Array.isArray(result)
          ? result.map((t: Record<string, unknown>) => ({ ...t, txHash: `0x${"cd".repeat(32)}` }))
          : result
    })
    try {
      const [read] = await Effect.runPromise(reader(p.url).blocks(31337, [sent.routeBig!.block], { traces: true }))
      assert.strictEqual(
        read!._tag === "Missing" && read!.error.message,
        `block ${sent.routeBig!.block}: trace 0 is not of this block's transaction 0 (the chain changed while the block was read)`
      )
    } finally {
      await p.close()
    }
  })

  it("refuses a malformed answer by its Schema, naming the field, instead of casting it", async () => {
    const p = await proxy({
      alter: (method, result) =>
        method === "eth_getBlockReceipts" && Array.isArray(result)
          ? result.map((r: Record<string, unknown>) => ({ ...r, logs: "none" }))
          : method === "eth_getBlockByNumber" && result !== null && typeof result === "object"
            ? (result as Record<string, unknown>).transactions === undefined ||
              ((result as Record<string, unknown>).transactions as Array<unknown>).every((t) => typeof t === "string")
              ? { ...(result as Record<string, unknown>), parentHash: 7 }
              : result
            : result
    })
    try {
      const chain = reader(p.url, { retries: 0 })
      const [read] = await Effect.runPromise(chain.blocks(31337, [sent.routeBig!.block], { traces: false }))
      assert.strictEqual(read!._tag, "Missing")
      if (read!._tag === "Missing") {
        assert.strictEqual(read!.error.reason, "Invalid")
        assert.match(read!.error.message, /the receipts are not receipts: .*logs/s)
      }
      const error = await Effect.runPromise(Effect.flip(chain.hashes(31337, [sent.routeBig!.block])))
      assert.strictEqual(error.reason, "Invalid")
      assert.match(error.message, /did not answer a header: .*parentHash/s)
    } finally {
      await p.close()
    }
  })

  it("times out a node that does not answer, and one that stops in the middle of its answer", async () => {
    for (const [stall, expected] of [
      ["headers", "the node did not answer within 200 ms"],
      ["body", "the node did not finish its answer within 200 ms"]
    ] as const) {
      const server = createServer((req, res) => {
        req.resume()
        if (stall === "body") {
          res.writeHead(200, { "content-type": "application/json" })
          res.write('[{"jsonrpc":"2.0",')
        }
      })
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const error = await Effect.runPromise(Effect.flip(reader(url, { timeoutMillis: 200, retries: 0 }).head(31337)))
        assert.deepStrictEqual([error.reason, error.message], ["Timeout", expected])
      } finally {
        server.closeAllConnections()
        await new Promise((done) => server.close(done))
      }
    }
  })

  it("retries HTTP 429 and 5xx, then answers", async () => {
    const p = await proxy({ failFirst: [429, 503] })
    try {
      assert.strictEqual(await Effect.runPromise(reader(p.url).head(31337)), await node.head())
      assert.strictEqual(p.requests(), 3)
    } finally {
      await p.close()
    }
  })

  it("classifies a node that keeps failing, one that is down, and a chain with no node", async () => {
    const p = await proxy({ failFirst: [429, 429, 429] })
    try {
      const limited = await Effect.runPromise(Effect.flip(reader(p.url, { retries: 2 }).head(31337)))
      assert.strictEqual(limited.reason, "RateLimited")
      assert.strictEqual(p.requests(), 3)
    } finally {
      await p.close()
    }
    const down = await Effect.runPromise(Effect.flip(reader(p.url, { retries: 0 }).head(31337)))
    assert.strictEqual(down.reason, "Unavailable")
    const none = await Effect.runPromise(Effect.flip(reader().head(1)))
    assert.strictEqual(none.reason, "NotConfigured")
    assert.match(none.message, /VIGIL_RPC_URL_1/)
    assert.instanceOf(none, ChainData.ChainDataError)
  })

  it("subscribes to new heads over a node's websocket; the stream fails when the connection drops", async () => {
    const subscriber = (n: Anvil.Anvil) => reader(n.url, { wsUrls: new Map([[31337, n.url.replace(/^http/, "ws")]]) })
    const head = await node.head()
    const announced = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const heads = yield* subscriber(node).newHeads(31337)
          const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(heads, 2)))
          yield* Effect.promise(() => node.mine(2))
          return yield* Fiber.join(fiber)
        })
      )
    )
    assert.deepStrictEqual(announced, [head + 1, head + 2])

    const other = await Anvil.start()
    const dropped = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const heads = yield* subscriber(other).newHeads(31337)
          yield* Effect.promise(() => other.stop())
          return yield* Effect.flip(Stream.runDrain(heads))
        })
      )
    )
    assert.strictEqual(dropped.reason, "Unavailable")
    assert.match(dropped.message, /^the websocket closed \(1006\)$/)

    const none = await Effect.runPromise(Effect.flip(Effect.scoped(reader().newHeads(31337))))
    assert.deepStrictEqual(
      [none.reason, none.message],
      ["NotConfigured", "no websocket URL is configured for chain 31337"]
    )
  })
})
