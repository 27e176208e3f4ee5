/**
 * The follower over the memory stores and a scripted chain, under the TestClock: no node, no sleeps. The chain is
 * mined, reorganised, served by a replica that lacks the newest blocks, and failing, while the follower is
 * restarted at any point; whatever the sequence, once the node is healthy again (and the chain has grown past every
 * block it showed) every transfer on the final chain is alerted exactly once and every alert of an orphaned block
 * is retracted (fast-check), beside golden runs.
 */
import { fc } from "@fast-check/vitest"
import { MemoryAdapter } from "@vigil/adapter-memory"
import {
  Abi,
  ApiKeyStore,
  Bots,
  ChainData,
  ContractStore,
  FollowLeases,
  FollowStore,
  Follower,
  Outbox,
  WebhookDispatcher
} from "@vigil/core"
import { Clock, Context, Effect, Exit, identity, Layer, References, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import { assert, describe, it } from "vitest"
import { transferEvent } from "@vigil/core-test/AbiFragments.ts"

const usdc = `0x${"a".repeat(40)}`
const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const word = (n: bigint | number) => `0x${BigInt(n).toString(16).padStart(64, "0")}`
const hex = (n: number) => `0x${n.toString(16)}`

const abi = Schema.decodeUnknownSync(Abi.Abi)([transferEvent])

interface ScriptedBlock {
  readonly number: number
  readonly hash: string
  readonly parentHash: string
  /** Hashes of its transactions, each a USDC transfer. */
  readonly transfers: ReadonlyArray<string>
}

/** A chain the test writes: mined, reorganised, lagging or failing on demand. */
class Scripted {
  blocks: Array<ScriptedBlock> = [{ number: 0, hash: word(1), parentHash: word(0), transfers: [] }]
  /** Every block ever shown, by hash. */
  readonly seen = new Map<string, ScriptedBlock>()
  private branch = 1
  /** When set, a replica behind the balancer answers: blocks above this number are missing. */
  lagAbove: number | undefined
  /** The replica behind answers only the hash lookups; the blocks come from an up-to-date one. */
  lagHashesOnly = false
  /** Calls left to fail as a node that does not answer. */
  failing = 0

  constructor() {
    this.seen.set(this.blocks[0]!.hash, this.blocks[0]!)
  }

  /** Mines one block with `transfers` transfers. */
  mine(transfers: number) {
    const parent = this.blocks.at(-1)!
    const number = parent.number + 1
    const id = this.branch * 1_000_000 + number
    const block = {
      number,
      hash: word(id * 16 + 1),
      parentHash: parent.hash,
      transfers: Array.from({ length: transfers }, (_, i) => word(id * 16 + 2 + i))
    }
    this.blocks.push(block)
    this.seen.set(block.hash, block)
  }

  /** Replaces the newest `depth` blocks by `count` new ones on another branch. */
  reorganise(depth: number, count: number, transfers: number) {
    const keep = Math.max(1, this.blocks.length - depth)
    this.blocks = this.blocks.slice(0, keep)
    this.branch++
    for (let i = 0; i < count; i++) this.mine(transfers)
  }

  private trouble(chainId: number, operation: string) {
    if (this.failing === 0) return undefined
    this.failing--
    return new ChainData.ChainDataError({ reason: "Unavailable", chainId, operation, message: "the node is down" })
  }

  private shown(n: number, lookup: "hashes" | "blocks") {
    const lagging = this.lagAbove !== undefined && (lookup === "hashes" || !this.lagHashesOnly)
    return lagging && n > this.lagAbove! ? undefined : this.blocks[n]
  }

  /** The node, as the follower sees it. */
  readonly service: ChainData.Both = identity<ChainData.Both>({
    storageAt: (chainId) => Effect.fail(unconfigured(chainId)),
    call: (chainId) => Effect.fail(unconfigured(chainId)),
    trouble: () => Effect.succeed(undefined),
    head: (chainId) => {
      const error = this.trouble(chainId, "head")
      return error === undefined ? Effect.succeed(this.blocks.length - 1) : Effect.fail(error)
    },
    newHeads: (chainId) => Effect.fail(unconfigured(chainId)),
    tracesAvailable: () => Effect.succeed(false),
    hashes: (chainId, numbers) => {
      const error = this.trouble(chainId, "hashes")
      if (error !== undefined) return Effect.fail(error)
      return Effect.succeed(
        numbers.map((n) => {
          const b = this.shown(n, "hashes")
          return b === undefined ? undefined : { number: b.number, hash: b.hash, parentHash: b.parentHash }
        })
      )
    },
    blocks: (chainId, numbers) => {
      const error = this.trouble(chainId, "blocks")
      if (error !== undefined) return Effect.fail(error)
      return Effect.succeed(
        numbers.map((n): ChainData.BlockResult => {
          const b = this.shown(n, "blocks")
          if (b === undefined)
            return {
              _tag: "Missing",
              number: n,
              error: new ChainData.ChainDataError({
                reason: "NotFound",
                chainId,
                operation: "blocks",
                message: `block ${n} not found`
              })
            }
          return { _tag: "Found", number: n, data: rpcBlock(b) }
        })
      )
    }
  })
}

function unconfigured(chainId: number) {
  return new ChainData.ChainDataError({
    reason: "NotConfigured",
    chainId,
    operation: "newHeads",
    message: `no websocket for chain ${chainId}`
  })
}

/** A block as `eth_getBlockByNumber` and its receipts would show it: each transfer of 1,000 from 0x01 to 0x02. */
const rpcBlock = (b: ScriptedBlock) => ({
  block: {
    number: hex(b.number),
    hash: b.hash,
    parentHash: b.parentHash,
    timestamp: hex(1_700_000_000 + b.number * 12),
    transactions: b.transfers.map((hash, i) => ({
      hash,
      from: `0x${"1".repeat(40)}`,
      to: usdc,
      value: "0x0",
      nonce: hex(i),
      input: "0x",
      gas: "0x5208",
      transactionIndex: hex(i)
    }))
  },
  receipts: b.transfers.map((hash, i) => ({
    transactionHash: hash,
    status: "0x1",
    gasUsed: "0x5208",
    logs: [{ address: usdc, topics: [transferTopic, word(1), word(2)], data: word(1_000), logIndex: hex(i) }]
  }))
})

const settings: Follower.Settings = {
  ...Follower.defaultSettings,
  pollMillis: 1_000,
  batch: 3,
  keep: 32,
  maxBackoffMillis: 4_000
}

type Operation =
  | { readonly kind: "mine"; readonly transfers: ReadonlyArray<number> }
  | { readonly kind: "reorganise"; readonly depth: number; readonly count: number; readonly transfers: number }
  | { readonly kind: "restart" }
  /** The instance dies without a word: its chain's lease is left to run out (with two instances). */
  | { readonly kind: "kill"; readonly instance: number }
  | { readonly kind: "lag"; readonly depth: number; readonly hashesOnly: boolean }
  | { readonly kind: "fail"; readonly calls: number }
  | { readonly kind: "wait"; readonly seconds: number }
  /** Switches on every bot created off (it watches from the block after the head then). */
  | { readonly kind: "activate" }
  /** The key's record is stored expired (now), or revoked: its bots must stop. */
  | { readonly kind: "lapse"; readonly key: string; readonly how: "expire" | "revoke" }

/** A bot of a run: its key and its rule (by default one bot of key `key` alerting on every USDC transfer). */
interface RunBot {
  readonly key: string
  readonly expressions: ReadonlyArray<string>
  /** Created switched off (until an `activate` operation). */
  readonly off?: boolean
  readonly topLevelTxBlockRange?: number
  /** The label its key registers USDC under (default "USDC"; the key's first bot says). */
  readonly label?: string
}

/**
 * Runs `operations` against a follower of chain 1 with `bots` (by default one alerting on every USDC transfer),
 * then lets it catch up on a healthy node; the chain and the alerts stored, by bot.
 */
const run = (
  operations: ReadonlyArray<Operation>,
  instances = 1,
  options: {
    readonly bots?: ReadonlyArray<RunBot>
    readonly limits?: Follower.Settings["limits"]
    /** Given: the node's block reads (`read F-L`) and the steps stored (`stored F-L`) are written to it in turn. */
    readonly trace?: Array<string>
  } = {}
) =>
  Effect.gen(function* () {
    const chain = new Scripted()
    const trace = options.trace
    const span = (numbers: ReadonlyArray<number>) => `${numbers[0]}-${numbers.at(-1)}`
    const node = ChainData.layerOf(
      trace === undefined
        ? chain.service
        : {
            ...chain.service,
            blocks: (chainId, numbers, read) =>
              Effect.andThen(
                Effect.sync(() => trace.push(`read ${span(numbers)}`)),
                chain.service.blocks(chainId, numbers, read)
              )
          }
    )
    const base = Layer.mergeAll(MemoryAdapter.layer, node, WebhookDispatcher.Wake.layer)
    const built = yield* Layer.build(Outbox.Outbox.layer.pipe(Layer.provideMerge(base)))
    // Both ports are one store, which the follower reads as one: traced, each is the same wrapped store.
    const traced = (log: Array<string>) => {
      const kept = { ...Context.get(built, FollowStore.FollowStore), ...Context.get(built, FollowStore.AlertLog) }
      const store: FollowStore.Both = {
        ...kept,
        advance: (chainId, expected, step) =>
          Effect.tap(kept.advance(chainId, expected, step), () =>
            Effect.sync(() => {
              if (step.blocks.length > 0) log.push(`stored ${span(step.blocks.map((b) => b.number))}`)
            })
          )
      }
      return built.pipe(Context.add(FollowStore.FollowStore, store), Context.add(FollowStore.AlertLog, store))
    }
    const stores = trace === undefined ? built : traced(trace)
    const services = Layer.succeedContext(stores)
    const contracts = Context.get(stores, ContractStore.ContractStore)
    const wanted = options.bots ?? [{ key: "key", expressions: ["system.emitted(tx1.USDC.E.Transfer)"] }]
    for (const key of new Set(wanted.map((b) => b.key)))
      yield* contracts.add({
        id: `usdc-${key}`,
        keyId: key,
        chainId: 1,
        address: usdc,
        label: wanted.find((b) => b.key === key)?.label ?? "USDC",
        abi,
        abiSource: "supplied",
        created: "2026-01-01T00:00:00.000Z"
      })
    const bots = Context.get(yield* Layer.build(Bots.Bots.layer.pipe(Layer.provide(services))), Bots.Bots)
    const created = yield* Effect.forEach(wanted, (b, i) =>
      bots.create(b.key, {
        fields: {
          botName: `bot${i}`,
          chainId: 1,
          watchRule: { expressions: [...b.expressions] },
          ...(b.off === true ? { active: false } : {}),
          ...(b.topLevelTxBlockRange === undefined ? {} : { options: { topLevelTxBlockRange: b.topLevelTxBlockRange } })
        }
      })
    )
    const bot = created[0]!
    const follow = { ...Context.get(stores, FollowStore.FollowStore), ...Context.get(stores, FollowStore.AlertLog) }
    const alertsOf = (b: (typeof created)[number]) =>
      Effect.gen(function* () {
        return [
          ...(yield* follow.alerts(b.keyId, b.id, { limit: 10_000, state: "active" })),
          ...(yield* follow.alerts(b.keyId, b.id, { limit: 10_000, state: "retracted" }))
        ]
      })
    // Instances share the stores, as processes share a database; one that is killed never releases its lease.
    const leases = Context.get(stores, FollowLeases.FollowLeases)
    const killed = new Set<string>()
    const shared = Layer.succeed(FollowLeases.FollowLeases)({
      ...leases,
      release: (chainId, holder) => (killed.has(holder) ? Effect.void : leases.release(chainId, holder))
    })
    let started = 0
    const start = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const instance = `i${started++}`
      const built = yield* Layer.buildWithScope(
        Follower.layer({
          ...settings,
          instance,
          ...(options.limits === undefined ? {} : { limits: options.limits })
        }).pipe(Layer.provide(shared), Layer.provide(services)),
        scope
      )
      return { scope, instance, follower: Context.get(built, Follower.Follower) }
    })
    const running = [yield* start]
    for (let i = 1; i < instances; i++) running.push(yield* start)
    const stop = (i: number) => Scope.close(running[i]!.scope, Exit.void)
    const wait = (seconds: number) =>
      Effect.gen(function* () {
        for (let i = 0; i < seconds; i++) yield* TestClock.adjust("1 second")
      })
    for (const op of operations) {
      switch (op.kind) {
        case "mine":
          for (const t of op.transfers) chain.mine(t)
          break
        case "reorganise":
          chain.reorganise(op.depth, op.count, op.transfers)
          break
        case "restart":
          yield* stop(0)
          running[0] = yield* start
          break
        case "kill": {
          const i = op.instance % running.length
          killed.add(running[i]!.instance)
          yield* stop(i)
          running[i] = yield* start
          break
        }
        case "lag":
          chain.lagAbove = Math.max(0, chain.blocks.length - 1 - op.depth)
          chain.lagHashesOnly = op.hashesOnly
          break
        case "fail":
          chain.failing = op.calls
          break
        case "wait":
          yield* wait(op.seconds)
          chain.lagAbove = undefined
          break
        case "activate":
          // Switching on reads the node's head: a failing node refuses it, as it would a client (tried again).
          for (const [i, b] of wanted.entries())
            for (
              let tries = 0;
              tries < 8 && b.off === true && !(yield* bots.get(b.key, created[i]!.id)).active;
              tries++
            )
              yield* Effect.ignore(bots.update(b.key, created[i]!.id, { fields: { active: true } }))
          break
        case "lapse": {
          const keys = Context.get(stores, ApiKeyStore.ApiKeyStore)
          const now = new Date(yield* Clock.currentTimeMillis).toISOString()
          yield* keys.insert({
            id: op.key,
            name: op.key,
            hash: "0".repeat(64),
            qps: 10,
            daily: 1_000,
            monthly: 10_000,
            createdAt: "2026-01-01T00:00:00.000Z",
            ...(op.how === "expire" ? { expiresAt: now } : {})
          })
          if (op.how === "revoke") yield* keys.revoke(op.key, now)
        }
      }
    }
    chain.lagAbove = undefined
    chain.failing = 0
    // Chains grow: the final one is mined past every block ever shown, so a branch shorter than the blocks
    // processed (waited for as a node behind until then) is seen to be a reorganisation.
    // And past the block range of every bot, so a forward negation's window closes on every transfer.
    const reach = Math.max(0, ...wanted.map((b) => b.topLevelTxBlockRange ?? 0))
    const highest = Math.max(...[...chain.seen.values()].map((b) => b.number)) + reach
    while (chain.blocks.length - 1 <= highest) chain.mine(0)
    const head = chain.blocks.at(-1)!
    for (let i = 0; i < 600; i++) {
      const cursor = yield* follow.cursor(1)
      if (cursor?.hash === head.hash) break
      yield* wait(1)
    }
    const cursor = yield* follow.cursor(1)
    const byBot = yield* Effect.forEach(created, (b) =>
      Effect.all({ bot: bots.get(b.keyId, b.id), alerts: alertsOf(b) })
    )
    const states = yield* Effect.forEach(running, (r) => r.follower.status)
    const held = yield* leases.leases()
    for (let i = 0; i < running.length; i++) yield* stop(i)
    return {
      chain,
      bot,
      cursor,
      alerts: byBot[0]!.alerts,
      byBot,
      states,
      leases: held,
      instances: running.map((r) => r.instance)
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(TestClock.layer()),
    // The follower's warnings (the node failing, a reorganisation) are what the runs are made of.
    Effect.provideService(References.MinimumLogLevel, "Error")
  )

/** What must hold after any run: the final chain's transfers alerted once each, the others retracted. */
const check = ({ chain, bot, cursor, alerts }: Effect.Success<ReturnType<typeof run>>) => {
  assert.strictEqual(cursor?.hash, chain.blocks.at(-1)!.hash, "the follower reached the head")
  const from = bot.watchingFrom!.blockNumber
  const onChain = new Set(chain.blocks.filter((b) => b.number >= from).flatMap((b) => b.transfers))
  const active = alerts.filter((a) => a.retractedAt === undefined)
  const activeTx = active.map((a) => a.transactions.tx1!)
  assert.deepStrictEqual([...activeTx].sort(), [...onChain].sort(), "each transfer on the final chain, once")
  for (const a of alerts.filter((a) => a.retractedAt !== undefined)) {
    assert.isFalse(
      chain.blocks.some((b) => b.hash === a.blockHash),
      `retracted ${a.id} is on the final chain`
    )
    assert.isTrue(chain.seen.has(a.blockHash))
  }
  for (const a of active) assert.strictEqual(chain.blocks[a.blockNumber]?.hash, a.blockHash)
  assert.strictEqual(new Set(alerts.map((a) => a.id)).size, alerts.length)
}

/** What must hold of every bot of a run that is not paused. */
const checkEvery = (result: Effect.Success<ReturnType<typeof run>>) => {
  for (const { bot, alerts } of result.byBot)
    if (bot.active && bot.watchingFrom !== undefined) check({ ...result, bot, alerts })
}

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("mine" as const),
    transfers: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 })
  }),
  fc.record({
    kind: fc.constant("reorganise" as const),
    depth: fc.integer({ min: 1, max: 4 }),
    count: fc.integer({ min: 1, max: 5 }),
    transfers: fc.integer({ min: 0, max: 2 })
  }),
  fc.constant({ kind: "restart" as const }),
  fc.record({ kind: fc.constant("lag" as const), depth: fc.integer({ min: 1, max: 3 }), hashesOnly: fc.boolean() }),
  fc.record({ kind: fc.constant("fail" as const), calls: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant("wait" as const), seconds: fc.integer({ min: 1, max: 4 }) })
)

