/**
 * On-chain activity on a real node: `chains_with_activity` in v2 and in v3 `details`, read from anvil (an address that
 * only received tokens counts), a node that never answers making the answer partial within the budget instead of
 * failing it, and what was not checked said in both versions, never taken for "no activity".
 */
import { assert, describe, it } from "@effect/vitest"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect } from "effect"
import * as StalledNode from "./StalledNode.ts"
import * as TestServer from "./TestServer.ts"

const { v2, v3, issue } = TestServer

/** Anvil, and a node that takes requests and never answers them (as ethereum's, chain 1). */
const nodes = Effect.acquireRelease(
  Effect.promise(async () => {
    const anvil = await Anvil.start()
    const stalled = await StalledNode.start()
    return {
      anvil,
      stalledUrl: stalled.url,
      close: async () => {
        await stalled.close()
        await anvil.stop()
      }
    }
  }),
  (n) => Effect.promise(() => n.close())
)

/** A fresh address nobody has touched. */
const fresh = (seed: number) => `0x${seed.toString(16).padStart(40, "0")}`

describe("on-chain activity (chains_with_activity)", () => {
  it.live(
    "lists the chains where an address is active, nothing for an untouched one, and names a node that stalls",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { anvil, stalledUrl } = yield* nodes
          // A transfer gives a fresh address a balance on the anvil chain.
          const funded = fresh(0xf00d)
          // A token transfer, and nothing else, to another: no nonce, no balance, no code, yet used.
          const tokened = fresh(0xc0ffee)
          yield* Effect.promise(async () => {
            await anvil.rpc("eth_sendTransaction", [{ from: anvil.accounts[0], to: funded, value: "0x1" }])
            await anvil.mine(1)
            const { Token } = Solidity.fixtures()
            const deployed = await anvil.deploy(Token, [1_000n])
            await anvil.send({ abi: Token.abi, address: deployed.address }, "transfer", [tokened, 5n])
          })
          yield* Effect.gen(function* () {
            const key = yield* issue({ name: "Acme" })
            // The dev account has sent nothing yet holds ether; the funded one holds a wei; the third is untouched.
            // Ethereum's node never answers: each answer still comes, once the budget is spent.
            for (const [address, expected] of [
              [anvil.accounts[0]!, ["chain-31337"]],
              [funded, ["chain-31337"]],
              [tokened, ["chain-31337"]],
              [fresh(0xbead), []]
            ] as const) {
              const r = yield* v2(key, address)
              assert.strictEqual(r.status, 200, JSON.stringify(r.json))
              assert.deepStrictEqual(r.json.data.chains_with_activity, expected, address)
              // What could not be checked is said: an empty list is not "unused" on ethereum.
              assert.deepStrictEqual(r.json.data.warnings, [
                "ethereum: on-chain activity not checked (no answer within 300 ms)"
              ])
            }
            // v3 says the same in `details`, and names the network it could not check.
            const detailed = yield* v3(key, { address: funded, options: { include_details: true } })
            assert.strictEqual(detailed.status, 200)
            assert.deepStrictEqual(detailed.json.details.chains_with_activity, ["chain-31337"])
            assert.deepStrictEqual(detailed.json.details.activity, {
              checked: ["chain-31337"],
              unchecked: [{ network: "ethereum", reason: "no answer within 300 ms" }]
            })
            assert.include(
              detailed.json.metadata.warnings,
              "ethereum: on-chain activity not checked (no answer within 300 ms)"
            )
            // A batch with details says it of each address, and of an invalid one nothing.
            const batch = yield* TestServer.call("POST", "/api/v3/intel/batch", {
              headers: { authorization: `Bearer ${key}` },
              json: { addresses: [funded, fresh(0xbeef), "0xnot"], options: { include_details: true } }
            })
            assert.strictEqual(batch.status, 200, batch.text)
            assert.deepStrictEqual(
              batch.json.results.map((r: any) => r.details?.chains_with_activity ?? r.error.code),
              [["chain-31337"], [], "invalid_address"]
            )
            // Without details, no node is asked and nothing is said about them.
            const plain = yield* v3(key, { address: funded })
            assert.isUndefined(plain.json.details)
            assert.isUndefined(plain.json.metadata.warnings)
            // `options.chain` narrows the probe to one network: ethereum alone, which does not answer.
            const narrowed = yield* v3(key, { address: funded, options: { include_details: true, chain: "ethereum" } })
            assert.deepStrictEqual(narrowed.json.details.chains_with_activity, [])
            assert.deepStrictEqual(narrowed.json.metadata.warnings, [
              "ethereum: on-chain activity not checked (no answer within 300 ms)"
            ])
          }).pipe(
            Effect.provide(
              TestServer.layer({
                outbound: {
                  rpcUrls: new Map([
                    [31337, anvil.url],
                    [1, stalledUrl]
                  ])
                }
              })
            )
          )

          // With no node at all, nothing was checked, and both versions say so.
          yield* Effect.gen(function* () {
            const key = yield* issue({ name: "Acme" })
            const r = yield* v2(key, funded)
            assert.deepStrictEqual(r.json.data.chains_with_activity, [])
            assert.deepStrictEqual(r.json.data.warnings, [
              "every network: on-chain activity not checked (no node is configured (VIGIL_RPC_URL_<chainId>))"
            ])
            const detailed = yield* v3(key, { address: funded, options: { include_details: true } })
            assert.deepStrictEqual(detailed.json.details.chains_with_activity, [])
            assert.deepStrictEqual(detailed.json.details.activity, {
              checked: [],
              unchecked: [{ network: "every network", reason: "no node is configured (VIGIL_RPC_URL_<chainId>)" }]
            })
          }).pipe(Effect.provide(TestServer.layer()))
        })
      ),
    60_000
  )
})
