/**
 * The monitoring routes (contracts and bots) on the real server over a real SQLite file: contracts registered with
 * an ABI (an array or a JSON string) or without one (fetched from a local server in Sourcify's layout), bots whose
 * rules are checked against them, the per-key view, and every refusal with its status and field. Every answer is
 * also checked against the served OpenAPI document.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { it } from "@effect/vitest"
import { assert, describe } from "vitest"
import { Effect, type Layer } from "effect"
import { call, issue } from "./TestServer.ts"
import * as TestServer from "./TestServer.ts"
import { transferEvent } from "@vigil/core-test/AbiFragments.ts"

const transfer = transferEvent
const usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
const verified = "0x00000000000000000000000000000000000000a1"

/** A local server in Sourcify's v2 layout that knows one address. */
const sourcify = (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const server: Server = createServer((req, res) => {
    const known = req.url === `/v2/contract/1/${verified}?fields=abi`
    res
      .writeHead(known ? 200 : 404, { "content-type": "application/json" })
      .end(JSON.stringify(known ? { abi: [transfer] } : { message: "Contract not found" }))
  })
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((done) => server.close(() => done()))
      })
    )
  )
}

/** Runs `body` against the real server whose ABI source is a fresh local Sourcify (no explorer, no node). */
const withServer = <A, E>(body: Effect.Effect<A, E, Layer.Success<ReturnType<typeof TestServer.layer>>>) =>
  Effect.acquireUseRelease(
    Effect.promise(sourcify),
    (source) =>
      body.pipe(
        Effect.provide(TestServer.layer({ outbound: { abiSources: { sourcifyUrl: source.url, etherscanUrl: "" } } }))
      ),
    (source) => Effect.promise(source.close)
  )

