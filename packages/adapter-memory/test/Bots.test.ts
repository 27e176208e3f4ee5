/**
 * Bots over the memory stores: creation with defaults and required fields, rules checked against the key's
 * contracts on the bot's chain (positioned problems), updates of any subset, revisions, exact literal
 * definitions, and the audit that reports bots a removed contract broke.
 */
import { assert, describe, it } from "@effect/vitest"
import { MemoryAdapter } from "@vigil/adapter-memory"
import { Abi, Bots, ChainData, ContractStore, Rules, WebhookStore } from "@vigil/core"
import { Effect, identity, Layer, Schema } from "effect"
import { transferEvent } from "@vigil/core-test/AbiFragments.ts"

const abi = Schema.decodeUnknownSync(Abi.Abi)([transferEvent])

/** No node is configured for any chain: bots are stored without `watchingFrom` (tested with a node on anvil). */
const noNodes = ChainData.layerOf(
  identity<ChainData.Both>({
    storageAt: (chainId) => Effect.fail(unconfigured(chainId)),
    call: (chainId) => Effect.fail(unconfigured(chainId)),
    trouble: () => Effect.succeed(undefined),
    head: (chainId) => Effect.fail(unconfigured(chainId)),
    newHeads: (chainId) => Effect.fail(unconfigured(chainId)),
    hashes: (chainId) => Effect.fail(unconfigured(chainId)),
    tracesAvailable: (chainId) => Effect.fail(unconfigured(chainId)),
    blocks: (chainId) => Effect.fail(unconfigured(chainId))
  })
)
function unconfigured(chainId: number) {
  return new ChainData.ChainDataError({
    reason: "NotConfigured",
    chainId,
    operation: "head",
    message: `no node is configured for chain ${chainId}`
  })
}

const layer = Bots.Bots.layer.pipe(Layer.provideMerge(Layer.merge(MemoryAdapter.layer, noNodes)))

/** The key's USDC contract on chain 1 (id "usdc"). */
const registerUsdc = (keyId = "key-a") =>
  Effect.flatMap(Effect.service(ContractStore.ContractStore), (s) =>
    s.add({
      id: `usdc-${keyId}`,
      keyId,
      chainId: 1,
      address: `0x${"a".repeat(40)}`,
      label: "USDC",
      abi,
      abiSource: "supplied",
      created: "2026-01-01T00:00:00.000Z"
    })
  )

const rule = "system.uintCompare(tx1.USDC.E.Transfer.value, >, ${max})"
const body = (fields: unknown, literalDefs?: string): Bots.BotRequest<unknown> =>
  literalDefs === undefined ? { fields } : { fields, literalDefs }

/** The service as a host reaches it: each request's fields decoded by core's Schemas first, as the HTTP API does. */
const decoding = Effect.map(Bots.Bots, (bots) => ({
  ...bots,
  create: (keyId: string, request: Bots.BotRequest<unknown>) =>
    Effect.flatMap(Bots.decodeCreate(request.fields), (fields) => bots.create(keyId, { ...request, fields })),
  update: (keyId: string, id: string, request: Bots.BotRequest<unknown>) =>
    Effect.flatMap(Bots.decodeUpdate(request.fields), (fields) => bots.update(keyId, id, { ...request, fields }))
}))