/** The operations of two instances: any of one's, and either instance killed. */
const twoInstances: fc.Arbitrary<Operation> = fc.oneof(
  operation,
  fc.record({ kind: fc.constant("kill" as const), instance: fc.integer({ min: 0, max: 1 }) })
)

describe("Follower over a scripted chain", () => {
  it("alerts each transfer once while catching up in batches, across a restart", async () => {
    const result = await Effect.runPromise(
      run([
        { kind: "mine", transfers: [1, 0, 2, 1, 1] },
        { kind: "wait", seconds: 1 },
        { kind: "restart" },
        { kind: "mine", transfers: [1, 1] },
        { kind: "wait", seconds: 3 }
      ])
    )
    check(result)
    assert.strictEqual(result.alerts.length, 7)
    assert.isTrue(result.alerts.every((a) => a.retractedAt === undefined))
  })

  it("catching up, asks the node for a step's next two batches before it judges and stores the step", async () => {
    const trace: Array<string> = []
    const result = await Effect.runPromise(
      run(
        [
          { kind: "wait", seconds: 1 },
          { kind: "mine", transfers: Array.from({ length: 12 }, () => 1) },
          { kind: "wait", seconds: 1 }
        ],
        1,
        { trace }
      )
    )
    check(result)
    // The first step sets the cursor at block 0; the catch-up's steps then take 3 blocks each, to block 12. Each
    // but the last asked for the next 3 blocks, and the 3 after those when the head is not reached, before it was
    // stored; and each batch was asked for once.
    for (const last of [3, 6, 9]) {
      const stored = trace.indexOf(`stored ${last - 2}-${last}`)
      assert.isAbove(stored, -1, `blocks ${last - 2} to ${last} stored in one step: ${trace.join("; ")}`)
      for (const first of [last + 1, last + 4].filter((n) => n < 12)) {
        const next = trace.indexOf(`read ${first}-${first + 2}`)
        assert.isAbove(next, -1, `blocks ${first} to ${first + 2} read: ${trace.join("; ")}`)
        assert.isBelow(
          next,
          stored,
          `blocks ${first} to ${first + 2} read before the step to ${last} is stored: ${trace.join("; ")}`
        )
      }
    }
    for (const first of [1, 4, 7, 10])
      assert.strictEqual(
        trace.filter((t) => t === `read ${first}-${first + 2}`).length,
        1,
        `blocks ${first} to ${first + 2} read once: ${trace.join("; ")}`
      )
  })

  it("retracts the alerts of a reorganised block and alerts the new branch's transfers", async () => {
    const result = await Effect.runPromise(
      run([
        { kind: "mine", transfers: [1, 1, 1] },
        { kind: "wait", seconds: 3 },
        { kind: "reorganise", depth: 2, count: 3, transfers: 1 },
        { kind: "wait", seconds: 3 }
      ])
    )
    check(result)
    assert.strictEqual(result.alerts.filter((a) => a.retractedAt !== undefined).length, 2)
    assert.strictEqual(result.alerts.filter((a) => a.retractedAt === undefined).length, 4)
  })

  it("waits for a replica that lacks the newest blocks instead of retracting on its word", async () => {
    const result = await Effect.runPromise(
      run([
        { kind: "mine", transfers: [1, 1] },
        { kind: "wait", seconds: 2 },
        { kind: "lag", depth: 1, hashesOnly: false },
        { kind: "wait", seconds: 1 },
        { kind: "mine", transfers: [1] },
        { kind: "fail", calls: 2 },
        { kind: "wait", seconds: 4 }
      ])
    )
    check(result)
    assert.isTrue(result.alerts.every((a) => a.retractedAt === undefined))
  })

  it("checks a reorganisation against a replica behind without retracting what it merely lacks", async () => {
    const result = await Effect.runPromise(
      run([
        { kind: "mine", transfers: [1, 1, 1] },
        { kind: "wait", seconds: 3 },
        { kind: "reorganise", depth: 1, count: 2, transfers: 1 },
        { kind: "lag", depth: 3, hashesOnly: true },
        { kind: "wait", seconds: 2 }
      ])
    )
    check(result)
    assert.strictEqual(result.alerts.filter((a) => a.retractedAt !== undefined).length, 1)
  })

  it("with two instances one follows and the other stands by, naming the holder; killed, it is taken over", async () => {
    const result = await Effect.runPromise(
      run(
        [
          { kind: "mine", transfers: [1, 1] },
          { kind: "wait", seconds: 2 },
          { kind: "kill", instance: 0 },
          { kind: "mine", transfers: [1, 0, 1] },
          { kind: "wait", seconds: 1 }
        ],
        2
      )
    )
    check(result)
    assert.strictEqual(result.alerts.length, 4)
    // i0 was killed holding the chain; once its lease ran out another instance took the chain over (i1, or i2:
    // i0 restarted), and the other stands by naming it.
    assert.deepStrictEqual(result.instances, ["i2", "i1"])
    const [lease] = result.leases
    assert.deepStrictEqual([result.leases.length, lease?.chainId, lease?.term], [1, 1, 2])
    assert.include(["i1", "i2"], lease!.holder)
    const states = result.states.map((s) => s[0]!)
    const holding = states[result.instances.indexOf(lease!.holder)]!
    const standing = states[1 - result.instances.indexOf(lease!.holder)]!
    assert.deepStrictEqual([holding.state, holding.holder], ["following", lease!.holder])
    assert.deepStrictEqual([standing.state, standing.holder], ["standby", lease!.holder])
    // As it last looked (once a second; the holder renews as often): at most one renewal behind.
    const until = Date.parse(standing.holderUntil!)
    const expires = Date.parse(lease!.expiresAt)
    assert.isTrue(until <= expires && until >= expires - 1_000, `${standing.holderUntil} vs ${lease!.expiresAt}`)
  })

  it("with two instances, either killed at any point, alerts every transfer of the final chain exactly once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(twoInstances, { minLength: 1, maxLength: 12 }), async (operations) => {
        const result = await Effect.runPromise(run(operations, 2))
        check(result)
        assert.strictEqual(result.leases.length, 1)
        assert.strictEqual(
          result.states.filter((s) => s[0]?.state !== "standby").length,
          1,
          "one instance follows the chain"
        )
      }),
      { numRuns: 100 }
    )
  })

  it("alerts every transfer of the final chain exactly once and retracts every orphan, whatever happens", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
        check(await Effect.runPromise(run(operations)))
      }),
      { numRuns: 200 }
    )
  })

  // Three transfers a block: a bot alerting on each tries 6 bindings a block (the transaction and its event).
  const everyTransfer = ["system.emitted(tx1.USDC.E.Transfer)"]
  const tight = { bindingsPerStep: 20, matchesPerBlock: 100 }
  /** A step of one block of three transfers, then one of two such blocks. */
  const twoSteps: ReadonlyArray<Operation> = [
    { kind: "wait", seconds: 1 },
    { kind: "mine", transfers: [3] },
    { kind: "wait", seconds: 1 },
    { kind: "mine", transfers: [3, 3] },
    { kind: "wait", seconds: 2 }
  ]

  it("a key past its share of a step: its other bots wait and catch up, missing nothing; another key's bot goes on", async () => {
    const result = await Effect.runPromise(
      run(twoSteps, 1, {
        // Key A's five bots need 30 bindings a block, its share is 20 a block; key B's one bot needs 6.
        bots: [
          ...Array.from({ length: 5 }, () => ({ key: "a", expressions: everyTransfer })),
          { key: "b", expressions: everyTransfer }
        ],
        limits: tight
      })
    )
    checkEvery(result)
    assert.isTrue(
      result.byBot.every((b) => b.bot.active && b.bot.paused === undefined),
      "none paused"
    )
    assert.deepStrictEqual(
      result.byBot.map((b) => b.alerts.length),
      [9, 9, 9, 9, 9, 9]
    )
    // Key A's fourth and fifth bots waited at each of the two steps (one block, then two), and caught up.
    assert.strictEqual(result.states[0]![0]!.deferred, 4)
  })

  it("bots that visit different transactions, judged out of their own order past their key's share: each alerts every transfer once", async () => {
    // Under a disjunction the occurrence does not narrow the transactions tried: a bot with this rule visits every
    // transaction, one with `everyTransfer` those with a USDC transfer. A step judges the two of the first kind
    // together (before the second kind, unlike the bots' own order); the key's share leaves one bot for later.
    const anyTransaction = ["system.emitted(tx1.USDC.E.Transfer) || false"]
    const result = await Effect.runPromise(
      run(twoSteps, 1, {
        bots: [everyTransfer, anyTransaction, everyTransfer, anyTransaction].map((expressions) => ({
          key: "a",
          expressions
        })),
        limits: tight
      })
    )
    checkEvery(result)
    assert.deepStrictEqual(
      result.byBot.map((b) => b.alerts.length),
      [9, 9, 9, 9]
    )
    assert.isAbove(result.states[0]![0]!.deferred, 0, "a bot waited for a later step")
  })

  it("keys that register the same contract share its decoding only under the same label: each key's bots alert under their own", async () => {
    const result = await Effect.runPromise(
      run(
        [
          { kind: "wait", seconds: 1 },
          { kind: "mine", transfers: [2] },
          { kind: "wait", seconds: 1 },
          { kind: "mine", transfers: [1, 2] },
          { kind: "wait", seconds: 2 }
        ],
        1,
        {
          bots: [
            { key: "a", expressions: everyTransfer },
            { key: "b", expressions: everyTransfer },
            { key: "c", label: "Coin", expressions: ["system.emitted(tx1.Coin.E.Transfer)"] },
            { key: "d", label: "Coin", expressions: ["system.emitted(tx1.Coin.E.Transfer)"] }
          ]
        }
      )
    )
    checkEvery(result)
    assert.deepStrictEqual(
      result.byBot.map((b) => b.alerts.length),
      [5, 5, 5, 5]
    )
  })

  it("with keys past their shares, and anything happening, every bot alerts every transfer of the final chain exactly once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), async (operations) => {
        const result = await Effect.runPromise(
          run(operations, 1, {
            bots: [
              ...Array.from({ length: 4 }, () => ({ key: "a", expressions: everyTransfer })),
              { key: "b", expressions: everyTransfer },
              { key: "b", expressions: everyTransfer }
            ],
            limits: tight
          })
        )
        checkEvery(result)
        assert.isTrue(
          result.byBot.every((b) => b.bot.active),
          "none paused"
        )
      }),
      { numRuns: 60 }
    )
  })

  it("bots switched on later, reaching further back than the window kept, alert every transfer exactly once, whatever happens", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { maxLength: 8 }),
        fc.array(operation, { maxLength: 6 }),
        async (before, after) => {
          const result = await Effect.runPromise(
            run(
              [
                ...before,
                { kind: "mine", transfers: [1] },
                { kind: "wait", seconds: 1 },
                // Switched on while the follower keeps a window of no blocks (the first bot reaches none).
                { kind: "activate" },
                { kind: "mine", transfers: [1] },
                { kind: "wait", seconds: 1 },
                ...after,
                { kind: "mine", transfers: [1] },
                { kind: "wait", seconds: 2 }
              ],
              1,
              {
                bots: [
                  { key: "a", expressions: everyTransfer },
                  // Every transfer with no transfer of more than 1,000,000 after it within 2 blocks (there are
                  // none): alerted once its window closes; it reaches 2 blocks back, where the first bot reaches none.
                  {
                    key: "b",
                    expressions: [
                      "system.emitted(tx1.USDC.E.Transfer) && !system.uintCompare(tx2.USDC.E.Transfer.value, >, 1000000)"
                    ],
                    topLevelTxBlockRange: 2,
                    off: true
                  }
                ]
              }
            )
          )
          checkEvery(result)
          assert.isTrue(result.byBot[1]!.bot.active, "switched on")
        }
      ),
      { numRuns: 60 }
    )
  })

  it("a bot over its bounds is paused with its reason, stored first: after a restart it is not run, and the others go on", async () => {
    const result = await Effect.runPromise(
      run(
        [
          { kind: "mine", transfers: [2, 2] },
          { kind: "wait", seconds: 2 },
          { kind: "restart" },
          { kind: "mine", transfers: [2] },
          { kind: "wait", seconds: 2 }
        ],
        1,
        {
          bots: [
            { key: "a", expressions: everyTransfer },
            // Every pair of transfers from one sender with no transfer after them: each pair searches the window.
            {
              key: "a",
              expressions: [
                "system.emitted(tx1.USDC.E.Transfer) && system.addressCompare(tx2.from, ==, tx1.from) && system.emitted(tx2.USDC.E.Transfer) && !system.emitted(tx3.USDC.E.Transfer)"
              ]
            }
          ],
          limits: { bindingsPerStep: 30, matchesPerBlock: 100 }
        }
      )
    )
    checkEvery(result)
    const [plain, heavy] = result.byBot
    assert.strictEqual(plain!.alerts.length, 6)
    assert.isFalse(heavy!.bot.active)
    assert.match(
      heavy!.bot.paused!.reason,
      /^its rules tried more than 30 bindings in one step, at block \d+: they match too widely/
    )
    assert.strictEqual(heavy!.alerts.length, 0)
  })

  it("a key revoked or expired stops its bots: paused with the reason, stored, whichever instance follows", async () => {
    const result = await Effect.runPromise(
      run(
        [
          { kind: "mine", transfers: [1, 1] },
          { kind: "wait", seconds: 3 },
          { kind: "lapse", key: "a", how: "expire" },
          { kind: "mine", transfers: [1] },
          { kind: "wait", seconds: 3 },
          { kind: "lapse", key: "b", how: "revoke" },
          { kind: "kill", instance: 0 },
          { kind: "mine", transfers: [1] },
          { kind: "wait", seconds: 3 }
        ],
        2,
        { bots: ["a", "b", "c"].map((key) => ({ key, expressions: everyTransfer })) }
      )
    )
    const [a, b, c] = result.byBot
    assert.isFalse(a!.bot.active)
    assert.match(a!.bot.paused!.reason, /^its API key a expired at \d{4}-\d\d-\d\dT/)
    assert.isUndefined(a!.bot.paused!.blockNumber)
    assert.strictEqual(a!.alerts.length, 2, "alerted until its key expired, and no more")
    assert.isFalse(b!.bot.active)
    assert.match(b!.bot.paused!.reason, /^its API key b was revoked at \d{4}-\d\d-\d\dT/)
    assert.strictEqual(b!.alerts.length, 3)
    // Another key's bot goes on, every transfer once.
    checkEvery(result)
    assert.isTrue(c!.bot.active)
    assert.strictEqual(c!.alerts.length, 4)
  })
})
