/**
 * Counterparty exposure on a real node: an ERC-20 deployed on anvil, transfers to and from a sanctioned address,
 * and what `options.exposure` makes of them: a signal naming the transaction for real transfers, nothing but a
 * count for zero-value and dust ones, native transfers read from traces, and a node that stalls making the answer
 * partial within the budget.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schemas } from "@vigil/adapter-http"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Schema } from "effect"
import * as StalledNode from "./StalledNode.ts"
import * as TestServer from "./TestServer.ts"

const { v3, issue, ingest } = TestServer

const fresh = (seed: number) => `0x${seed.toString(16).padStart(40, "0")}`

/** Anvil with the transfers below, and a node that takes requests and never answers them (as ethereum's). */
const nodes = Effect.acquireRelease(
  Effect.promise(async () => {
    const anvil = await Anvil.start()
    const stalled = await StalledNode.start()
    const [deployer, listed] = [anvil.accounts[0]!, anvil.accounts[1]!]
    const deployed = await anvil.deploy(Solidity.fixtures().Token, [10n ** 24n], deployer)
    const token = { abi: Solidity.fixtures().Token.abi, address: deployed.address }
    // The deployer funds the listed address (outgoing exposure of the deployer).
    const funding = await anvil.send(token, "transfer", [listed, 10n ** 21n], { from: deployer })
    // The listed address pays a recipient (incoming exposure), sends a zero-value transfer (poisoning), and dusts an
    // address whose own volume dwarfs it.
    const paid = await anvil.send(token, "transfer", [fresh(0xa1), 500n * 10n ** 18n], { from: listed })
    await anvil.send(token, "transfer", [fresh(0xa2), 0n], { from: listed })
    await anvil.send(token, "transfer", [fresh(0xa3), 10n ** 20n], { from: deployer })
    await anvil.send(token, "transfer", [fresh(0xa3), 1n], { from: listed })
    // And sends ether (a native transfer, read from traces).
    const ether = await anvil.rpc<string>("eth_sendTransaction", [
      { from: listed, to: fresh(0xa4), value: `0x${(10n ** 18n).toString(16)}` }
    ])
    await anvil.mine(1)
    return {
      anvil,
      token: token.address.toLowerCase(),
      listed: listed.toLowerCase(),
      deployer: deployer.toLowerCase(),
      hashes: { funding: funding.hash, paid: paid.hash, ether },
      stalledUrl: stalled.url,
      close: async () => {
        await stalled.close()
        await anvil.stop()
      }
    }
  }),
  (n) => Effect.promise(() => n.close())
)