describe("Bots", () => {
  it.effect("creates a bot with its defaults, its rules checked against the key's contracts", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      const bots = yield* decoding
      const text = '{"max": 1e+27}'
      const bot = yield* bots.create(
        "key-a",
        body({ botName: "whales", chainId: 1, watchRule: { expressions: [rule] }, options: { literalDefs: {} } }, text)
      )
      assert.match(bot.id, /^bot_\d+_[a-z0-9]{9}$/)
      assert.strictEqual(bot.active, true)
      assert.strictEqual(bot.severity, "Medium")
      assert.strictEqual(bot.watchRule.watchRuleType, "advanced")
      assert.strictEqual(bot.options.topLevelTxBlockRange, 100)
      assert.deepStrictEqual(bot.notifications, [])
      assert.strictEqual(bot.revision, 1)
      // The literal definitions are kept as their text: 1e+27 stays exactly 10^27.
      assert.strictEqual(bot.options.literalDefs, text)
      const defs = yield* Rules.Literals.fromJson(bot.options.literalDefs!)
      assert.strictEqual(Rules.Literals.asInteger(defs.get("max")!, false), 10n ** 27n)
      assert.deepStrictEqual(yield* bots.get("key-a", bot.id), bot)
    }).pipe(Effect.provide(layer))
  )

  it.effect("refuses a missing or wrong field by name, and rules that do not check, with their positions", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      // Another key's contract of the same label does not count for key-b... nor key-a's for key-b.
      const bots = yield* decoding
      const good = { botName: "b", chainId: 1, watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } }
      const cases: Array<readonly [Record<string, unknown>, string]> = [
        [{ ...good, botName: undefined }, "botName"],
        [{ ...good, chainId: -1 }, "chainId"],
        [{ ...good, watchRule: { expressions: [] } }, "watchRule.expressions"],
        [{ ...good, watchRule: { watchRuleType: "clever", expressions: ["x"] } }, "watchRule.watchRuleType"],
        [{ ...good, severity: "Urgent" }, "severity"],
        [{ ...good, active: "yes" }, "active"],
        [{ ...good, options: { topLevelTxBlockRange: 10_001 } }, "options.topLevelTxBlockRange"],
        [{ ...good, options: { literalDefs: [1] } }, "options.literalDefs"],
        [{ ...good, notifications: [1] }, "notifications.0"],
        [{ ...good, botName: "whales\r\n[Critical] all clear" }, "botName"],
        [{ ...good, botName: "tab\there" }, "botName"],
        [{ ...good, botVersion: "1\u2028" }, "botVersion"],
        // Invisible characters that change how a name reads: a right-to-left override, other bidirectional
        // controls, zero-width characters.
        [{ ...good, botName: "usdc\u202Etfel" }, "botName"],
        [{ ...good, botName: "a\u2066b\u2069" }, "botName"],
        [{ ...good, botName: "a\u200Fb" }, "botName"],
        [{ ...good, botName: "pay\u200Bpal" }, "botName"],
        [{ ...good, botName: "\uFEFFwhales" }, "botName"],
        [{ ...good, botDescription: "x\u2060y" }, "botDescription"]
      ]
      for (const [fields, field] of cases) {
        const error = yield* Effect.flip(bots.create("key-a", body(fields)))
        assert.strictEqual(error._tag === "InvalidBot" && error.field, field, JSON.stringify(fields))
      }
      // Whatever is wrong with a field, the one message that says what it must be.
      const messages: Array<readonly [unknown, string, string]> = [
        [{ chainId: 1, watchRule: good.watchRule }, "botName", "is required"],
        [{ ...good, chainId: "one" }, "chainId", "must be a positive whole number"],
        [{ ...good, chainId: 1.5 }, "chainId", "must be a positive whole number"],
        [{ ...good, botName: " " }, "botName", "must be a non-empty string of at most 200 characters"],
        [
          { ...good, botName: "a\nb" },
          "botName",
          "must not contain control characters (line breaks, tabs, escapes) or invisible ones (bidirectional controls, zero-width characters)"
        ],
        [
          { ...good, botName: "\u202Ewhales" },
          "botName",
          "must not contain control characters (line breaks, tabs, escapes) or invisible ones (bidirectional controls, zero-width characters)"
        ],
        [{ ...good, watchRule: {} }, "watchRule.expressions", "must be 1 to 20 rule expressions (strings)"],
        [{ ...good, watchRule: "x" }, "watchRule", "must be an object with expressions"],
        [{ ...good, options: [] }, "options", "must be an object"],
        [
          { ...good, options: { alertThreshold: { count: 0, windowSeconds: 60 } } },
          "options.alertThreshold.count",
          "must be {count: 1 to 1000, windowSeconds: 1 to 604800}"
        ],
        [
          { ...good, options: { ruleScope: { contractName: "USDC" } } },
          "options.ruleScope.groupId",
          "must be {contractName, groupId, member}"
        ],
        [{ ...good, botDescription: null }, "botDescription", "must be a string"],
        [[good], "body", "must be an object of bot fields"]
      ]
      for (const [fields, field, message] of messages) {
        const error = yield* Effect.flip(bots.create("key-a", body(fields)))
        assert.deepStrictEqual(
          error._tag === "InvalidBot" && { field: error.field, message: error.message },
          { field, message },
          JSON.stringify(fields)
        )
      }
      const wrong = yield* Effect.flip(
        bots.create(
          "key-a",
          body({
            ...good,
            watchRule: {
              expressions: ["system.emitted(tx1.USDC.E.Transfer)", "system.emitted(tx1.USDC.E.Transfr)"]
            }
          })
        )
      )
      assert.strictEqual(wrong._tag, "InvalidBot")
      if (wrong._tag === "InvalidBot") {
        assert.strictEqual(wrong.field, "watchRule.expressions")
        assert.strictEqual(wrong.problems?.[0]?.expression, 1)
        assert.strictEqual(wrong.problems?.[0]?.offset, "system.emitted(tx1.USDC.E.".length)
        assert.include(wrong.problems?.[0]?.candidates ?? [], "Transfer")
      }
      // A simple rule may not use what only advanced rules have.
      const simple = yield* Effect.flip(
        bots.create(
          "key-a",
          body({
            ...good,
            watchRule: { watchRuleType: "simple", expressions: ["!system.emitted(tx1.USDC.E.Transfer)"] }
          })
        )
      )
      assert.strictEqual(simple._tag === "InvalidBot" && simple.field, "watchRule.expressions")
      // key-b has no USDC: the same rule does not check for it.
      const other = yield* Effect.flip(bots.create("key-b", body(good)))
      assert.strictEqual(other._tag === "InvalidBot" && other.field, "watchRule.expressions")
      assert.deepStrictEqual(yield* bots.list("key-a"), [], "nothing refused was stored")
    }).pipe(Effect.provide(layer))
  )

  it.effect("updates any subset, keeps the chain, raises the revision, and hides other keys' bots", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      const bots = yield* decoding
      const bot = yield* bots.create(
        "key-a",
        body({ botName: "a", chainId: 1, watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } })
      )
      const updated = yield* bots.update("key-a", bot.id, body({ severity: "Critical", active: false }))
      assert.strictEqual(updated.severity, "Critical")
      assert.strictEqual(updated.active, false)
      assert.strictEqual(updated.botName, "a")
      assert.deepStrictEqual(updated.watchRule, bot.watchRule)
      assert.strictEqual(updated.revision, 2)
      assert.strictEqual(updated.created, bot.created)
      const moved = yield* Effect.flip(bots.update("key-a", bot.id, body({ chainId: 10 })))
      assert.strictEqual(moved._tag === "InvalidBot" && moved.field, "chainId")
      assert.strictEqual((yield* bots.update("key-a", bot.id, body({ chainId: 1, botName: "b" }))).botName, "b")
      assert.strictEqual((yield* Effect.flip(bots.get("key-b", bot.id)))._tag, "BotNotFound")
      assert.strictEqual((yield* Effect.flip(bots.update("key-b", bot.id, body({ active: true }))))._tag, "BotNotFound")
      assert.strictEqual((yield* Effect.flip(bots.remove("key-b", bot.id)))._tag, "BotNotFound")
      yield* bots.remove("key-a", bot.id)
      assert.deepStrictEqual(yield* bots.list("key-a"), [])
    }).pipe(Effect.provide(layer))
  )

  it.effect("reports the bots a removed contract broke", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      const bots = yield* decoding
      const bot = yield* bots.create(
        "key-a",
        body({ botName: "a", chainId: 1, watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } })
      )
      assert.deepStrictEqual(yield* bots.audit("key-a"), [])
      assert.deepStrictEqual(
        (yield* bots.audit("key-a", { without: "usdc-key-a" })).map((b) => b.bot.id),
        [bot.id],
        "what removing it would break"
      )
      assert.deepStrictEqual(yield* bots.audit("key-a", { without: "another" }), [])
      yield* Effect.flatMap(Effect.service(ContractStore.ContractStore), (s) => s.remove("key-a", "usdc-key-a"))
      const broken = yield* bots.audit("key-a", { chainId: 1 })
      assert.deepStrictEqual(
        broken.map((b) => b.bot.id),
        [bot.id]
      )
      assert.match(broken[0]!.problems[0]!.message, /USDC/)
      // A broken bot can be switched off, but not changed otherwise until its rules check again.
      assert.strictEqual((yield* bots.update("key-a", bot.id, body({ active: false }))).active, false)
      const renamed = yield* Effect.flip(bots.update("key-a", bot.id, body({ active: true })))
      assert.strictEqual(renamed._tag === "InvalidBot" && renamed.field, "watchRule.expressions")
    }).pipe(Effect.provide(layer))
  )

  it.effect("bounds what one key may hold: 100 bots, 64 placeholders of at most 16,384 characters", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      const bots = yield* decoding
      const good = { botName: "b", chainId: 1, watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } }
      const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, i]))
      const tooMany = yield* Effect.flip(bots.create("key-a", body({ ...good, options: { literalDefs: many } })))
      assert.strictEqual(tooMany._tag === "InvalidBot" && tooMany.message, "must have at most 64 placeholders")
      const long = { text: "x".repeat(16_400) }
      const tooLong = yield* Effect.flip(bots.create("key-a", body({ ...good, options: { literalDefs: long } })))
      assert.strictEqual(tooLong._tag === "InvalidBot" && tooLong.field, "options.literalDefs")
      for (let i = 0; i < Bots.limits.maxPerKey; i++) yield* bots.create("key-a", body({ ...good, botName: `b${i}` }))
      const over = yield* Effect.flip(bots.create("key-a", body(good)))
      assert.strictEqual(over._tag, "BotLimitReached")
      assert.strictEqual(over.message, "the key has 100 bots, the most it may have; delete one first")
      assert.lengthOf(yield* bots.list("key-a"), 100, "nothing more was stored")
    }).pipe(Effect.provide(layer))
  )

  it.effect("a channel no bot sends to any more has its pending messages parked: dead-lettered with the reason", () =>
    Effect.gen(function* () {
      yield* registerUsdc()
      const outbox = { ...(yield* WebhookStore.WebhookStore), ...(yield* WebhookStore.Destinations) }
      const channel = (id: string): WebhookStore.Webhook => ({
        id,
        keyId: "key-a",
        url: `https://chat.example.com/${id}`,
        secret: "",
        created: "2026-11-25T00:00:00.000Z",
        deliveryCount: 0,
        channel: { type: "slack", name: id }
      })
      yield* outbox.register(channel("nc_kept"), 20)
      yield* outbox.register(channel("nc_dropped"), 20)
      const pending = (id: string, webhookId: string): WebhookStore.Delivery => ({
        id,
        webhookId,
        keyId: "key-a",
        correlationId: `al_${id}`,
        body: "{}",
        attempts: 1,
        nextAttemptAt: 0,
        status: "pending"
      })
      yield* outbox.enqueue([pending("m1", "nc_dropped"), pending("m2", "nc_kept")])
      const bots = yield* decoding
      const rules = { watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } }
      const one = yield* bots.create(
        "key-a",
        body({ botName: "one", chainId: 1, ...rules, notifications: ["nc_kept", "nc_dropped"] })
      )
      yield* bots.create("key-a", body({ botName: "two", chainId: 1, ...rules, notifications: ["nc_kept"] }))
      yield* bots.update("key-a", one.id, body({ notifications: ["nc_kept"] }))
      const [m1, m2] = yield* outbox.deliveriesOf(["al_m1", "al_m2"])
      assert.deepStrictEqual(
        [m1?.status, m1?.lastError?.startsWith("parked: no bot sends to this channel any more"), m2?.status],
        ["dead", true, "pending"],
        "the dropped channel's message is parked; the one still used is not"
      )
      assert.strictEqual(yield* outbox.redeliver("key-a", "nc_dropped", 0, "channels"), 1, "and can be sent again")
    }).pipe(Effect.provide(layer))
  )
})
