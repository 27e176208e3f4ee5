/**
 * Scans (historical analysis from a node, `vigil monitor backtest`) run under the same bounds as a follower's step,
 * a window at a time: a rule that joins every transaction of its windows stops the scan with the window and the
 * bound it went over, instead of holding the process; within its bounds it reports each match once.
 */
import { Abi, ChainData, Rules, Scan } from "@vigil/core"
import { Effect, Exit, Schema } from "effect"
import { assert, describe, it } from "vitest"
import { transferEvent } from "../AbiFragments.ts"

const token = `0x${"a".repeat(40)}`
const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const hex = (n: number) => `0x${n.toString(16)}`

/** Block `n` as a node answers it: four transfers of 5 to the token, from one sender. */
const block = (n: number): ChainData.BlockResult => {
  const hashes = [0, 1, 2, 3].map((i) => word(n * 16 + i + 1))
  return {
    _tag: "Found",
    number: n,
    data: {
      block: {
        number: hex(n),
        hash: word(n * 16),
        parentHash: word((n - 1) * 16),
        timestamp: hex(1_700_000_000 + n * 12),
        transactions: hashes.map((hash, i) => ({
          hash,
          from: `0x${"1".repeat(40)}`,
          to: token,
          value: "0x0",
          nonce: hex(n * 4 + i),
          input: "0x",
          gas: "0x5208",
          transactionIndex: hex(i)
        }))
      },
      receipts: hashes.map((hash, i) => ({
        transactionHash: hash,
        status: "0x1",
        gasUsed: "0x5208",
        logs: [{ address: token, topics: [transferTopic, word(1), word(2)], data: word(5), logIndex: hex(i) }]
      }))
    }
  }
}

/** A node holding blocks 1 to 60. */
const node = ChainData.ChainData.of({
  trouble: () => Effect.succeed(undefined),
  head: () => Effect.succeed(60),
  newHeads: () => Effect.die("not read"),
  tracesAvailable: () => Effect.succeed(false),
  hashes: () => Effect.die("not read"),
  blocks: (_, numbers) => Effect.succeed(numbers.map(block))
})

const contracts = [{ label: "Token", address: token, abi: Schema.decodeUnknownSync(Abi.Abi)([transferEvent]) }]

const rule = (source: string): Scan.Rule => {
  const checked = Rules.Checker.check(source, { contracts, literalDefs: new Map() })
  if (!checked.ok) throw new Error(checked.problems[0]!.message)
  return { index: 0, expr: checked.rule.expr, needsTraces: false }
}

const scan = (source: string, blockRange: number, bounds?: Scan.Bounds) => {
  let matches = 0
  return Scan.scan({
    chainId: 1,
    blocks: Array.from({ length: 60 }, (_, i) => i + 1),
    contracts,
    rules: [rule(source)],
    blockRange,
    chunk: 20,
    ...(bounds === undefined ? {} : { bounds }),
    onMatch: () => Effect.sync(() => void matches++)
  }).pipe(
    Effect.map((outcome) => ({ outcome, matches })),
    Effect.provideService(ChainData.ChainData, node),
    Effect.exit,
    Effect.runPromise
  )
}

describe("a scan within bounds", () => {
  // Every pair of transfers from the one sender within 3 blocks: 4 * 3 / 2 in a block, 16 with each of 3 before.
  const pairs =
    "system.emitted(tx1.Token.E.Transfer) && system.addressCompare(tx2.from, ==, tx1.from) && system.emitted(tx2.Token.E.Transfer)"

  it("reports every match once when its windows stay within the bounds", async () => {
    const exit = await scan(pairs, 3)
    assert.isTrue(Exit.isSuccess(exit), JSON.stringify(exit))
    const { outcome, matches } = (exit as Exit.Success<{ outcome: Scan.Outcome; matches: number }>).value
    assert.strictEqual(outcome.blocks, 60)
    // Pairs within one block, and with each of the 3 blocks before (fewer for the first three blocks).
    const expected = Array.from({ length: 60 }, (_, i) => 6 + 16 * Math.min(3, i)).reduce((a, b) => a + b, 0)
    assert.strictEqual(matches, expected)
  })

  it("stops at the first window over its matches, saying which window and bound", async () => {
    const exit = await scan(pairs, 3, { bindingsPerStep: 1_000_000, matchesPerBlock: 20 })
    assert.isTrue(Exit.isFailure(exit))
    const error = (exit as Exit.Failure<unknown, Scan.OverBounds>).cause
    const failed = JSON.stringify(error)
    assert.match(failed, /OverBounds/)
    assert.match(failed, /matched more than 20 times a block over blocks 1 to 20: narrow the rules/)
  })

  it("stops a rule that tries too many bindings in a window, before it holds the process", async () => {
    const never = `${pairs} && system.uintCompare(tx2.Token.E.Transfer.value, >, 5)`
    const exit = await scan(never, 3, { bindingsPerStep: 1_000, matchesPerBlock: 100 })
    assert.isTrue(Exit.isFailure(exit))
    assert.match(
      JSON.stringify((exit as Exit.Failure<unknown, Scan.OverBounds>).cause),
      /tried more than 1000 bindings over blocks 1 to 20/
    )
  })
})
