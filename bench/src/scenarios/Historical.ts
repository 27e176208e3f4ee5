/**
 * Historical analysis from a real node: blocks per second through `Scan.scan` (the JSON-RPC reader, decoding with
 * the contracts' ABIs and rule evaluation) beside a bare JSON-RPC fetch of the same blocks (block, receipts and call
 * traces, in the same batches, parsed and dropped): the floor, since a scan must at least read the blocks.
 */
import { EvmRpc } from "@vigil/adapter-evm"
import { Abi, ChainData, Rules, Scan } from "@vigil/core"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Schema } from "effect"
import { fetchBlocks } from "../BareRpc.ts"
import { median, ratiosTo, type Scenario } from "../Harness.ts"

const blocksPerBatch = 10
const inFlight = 4

/** The scenario. */
export const scenario: Scenario = {
  name: "historical",
  description:
    "Historical analysis from a local anvil node holding 100 blocks of 20 transactions (ERC-20 transfers and router calls that transfer internally): blocks per second through Scan.scan (JSON-RPC reader, ABI decoding, a rule that needs call traces) beside a bare JSON-RPC fetch of the same blocks with receipts and traces, in the same batches (the floor).",
  run: async ({ rounds, durationSeconds }) => {
    const node = await Anvil.start()
    try {
      const fixtures = Solidity.fixtures()
      const [alice, bob] = node.accounts as [`0x${string}`, `0x${string}`]
      const token = { abi: fixtures.Token.abi, address: (await node.deploy(fixtures.Token, [10n ** 30n])).address }
      const router = { abi: fixtures.Router.abi, address: (await node.deploy(fixtures.Router)).address }
      await node.send(token, "approve", [router.address, 10n ** 29n])
      const first = (await node.head()) + 1
      for (let block = 0; block < 100; block++) {
        for (let i = 0; i < 20; i++) {
          if (i % 2 === 0) await node.submit(token, "transfer", [bob, BigInt(1 + block * 20 + i)], { from: alice })
          else await node.submit(router, "route", [token.address, bob, BigInt(1000 * i)], { from: alice })
        }
        await node.mine(1)
      }
      const numbers = Array.from({ length: 100 }, (_, i) => first + i)
      const contracts = [
        { label: "Token", address: token.address, abi: Schema.decodeUnknownSync(Abi.Abi)(fixtures.Token.abi) },
        { label: "Router", address: router.address, abi: Schema.decodeUnknownSync(Abi.Abi)(fixtures.Router.abi) }
      ]
      const checked = Rules.Checker.check("system.uintCompare(tx1.itx1.Token.E.Transfer.value, >, 15000)", {
        contracts
      })
      if (!checked.ok) throw new Error(checked.problems[0]!.message)
      const chain = EvmRpc.make({ urls: new Map([[node.chainId, node.url]]), blocksPerBatch, inFlight })
      const scan = async () => {
        let matches = 0
        await Effect.runPromise(
          Scan.scan({
            chainId: node.chainId,
            blocks: numbers,
            contracts,
            rules: [{ index: 0, expr: checked.rule.expr, needsTraces: checked.rule.needsTraces }],
            blockRange: 0,
            onMatch: () => Effect.sync(() => void matches++)
          }).pipe(Effect.provideService(ChainData.ChainData, chain))
        )
        return matches
      }
      const subjects: Record<string, () => Promise<number>> = {
        "bare JSON-RPC fetch": () => fetchBlocks(node.url, numbers, { traces: true, blocksPerBatch, inFlight }),
        "Scan.scan": scan
      }
      const seconds = Math.max(1, durationSeconds / 2)
      const rates: Record<string, Array<number>> = {}
      const results: Record<string, number> = {}
      for (let round = 0; round < rounds; round++) {
        for (const [name, run] of Object.entries(subjects)) {
          let runs = 0
          const started = performance.now()
          while (performance.now() - started < seconds * 1000) {
            results[name] = await run()
            runs++
          }
          ;(rates[name] ??= []).push((runs * numbers.length) / ((performance.now() - started) / 1000))
        }
      }
      // Every block's transactions are read; the rule holds for the routes above 15,000 (i = 17 and 19 of each block).
      const routesAbove = Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 2 === 1 && 1000 * i > 15000)
      if (results["bare JSON-RPC fetch"] !== 2000 || results["Scan.scan"] !== 100 * routesAbove.length) {
        throw new Error(`unexpected results: ${JSON.stringify(results)}`)
      }
      const measurements = Object.entries(rates).map(([subject, r]) => ({
        subject,
        figures: { "blocks/s": Math.round(median(r)) }
      }))
      return {
        settings: { rounds, secondsPerRun: seconds, blocks: 100, transactionsPerBlock: 20, blocksPerBatch, inFlight },
        measurements,
        baseline: "bare JSON-RPC fetch",
        ratios: ratiosTo("bare JSON-RPC fetch", measurements),
        notes: [
          "Both read the same 2,000 transactions; the scan also decodes them and finds the internal Transfers above 15,000 (two router calls per block)."
        ]
      }
    } finally {
      await node.stop()
    }
  }
}
