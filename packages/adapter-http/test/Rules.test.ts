/** `POST /v1/rules/check` on the real server: a rule checked against the key's contracts as a bot would take it. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"
import { transferEvent } from "@vigil/core-test/AbiFragments.ts"

const { call, issue } = TestServer

const transfer = transferEvent
const usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"

describe("POST /v1/rules/check", () => {
  it.live("answers the normal form of a rule that checks, and each problem with its offset and candidates", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const headers = { "x-api-key": key }
      const created = yield* call("POST", "/v1/contracts", {
        headers,
        json: { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] }
      })
      assert.strictEqual(created.status, 201, created.text)

      const good = yield* call("POST", "/v1/rules/check", {
        headers,
        json: {
          chainId: 1,
          expressions: ["system.uintCompare(tx1.USDC.E.Transfer.value, >, ${big})"],
          options: { literalDefs: { big: 1e27 } }
        }
      })
      assert.strictEqual(good.status, 200, good.text)
      assert.isTrue((good.json as any).ok)
      assert.include((good.json as any).normal, "USDC.E.Transfer")
      assert.deepStrictEqual((good.json as any).problems, [])

      const typo = yield* call("POST", "/v1/rules/check", {
        headers,
        json: { chainId: 1, expressions: ["system.emitted(tx1.USDC.E.Transfr)"] }
      })
      assert.strictEqual(typo.status, 200, typo.text)
      const body = typo.json as any
      assert.isFalse(body.ok)
      assert.strictEqual(body.message, "1 of 1 expression did not check")
      assert.strictEqual(body.problems.length, 1)
      assert.strictEqual(body.problems[0].expression, 0)
      assert.strictEqual(body.problems[0].offset, "system.emitted(tx1.USDC.E.".length)
      assert.include(body.problems[0].candidates, "Transfer")

      // Another chain, where the key has no such contract: the label is unknown there.
      const elsewhere = yield* call("POST", "/v1/rules/check", {
        headers,
        json: { chainId: 10, expressions: ["system.emitted(tx1.USDC.E.Transfer)"] }
      })
      assert.isFalse((elsewhere.json as any).ok)

      const bad = yield* call("POST", "/v1/rules/check", { headers, json: { chainId: 1, expressions: [] } })
      assert.strictEqual(bad.status, 400, bad.text)
      assert.include(bad.text, "must hold 1 to 20 expressions")
      assert.strictEqual(
        (yield* call("POST", "/v1/rules/check", { json: { chainId: 1, expressions: ["x"] } })).status,
        401
      )
    }).pipe(Effect.provide(TestServer.layer()))
  )

  it.live("reads placeholder values exactly and checks them as bot creation does", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const headers = { "x-api-key": key, "content-type": "application/json" }
      yield* call("POST", "/v1/contracts", {
        headers,
        json: { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] }
      })
      const rule = "system.uintCompare(tx1.USDC.E.Transfer.value, >, ${n})"
      /** The check and the creation of a bot with the same rule and `literalDefs` text. */
      const both = (defs: string) =>
        Effect.all([
          call("POST", "/v1/rules/check", {
            headers,
            body: `{"chainId":1,"expressions":[${JSON.stringify(rule)}],"options":{"literalDefs":${defs}}}`
          }),
          call("POST", "/v1/bots", {
            headers,
            body: `{"botName":"b","chainId":1,"watchRule":{"expressions":[${JSON.stringify(rule)}]},"options":{"literalDefs":${defs}}}`
          })
        ])
      // 30 digits: exact, not rounded through a double.
      const [exact, bot] = yield* both('{"n": 123456789012345678901234567890}')
      assert.isTrue(exact.json.ok, exact.text)
      assert.include(exact.json.normal, "123456789012345678901234567890")
      assert.strictEqual(bot.status, 201, bot.text)
      // Not a whole number, however small: refused by both, for the same reason.
      const [tiny, tinyBot] = yield* both('{"n": 1e-1000000000}')
      assert.isFalse(tiny.json.ok, tiny.text)
      assert.strictEqual(tinyBot.status, 400, tinyBot.text)
      assert.strictEqual(tiny.json.problems[0].message, tinyBot.json.details.problems[0].message)
      // More placeholders than a bot may have: 400 from both.
      const many = JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, i])))
      const [tooMany, tooManyBot] = yield* both(many)
      assert.strictEqual(tooMany.status, 400, tooMany.text)
      assert.strictEqual(tooManyBot.status, 400, tooManyBot.text)
      assert.include(tooMany.text, "must have at most 64 placeholders")
    }).pipe(Effect.provide(TestServer.layer()))
  )
})