describe("counterparty exposure (options.exposure)", () => {
  it.live(
    "turns transfers with a sanctioned address into signals naming them, sets dust aside, and answers partial when a node stalls",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const n = yield* nodes
          const screen = (address: string, options: Record<string, unknown> = { exposure: true }) =>
            Effect.map(v3(key, { address, options }), (r) => {
              assert.strictEqual(r.status, 200, JSON.stringify(r.json))
              assert.doesNotThrow(() => Schema.decodeUnknownSync(Schemas.V3Result)(r.json))
              return r.json
            })
          let key = ""
          yield* Effect.gen(function* () {
            yield* ingest("test-sanctions", "sanctions", [n.listed], "2024-01-01")
            key = yield* issue({ name: "Acme" })

            // Paid by the sanctioned address: an exposure signal with the transaction, the amount and the share.
            const paid = yield* screen(fresh(0xa1))
            const [signal] = paid.signals
            assert.strictEqual(signal.type, "exposure_sanctioned")
            assert.deepStrictEqual(signal.evidence.exposure, {
              counterparty: n.listed,
              network: "chain-31337",
              direction: "incoming",
              transfers: 1,
              transactions: [n.hashes.paid],
              amounts: [
                { token: n.token, standard: "erc20", incoming: "500000000000000000000", outgoing: "0", share: 1 }
              ]
            })
            assert.strictEqual(signal.evidence.list, "test-sanctions")
            assert.strictEqual(paid.score, 60)
            assert.strictEqual(paid.recommendation.action, "REVIEW")
            assert.include(paid.recommendation.details, "Counterparty exposure raises the score from 0 to 60")
            assert.deepInclude(paid.metadata.exposure, {
              counterparties: 1,
              listed: 1,
              dust_ignored: 0,
              complete: true
            })
            assert.strictEqual(paid.metadata.exposure.windows[0].network, "chain-31337")
            assert.isTrue(paid.metadata.exposure.windows[0].native)

            // The deployer sent to it: outgoing.
            const deployer = yield* screen(n.deployer)
            const out = deployer.signals.find((s: any) => s.type === "exposure_sanctioned")
            assert.strictEqual(out.evidence.exposure.direction, "outgoing")
            assert.deepStrictEqual(out.evidence.exposure.transactions, [n.hashes.funding])

            // A zero-value transfer and a dust one are counted and reported as possibly unsolicited, never signals.
            for (const address of [fresh(0xa2), fresh(0xa3)]) {
              const r = yield* screen(address)
              assert.deepStrictEqual(r.signals, [], address)
              assert.strictEqual(r.score, 0)
              assert.strictEqual(r.recommendation.action, "ALLOW")
              assert.strictEqual(r.metadata.exposure.dust_ignored, 1, address)
              assert.deepStrictEqual(
                r.metadata.exposure.unsolicited.map((u: any) => u.counterparty),
                [n.listed],
                address
              )
            }

            // Ether sent by it, read from the node's traces.
            const ether = yield* screen(fresh(0xa4))
            assert.deepInclude(ether.signals[0].evidence.exposure, {
              direction: "incoming",
              transactions: [n.hashes.ether]
            })
            assert.deepStrictEqual(ether.signals[0].evidence.exposure.amounts, [
              { token: "native", standard: "native", incoming: "1000000000000000000", outgoing: "0", share: 1 }
            ])

            // Not asked: nothing read, nothing said.
            const plain = yield* screen(fresh(0xa1), {})
            assert.strictEqual(plain.score, 0)
            assert.isUndefined(plain.metadata.exposure)

            // A batch says it of every item.
            const batch = yield* TestServer.call("POST", "/api/v3/intel/batch", {
              headers: { authorization: `Bearer ${key}` },
              json: { addresses: [fresh(0xa1), fresh(0xa2)], options: { exposure: true } }
            })
            assert.deepStrictEqual(
              batch.json.results.map((r: any) => [r.score, r.signals.map((s: any) => s.type)]),
              [
                [60, ["exposure_sanctioned"]],
                [0, []]
              ]
            )
          }).pipe(
            Effect.provide(
              TestServer.layer({
                outbound: { rpcUrls: new Map([[31337, n.anvil.url]]) },
                exposure: { budgetMillis: 2_000 }
              })
            )
          )

          // With ethereum's node stalled: the anvil chain is read, ethereum named as not checked, within the budget.
          yield* Effect.gen(function* () {
            yield* ingest("test-sanctions", "sanctions", [n.listed], "2024-01-01")
            key = yield* issue({ name: "Acme" })
            const partial = yield* screen(fresh(0xa1))
            assert.strictEqual(partial.signals[0].type, "exposure_sanctioned")
            assert.isFalse(partial.metadata.exposure.complete)
            assert.include(
              partial.metadata.warnings,
              "ethereum: counterparty exposure not checked (no answer within 500 ms)"
            )
            // A network with no node: said so.
            const narrowed = yield* screen(fresh(0xa1), { exposure: true, chain: "polygon" })
            assert.include(
              narrowed.metadata.warnings,
              "polygon: counterparty exposure not checked (no node is configured for it)"
            )
          }).pipe(
            Effect.provide(
              TestServer.layer({
                outbound: {
                  rpcUrls: new Map([
                    [31337, n.anvil.url],
                    [1, n.stalledUrl]
                  ])
                },
                exposure: { budgetMillis: 500 }
              })
            )
          )
        })
      ),
    90_000
  )
})