describe("/v1/contracts", () => {
  it.live(
    "registers, lists, reads and deletes a key's contracts; another key sees none of them",
    () =>
      withServer(
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const other = yield* issue({ name: "Other" })
          const post = (k: string, json: unknown) =>
            call("POST", "/v1/contracts", { headers: { "x-api-key": k }, json })
          const created = yield* post(key, { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] })
          assert.strictEqual(created.status, 201, created.text)
          assert.strictEqual(created.json.success, true)
          assert.strictEqual(created.json.contract.contractAddress, usdc.toLowerCase())
          assert.strictEqual(created.json.contract.abiSource, "supplied")
          assert.match(created.json.contract.id, /^ct_\d+_[a-z0-9]{9}$/)
          // The ABI as a JSON string (as explorers give it), with a Bearer key.
          const text = yield* call("POST", "/v1/contracts", {
            headers: { authorization: `Bearer ${key}` },
            json: { chainId: 10, contractAddress: usdc, label: "USDC", ABI: JSON.stringify([transfer]) }
          })
          assert.strictEqual(text.status, 201, text.text)
          // Without an ABI: fetched.
          const fetched = yield* post(key, { chainId: 1, contractAddress: verified, label: "Vault" })
          assert.strictEqual(fetched.status, 201, fetched.text)
          assert.strictEqual(fetched.json.contract.abiSource, "sourcify")
          assert.deepStrictEqual(fetched.json.contract.ABI, [transfer])

          const list = yield* call("GET", "/v1/contracts", { headers: { "x-api-key": key } })
          assert.deepStrictEqual(
            list.json.contracts.map((c: { label: string; chainId: number }) => `${c.label}@${c.chainId}`),
            ["USDC@1", "USDC@10", "Vault@1"]
          )
          const onOne = yield* call("GET", "/v1/contracts?chainId=10", { headers: { "x-api-key": key } })
          assert.deepStrictEqual(
            onOne.json.contracts.map((c: { chainId: number }) => c.chainId),
            [10]
          )
          const id = created.json.contract.id as string
          const read = yield* call("GET", `/v1/contracts/${id}`, { headers: { "x-api-key": key } })
          assert.strictEqual(read.status, 200)
          assert.deepStrictEqual(read.json.contract, created.json.contract)

          // Another key: nothing to see, read or delete.
          assert.deepStrictEqual(
            (yield* call("GET", "/v1/contracts", { headers: { "x-api-key": other } })).json.contracts,
            []
          )
          const foreign = yield* call("GET", `/v1/contracts/${id}`, { headers: { "x-api-key": other } })
          assert.strictEqual(foreign.status, 404)
          assert.strictEqual(foreign.json.error, "Not Found")
          assert.strictEqual(
            (yield* call("DELETE", `/v1/contracts/${id}`, { headers: { "x-api-key": other } })).status,
            404
          )
          const deleted = yield* call("DELETE", `/v1/contracts/${id}`, { headers: { "x-api-key": key } })
          assert.strictEqual(deleted.status, 200)
          assert.strictEqual(deleted.json.success, true)
          assert.strictEqual((yield* call("GET", `/v1/contracts/${id}`, { headers: { "x-api-key": key } })).status, 404)
          // The label is free again.
          assert.strictEqual(
            (yield* post(key, { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] })).status,
            201
          )
        })
      ),
    30_000
  )

  it.live(
    "refuses bad fields by name, a taken label, no ABI anywhere, and a missing key",
    () =>
      withServer(
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const post = (json: unknown, headers: Record<string, string> = { "x-api-key": key }) =>
            call("POST", "/v1/contracts", { headers, json })
          const good = { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] }
          const cases: Array<readonly [unknown, string]> = [
            [{ ...good, chainId: "one" }, "chainId"],
            [{ ...good, chainId: 0 }, "chainId"],
            [{ ...good, contractAddress: "0x1234" }, "contractAddress"],
            [{ ...good, label: "tx1" }, "label"],
            [{ ...good, label: "has space" }, "label"],
            [{ ...good, ABI: [{ type: "function" }] }, "ABI"],
            [{ ...good, ABI: "not json" }, "ABI"],
            [{ ...good, ABI: [] }, "ABI"],
            [{ contractAddress: usdc, label: "USDC" }, "chainId"]
          ]
          for (const [body, field] of cases) {
            const r = yield* post(body)
            assert.strictEqual(r.status, 400, `${JSON.stringify(body)}: ${r.text}`)
            assert.strictEqual(r.json.details.field, field, r.text)
            assert.strictEqual(r.json.success, false)
          }
          // Types that are no ABI type are refused at registration, naming the entry.
          const typed = (type: string, extra: object = {}) => ({
            ...good,
            ABI: [transfer, { type: "event", name: "Odd", inputs: [{ name: "x", type, ...extra }] }]
          })
          for (const [body, message] of [
            [
              typed("uint257"),
              "entry 1 (event Odd), input 0 (x): uint257 is not an ABI type: uintN takes N from 8 to 256 in steps of 8"
            ],
            [
              typed("bytes33"),
              "entry 1 (event Odd), input 0 (x): bytes33 is not an ABI type: bytesN takes N from 1 to 32"
            ],
            [typed("tuple"), "entry 1 (event Odd), input 0 (x): tuple without its components"],
            [
              typed("uint256[0]"),
              "entry 1 (event Odd), input 0 (x): uint256[0]: a fixed array length is a whole number from 1 to 999999"
            ],
            [
              typed("tuple[]", { components: [{ name: "a", type: "int7" }] }),
              "entry 1 (event Odd), input 0 (x): component 0 (a): int7 is not an ABI type: intN takes N from 8 to 256 in steps of 8"
            ],
            [
              typed("address", { components: [{ name: "a", type: "uint8" }] }),
              "entry 1 (event Odd), input 0 (x): address has components but is not a tuple"
            ],
            // Nested deeper than 16 levels: 9,999 array dimensions, or tuples within tuples.
            [
              typed(`uint256${"[]".repeat(9_999)}`),
              "entry 1 (event Odd), input 0 (x): uint256[][][][][][]…: nested deeper than 16 levels (arrays and tuples)"
            ],
            // Given as a JSON string, as explorers return ABIs (the body itself may nest 8 levels at most).
            [
              {
                ...good,
                ABI: JSON.stringify(
                  typed("tuple[][]", {
                    components: [
                      Array.from({ length: 14 }).reduce<object>(
                        (inner) => ({ name: "t", type: "tuple", components: [inner] }),
                        { name: "v", type: "uint8" }
                      )
                    ]
                  }).ABI
                )
              },
              `entry 1 (event Odd), input 0 (x): ${"component 0 (t): ".repeat(14)}tuple…: nested deeper than 16 levels (arrays and tuples)`
            ]
          ] as const) {
            const r = yield* post(body)
            assert.strictEqual(r.status, 400, r.text)
            assert.strictEqual(r.json.details.field, "ABI", r.text.slice(0, 200))
            assert.strictEqual(r.json.message, `ABI: not a valid ABI: ${message}`)
          }
          // A valid nested tuple type is taken (under another key, so this key's list stays as it was).
          const otherKey = { "x-api-key": yield* issue({ name: "Other" }) }
          const fine = yield* post(typed("tuple[2][]", { components: [{ name: "a", type: "ufixed128x18" }] }), otherKey)
          assert.strictEqual(fine.status, 201, fine.text)
          assert.strictEqual((yield* post(good)).status, 201)
          const taken = yield* post({ ...good, contractAddress: verified })
          assert.strictEqual(taken.status, 409)
          assert.strictEqual(taken.json.message, "the label USDC is already used on chain 1")
          const none = yield* post({ chainId: 1, contractAddress: usdc, label: "Other" })
          assert.strictEqual(none.status, 422, none.text)
          assert.deepStrictEqual(none.json.details.tried, [
            "EIP-1967 proxy check: no RPC URL is configured for chain 1 (VIGIL_RPC_URL_1)",
            "sourcify (contract): not verified"
          ])
          assert.strictEqual((yield* post(good, {})).status, 401)
          const list = yield* call("GET", "/v1/contracts", { headers: { "x-api-key": key } })
          assert.strictEqual(list.json.contracts.length, 1, "nothing refused was stored")
        })
      ),
    30_000
  )
})

