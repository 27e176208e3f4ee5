/**
 * End to end: `vigil monitor backtest` runs watch rules over a range of blocks of a real node (anvil, with an
 * ERC-20 and a router compiled by solc) and prints each match as a JSON line.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Anvil, Solidity } from "@vigil/testkit"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

const compiled = Solidity.fixtures()
let node: Anvil.Anvil
let contractsFile: (cwd: string) => string
const sent: Record<string, { hash: string; block: number }> = {}

beforeAll(async () => {
  node = await Anvil.start()
  const bob = node.accounts[1]!
  const token = { abi: compiled.Token!.abi, address: (await node.deploy(compiled.Token!, [10n ** 30n])).address }
  const router = { abi: compiled.Router!.abi, address: (await node.deploy(compiled.Router!)).address }
  sent.approve = await node.send(token, "approve", [router.address, 10n ** 24n])
  sent.big = await node.send(router, "route", [token.address, bob, 7000n])
  sent.small = await node.send(router, "route", [token.address, bob, 70n])
  await node.mine(3)
  sent.late = await node.send(router, "route", [token.address, bob, 8000n])
  contractsFile = (cwd) => {
    const path = join(cwd, "contracts.json")
    writeFileSync(
      path,
      JSON.stringify([
        { chainId: node.chainId, contractAddress: token.address, label: "Token", ABI: compiled.Token!.abi },
        // The ABI as a JSON string, as explorers return it.
        {
          chainId: node.chainId,
          contractAddress: router.address,
          label: "Router",
          ABI: JSON.stringify(compiled.Router!.abi)
        }
      ])
    )
    return path
  }
}, 60_000)

afterAll(async () => {
  await node?.stop()
})

const backtest = async (args: ReadonlyArray<string>, range?: readonly [number, number]) => {
  const cwd = tempDir()
  const [from, to] = range ?? [0, await node.head()]
  return runVigil(cwd, {}, [
    "monitor",
    "backtest",
    "--rpc",
    node.url,
    "--contracts",
    contractsFile(cwd),
    "--from",
    String(from),
    "--to",
    String(to),
    ...args
  ])
}

/** The JSON lines a backtest printed. */
const matchesOf = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          rule: number
          transactions: Record<string, { hash: string; blockNumber: number }>
          occurrences: Record<string, { args: Record<string, string> }>
          held: Array<string>
        }
    )

describe("vigil monitor backtest", () => {
  it("prints each match of each rule as a JSON line, with its evidence, and a summary on stderr", async () => {
    const run = await backtest([
      "--separately",
      "system.uintCompare(tx1.itx1.Token.E.Transfer.value, >, 1000)",
      "system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route)"
    ])
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = matchesOf(run.stdout)
    const byRule = (rule: number) =>
      lines.filter((l) => l.rule === rule).map((l) => Object.values(l.transactions).map((t) => t.hash))
    assert.deepStrictEqual(byRule(0), [[sent.big!.hash], [sent.late!.hash]])
    // Within the default range of 100 blocks, the approve pairs with every later route.
    assert.deepStrictEqual(byRule(1), [
      [sent.approve!.hash, sent.big!.hash],
      [sent.approve!.hash, sent.small!.hash],
      [sent.approve!.hash, sent.late!.hash]
    ])
    const first = lines.find((l) => l.rule === 0)!
    assert.strictEqual(Object.values(first.occurrences)[0]!.args.value, "7000")
    assert.deepStrictEqual(first.held, ["system.uintCompare(tx1.itx1.Token.E.Transfer.value, >, 1000)"])
    assert.match(run.stderr, /^\d+ blocks, \d+ transactions, 5 matches\n$/)
  })

  it("honours --block-range", async () => {
    const run = await backtest([
      "--block-range",
      "1",
      "system.invoked(tx1.Token.F.approve) && system.invoked(tx2.Router.F.route)"
    ])
    assert.strictEqual(run.code, 0, run.stderr)
    const hashes = matchesOf(run.stdout).map((l) => Object.values(l.transactions).map((t) => t.hash))
    assert.deepStrictEqual(hashes, [[sent.approve!.hash, sent.big!.hash]])
  })

  it("AND-s several expressions into one rule, as a bot does, with tx1 and tx2 the same transactions in each", async () => {
    const run = await backtest([
      "--block-range",
      "1",
      "system.invoked(tx1.Token.F.approve)",
      "system.invoked(tx2.Router.F.route)"
    ])
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = matchesOf(run.stdout)
    assert.deepStrictEqual(
      lines.map((l) => [l.rule, Object.values(l.transactions).map((t) => t.hash)]),
      [[0, [sent.approve!.hash, sent.big!.hash]]]
    )
    const help = await runVigil(tempDir(), {}, ["monitor", "backtest", "--help"])
    assert.match(help.stdout, /AND-ed into one rule/)
    assert.match(help.stdout, /--separately/)
  })

  it("refuses bad input with one line: exit 2 for a wrong command line, 1 for a rule that does not check", async () => {
    const cases: Array<readonly [ReadonlyArray<string>, RegExp, number, (readonly [number, number])?]> = [
      [["system.emitted(tx1.Token.E.Transfer)"], /not a range of blocks/, 2, [9, 3]],
      [["system.emitted(tx1.Token.E.Transfer)"], /at most 100000 at once/, 2, [0, 100_000]],
      [["system.emitted(tx1.Token.E.Transferr)"], /expression 1 does not check at offset \d+: .*Transferr/, 1],
      [
        ['system.emitted(tx1.Token.E.Transfer) && system.inGroup(tx1.from, "watched")'],
        /expression 1 does not check at offset 40: inGroup\(…, "watched"\) needs address groups/,
        1
      ],
      [["--block-range", "-1", "system.emitted(tx1.Token.E.Transfer)"], /--block-range must be 0 or more/, 2],
      [["--literal-defs", "{", "system.emitted(tx1.Token.E.Transfer)"], /--literal-defs/, 2]
    ]
    for (const [args, expected, code, range] of cases) {
      const run = await backtest(args, range)
      assert.strictEqual(run.code, code, `${args.join(" ")}: ${run.stderr}`)
      assert.strictEqual(run.stdout, "")
      assert.match(run.stderr, expected)
      assert.strictEqual(run.stderr.trim().split("\n").length, 1, run.stderr)
    }
    const cwd = tempDir()
    const down = await runVigil(cwd, {}, [
      "monitor",
      "backtest",
      "--rpc",
      "http://127.0.0.1:9",
      "--contracts",
      contractsFile(cwd),
      "--from",
      "0",
      "--to",
      "1",
      "system.emitted(tx1.Token.E.Transfer)"
    ])
    assert.strictEqual(down.code, 1)
    assert.match(down.stderr, /^vigil: http:\/\/127\.0\.0\.1:9: the node cannot be reached/)
  }, 60_000)
})