describe("/v1/bots", () => {
  it.live(
    "creates a bot whose rules check against the key's contracts, updates, lists, reads and deletes it",
    () =>
      withServer(
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const other = yield* issue({ name: "Other" })
          const headers = { "x-api-key": key }
          assert.strictEqual(
            (yield* call("POST", "/v1/contracts", {
              headers,
              json: { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] }
            })).status,
            201
          )
          // literalDefs as raw text: 1e+27 and a 30-digit number must arrive exactly.
          const body = `{"botName":"whales","chainId":1,"watchRule":{"expressions":["system.uintCompare(tx1.USDC.E.Transfer.value, >, \${max})"]},"options":{"topLevelTxBlockRange":5,"literalDefs":{"max":1e+27,"exact":123456789012345678901234567890,"small":7}}}`
          const created = yield* call("POST", "/v1/bots", {
            headers: { ...headers, "content-type": "application/json" },
            body
          })
          assert.strictEqual(created.status, 201, created.text)
          const bot = created.json.bot
          assert.match(bot.id, /^bot_\d+_[a-z0-9]{9}$/)
          assert.strictEqual(bot.severity, "Medium")
          assert.strictEqual(bot.active, true)
          assert.strictEqual(bot.revision, 1)
          // No node is configured for chain 1 here: stored, not followed, and said so.
          assert.notProperty(bot, "watchingFrom")
          assert.deepStrictEqual(created.json.warnings, [
            "no node is configured for chain 1 (VIGIL_RPC_URL_1 or --chains): the bot is stored but not followed live until one is, and then runs from the block the follower processes next"
          ])
          assert.notProperty((yield* call("GET", `/v1/bots/${bot.id}`, { headers })).json, "warnings")
          assert.deepStrictEqual(bot.options.literalDefs, {
            max: "1e+27",
            exact: "123456789012345678901234567890",
            small: 7
          })

          const updated = yield* call("PUT", `/v1/bots/${bot.id}`, {
            headers,
            json: { severity: "Critical", botVersion: "2" }
          })
          assert.strictEqual(updated.status, 200, updated.text)
          assert.strictEqual(updated.json.bot.severity, "Critical")
          assert.strictEqual(updated.json.bot.revision, 2)
          assert.deepStrictEqual(updated.json.bot.options.literalDefs, bot.options.literalDefs, "kept exact")
          const moved = yield* call("PUT", `/v1/bots/${bot.id}`, { headers, json: { chainId: 10 } })
          assert.strictEqual(moved.status, 400)
          assert.strictEqual(moved.json.details.field, "chainId")

          const list = yield* call("GET", "/v1/bots", { headers })
          assert.deepStrictEqual(
            list.json.bots.map((b: { id: string }) => b.id),
            [bot.id]
          )
          assert.strictEqual(
            (yield* call("GET", `/v1/bots/${bot.id}`, { headers: { "x-api-key": other } })).status,
            404
          )
          assert.strictEqual(
            (yield* call("PUT", `/v1/bots/${bot.id}`, { headers: { "x-api-key": other }, json: { active: false } }))
              .status,
            404
          )
          // The contract the bot's rules use cannot go without saying which bots it breaks.
          const contractId = (yield* call("GET", "/v1/contracts", { headers })).json.contracts[0].id as string
          const inUse = yield* call("DELETE", `/v1/contracts/${contractId}`, { headers })
          assert.strictEqual(inUse.status, 409, inUse.text)
          assert.match(inUse.json.message, /^1 bot uses contract ct_\d+_[a-z0-9]{9} \(whales\); delete with force=true/)
          assert.deepStrictEqual(
            inUse.json.details.bots.map((b: { id: string }) => b.id),
            [bot.id]
          )
          assert.match(inUse.json.details.bots[0].problems[0].message, /no contract labelled USDC/)
          const forced = yield* call("DELETE", `/v1/contracts/${contractId}?force=true`, { headers })
          assert.strictEqual(forced.status, 200, forced.text)
          assert.deepStrictEqual(
            forced.json.brokenBots.map((b: { id: string }) => b.id),
            [bot.id]
          )
          // The bot is broken now; deleting a contract it never used is no business of it.
          const unused = yield* call("POST", "/v1/contracts", {
            headers,
            json: {
              chainId: 1,
              contractAddress: "0x6B175474E89094C44Da98b954EedeAC495271d0F",
              label: "DAI",
              ABI: [transfer]
            }
          })
          assert.strictEqual(unused.status, 201, unused.text)
          const unusedGone = yield* call("DELETE", `/v1/contracts/${unused.json.contract.id}`, { headers })
          assert.strictEqual(unusedGone.status, 200, unusedGone.text)
          assert.notProperty(unusedGone.json, "brokenBots")
          assert.strictEqual((yield* call("DELETE", `/v1/bots/${bot.id}`, { headers })).status, 200)
          assert.strictEqual((yield* call("GET", `/v1/bots/${bot.id}`, { headers })).status, 404)
        })
      ),
    30_000
  )

  it.live(
    "refuses a bot whose rules do not check with each problem positioned, and missing fields by name",
    () =>
      withServer(
        Effect.gen(function* () {
          const key = yield* issue({ name: "Acme" })
          const headers = { "x-api-key": key }
          yield* call("POST", "/v1/contracts", {
            headers,
            json: { chainId: 1, contractAddress: usdc, label: "USDC", ABI: [transfer] }
          })
          const wrong = yield* call("POST", "/v1/bots", {
            headers,
            json: {
              botName: "b",
              chainId: 1,
              watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)", "system.emitted(tx1.USDT.E.Transfer)"] }
            }
          })
          assert.strictEqual(wrong.status, 400, wrong.text)
          assert.strictEqual(wrong.json.details.field, "watchRule.expressions")
          assert.deepStrictEqual(wrong.json.details.problems, [
            { expression: 1, offset: 19, message: "no contract labelled USDT on this chain", candidates: ["USDC"] }
          ])
          // Two transactions nothing joins: every pair of transfers in the window would match. Refused, saying how.
          const loose = yield* call("POST", "/v1/bots", {
            headers,
            json: {
              botName: "b",
              chainId: 1,
              watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer) && system.emitted(tx2.USDC.E.Transfer)"] }
            }
          })
          assert.strictEqual(loose.status, 400, loose.text)
          assert.match(
            loose.json.message,
            /^watchRule.expressions: expression 1 at 0: tx2 is not joined to tx1 by any equality: .*system\.addressCompare\(tx2\.from, ==, tx1\.from\)/
          )
          // What no data feeds yet (address groups, transaction risk scores) would be silently wrong: refused, saying
          // why, in the rule, in options.ruleScope, and by POST /v1/rules/check as by a bot.
          const grouped = 'system.emitted(tx1.USDC.E.Transfer) && !system.inGroup(tx1.from, "trusted")'
          const scored = "system.emitted(tx1.USDC.E.Transfer) && system.uintCompare(tx1.riskscore, >=, 75)"
          for (const [json, problem] of [
            [
              { watchRule: { expressions: [grouped] } },
              {
                expression: 0,
                offset: 40,
                message: /^inGroup\(…, "trusted"\) needs address groups, which this server does not keep yet/
              }
            ],
            [
              { watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)", scored] } },
              {
                expression: 1,
                offset: 58,
                message: /^riskscore is not looked up for transactions yet: this comparison would never hold/
              }
            ],
            [
              {
                watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] },
                options: { ruleScope: { contractName: "USDC", groupId: "trusted", member: false } }
              },
              { expression: 0, offset: 0, message: /^options\.ruleScope needs address groups/ }
            ]
          ] as const) {
            const refused = yield* call("POST", "/v1/bots", { headers, json: { botName: "b", chainId: 1, ...json } })
            assert.strictEqual(refused.status, 400, refused.text)
            const [found] = refused.json.details.problems
            assert.strictEqual(refused.json.details.problems.length, 1, refused.text)
            assert.deepStrictEqual([found.expression, found.offset], [problem.expression, problem.offset])
            assert.match(found.message, problem.message)
            const checked = yield* call("POST", "/v1/rules/check", {
              headers,
              json: {
                chainId: 1,
                expressions: json.watchRule.expressions,
                ...("options" in json ? { options: json.options } : {})
              }
            })
            assert.strictEqual(checked.json.ok, false, checked.text)
            assert.match(checked.json.problems[0].message, problem.message)
          }
          // A number whose exponent would take seconds to expand is refused at once, in a rule or in literalDefs.
          for (const [literal, defs] of [
            ["1e-1000000000", undefined],
            ["${tiny}", '{"tiny": 1e-1000000000}'],
            ["${huge}", '{"huge": 1e999999999999}']
          ] as const) {
            const body = JSON.stringify({
              botName: "b",
              chainId: 1,
              watchRule: { expressions: [`system.uintCompare(tx1.USDC.E.Transfer.value, >, ${literal})`] }
            })
            const refused = yield* call("POST", "/v1/bots", {
              headers: { ...headers, "content-type": "application/json" },
              body: defs === undefined ? body : body.replace(/\}$/, `,"options":{"literalDefs":${defs}}}`)
            })
            assert.strictEqual(refused.status, 400, refused.text)
            assert.match(
              refused.json.message,
              literal === "${huge}"
                ? /^options\.literalDefs\.huge: .*finite/i
                : /is not a whole number|is outside the uint256 range/
            )
          }
          const missing = yield* call("POST", "/v1/bots", {
            headers,
            json: { chainId: 1, watchRule: { expressions: ["system.emitted(tx1.USDC.E.Transfer)"] } }
          })
          assert.strictEqual(missing.status, 400)
          assert.strictEqual(missing.json.details.field, "botName")
          const badType = yield* call("POST", "/v1/bots", { headers, json: { botName: "b", chainId: "one" } })
          assert.strictEqual(badType.status, 400)
          assert.strictEqual(badType.json.details.field, "chainId")
          assert.strictEqual(badType.json.message, "chainId: must be a positive whole number")
          assert.strictEqual(missing.json.message, "botName: is required")
          assert.deepStrictEqual((yield* call("GET", "/v1/bots", { headers })).json.bots, [])
        })
      ),
    30_000
  )

  it.live(
    "the key's qps applies to /v1 and to webhook management too: past it, 429 with Retry-After; the next second it is served again",
    () =>
      TestServer.withSteppedClock(
        Effect.gen(function* () {
          const headers = { "x-api-key": yield* issue({ name: "Slow", qps: 2 }) }
          yield* TestServer.alignToSecond
          const answers = []
          for (const path of ["/v1/bots", "/v1/contracts", "/v1/notifications"])
            answers.push(yield* call("GET", path, { headers }))
          assert.deepStrictEqual(
            answers.map((a) => a.status),
            [200, 200, 429]
          )
          const refused = answers[2]!
          assert.strictEqual(refused.json.details.limit, "qps")
          assert.strictEqual(refused.headers.get("retry-after"), "1")
          yield* TestServer.skip(1_000)
          assert.strictEqual((yield* call("GET", "/v1/notifications", { headers })).status, 200)
          // Screening volume is not charged by /v1 calls.
          const status = yield* call("GET", "/api/v2/status", { headers })
          assert.strictEqual(status.json.usage.dailyUsed, 0)
          // Managing webhooks is charged to the same rate.
          yield* TestServer.skip(1_000)
          const hooks = []
          for (const path of ["/api/v2/webhooks", "/api/v2/webhooks/stats", "/api/v2/webhooks"])
            hooks.push(yield* call("GET", path, { headers }))
          assert.deepStrictEqual(
            hooks.map((a) => a.status),
            [200, 200, 429]
          )
          assert.strictEqual(hooks[2]!.json.success, false)
          assert.strictEqual(hooks[2]!.headers.get("retry-after"), "1")
        }).pipe(Effect.provide(TestServer.layer()))
      )
  )

  it.live(
    "a key holds at most 200 contracts: the next is a 409 naming the limit, and nothing is stored",
    () =>
      withServer(
        Effect.gen(function* () {
          const headers = { "x-api-key": yield* issue({ name: "Busy" }) }
          for (let i = 0; i < 200; i++) {
            const r = yield* call("POST", "/v1/contracts", {
              headers,
              json: {
                chainId: 1,
                contractAddress: `0x${(i + 1).toString(16).padStart(40, "0")}`,
                label: `C${i}`,
                ABI: [transfer]
              }
            })
            assert.strictEqual(r.status, 201, r.text)
          }
          const over = yield* call("POST", "/v1/contracts", {
            headers,
            json: { chainId: 1, contractAddress: usdc, label: "Over", ABI: [transfer] }
          })
          assert.strictEqual(over.status, 409, over.text)
          assert.deepStrictEqual(
            [over.json.message, over.json.details],
            ["the key has 200 contracts, the most it may have; delete one first", { max: 200 }]
          )
          assert.lengthOf((yield* call("GET", "/v1/contracts", { headers })).json.contracts, 200)
          const longLabel = yield* call("POST", "/v1/contracts", {
            headers: { "x-api-key": yield* issue({ name: "Other" }) },
            json: { chainId: 1, contractAddress: usdc, label: "L".repeat(65), ABI: [transfer] }
          })
          assert.strictEqual(longLabel.status, 400)
          assert.strictEqual(longLabel.json.details.field, "label")
        })
      ),
    60_000
  )
})
