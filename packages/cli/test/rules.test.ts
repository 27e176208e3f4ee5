/** End to end: `vigil rules check` lints watch rules against a contracts file, as bot creation will. */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

const transfer = {
  type: "event",
  name: "Transfer",
  inputs: [
    { name: "from", type: "address", indexed: true },
    { name: "to", type: "address", indexed: true },
    { name: "value", type: "uint256" }
  ]
}
const transferFn = {
  type: "function",
  name: "transfer",
  inputs: [
    { name: "to", type: "address" },
    { name: "value", type: "uint256" }
  ],
  outputs: [{ name: "", type: "bool" }]
}

/** A fresh folder with the contracts file (folders are removed after each test). */
const withContracts = () => {
  const cwd = tempDir()
  writeFileSync(
    join(cwd, "contracts.json"),
    JSON.stringify([
      {
        chainId: 1,
        contractAddress: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        label: "USDC",
        ABI: [transfer, transferFn]
      },
      // The ABI as a JSON string, as explorers return it.
      {
        chainId: 1,
        contractAddress: "0x6b175474e89094c44da98b954eedeac495271d0f",
        label: "DAI",
        ABI: JSON.stringify([transfer])
      },
      { chainId: 137, contractAddress: "0x2791bca1f2de4661ed88a30c99a7a9449aa84174", label: "USDC", ABI: [transfer] }
    ])
  )
  return cwd
}

describe("vigil rules check", () => {
  it("prints the normal form of the rule (its expressions AND-ed), placeholders from the raw JSON of --literal-defs", async () => {
    const cwd = withContracts()
    const r = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "1",
      "--literal-defs",
      '{"max": 1e+27}',
      "system.uintCompare(tx1.USDC.F.transfer.value, >, ${max})",
      "system.emitted(tx1.DAI.E.Transfer), system.noMatches(system.emitted(tx1.USDC.E.Transfer))"
    ])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.deepStrictEqual(r.stdout.trim().split("\n"), [
      "system.uintCompare(tx1.USDC.F.transfer.value, >, 1000000000000000000000000000) && (system.emitted(tx1.DAI.E.Transfer) && !system.emitted(tx1.USDC.E.Transfer))"
    ])
  })

  it("shows each problem under its expression with a caret at its position, and exits 1", async () => {
    const cwd = withContracts()
    const r = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "1",
      "system.emitted(tx1.USDT.E.Transfer)",
      "system.uintCompare(tx1.USDC.F.transfer.to, >, 1)",
      "system.emitted(tx1.USDC.E.Transfer)"
    ])
    assert.strictEqual(r.code, 1)
    assert.deepStrictEqual(r.stdout.trim().split("\n"), [
      "expression 1: system.emitted(tx1.USDT.E.Transfer)",
      "                                 ^ no contract labelled USDT on this chain (did you mean USDC?)",
      "expression 2: system.uintCompare(tx1.USDC.F.transfer.to, >, 1)",
      "                                 ^ uintCompare compares uint values; this is address (did you mean addressCompare?)"
    ])
    assert.strictEqual(r.stderr.trim(), "vigil: 2 of 3 expressions did not check")
  })

  it("asks which chain when the file has several, and refuses a simple rule's advanced construct", async () => {
    const cwd = withContracts()
    const several = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "system.emitted(tx1.USDC.E.Transfer)"
    ])
    assert.strictEqual(several.code, 1)
    assert.match(several.stderr, /has contracts of chains 1, 137: give --chain ID/)
    const simple = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "137",
      "--type",
      "simple",
      "system.emitted(tx1.USDC.E.Transfer) || true"
    ])
    assert.strictEqual(simple.code, 1)
    assert.include(simple.stdout, "set watchRuleType to advanced")
  })

  it("refuses transactions no equality joins, saying how to join them", async () => {
    const cwd = withContracts()
    const loose = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "1",
      "system.emitted(tx1.USDC.E.Transfer)",
      "system.emitted(tx2.USDC.E.Transfer)"
    ])
    assert.strictEqual(loose.code, 1)
    assert.include(loose.stdout, "tx2 is not joined to tx1 by any equality")
    assert.include(loose.stdout, "system.addressCompare(tx2.from, ==, tx1.from)")
    const joined = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "1",
      "system.emitted(tx1.USDC.E.Transfer)",
      "system.emitted(tx2.USDC.E.Transfer) && system.addressCompare(tx2.USDC.E.Transfer.to, ==, tx1.USDC.E.Transfer.to)"
    ])
    assert.strictEqual(joined.code, 0, joined.stdout)
  })

  it("refuses what no data feeds yet (address groups, transaction risk scores), saying why", async () => {
    const cwd = withContracts()
    const refused = await runVigil(cwd, {}, [
      "rules",
      "check",
      "--contracts",
      "contracts.json",
      "--chain",
      "1",
      'system.emitted(tx1.USDC.E.Transfer) && system.inGroup(tx1.from, "watched")',
      "system.uintCompare(tx1.riskscore, >=, 75)"
    ])
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stdout, 'inGroup(…, "watched") needs address groups, which this server does not keep yet')
    assert.include(refused.stdout, "riskscore is not looked up for transactions yet")
  })
})

describe("vigil rules check --json", () => {
  it("prints one JSON record: the normal form, or each problem with its offset and candidates (exit 1)", async () => {
    const cwd = withContracts()
    const args = ["rules", "check", "--contracts", "contracts.json", "--chain", "1", "--json"]
    const good = await runVigil(cwd, {}, [...args, "system.emitted(tx1.USDC.E.Transfer)"])
    assert.strictEqual(good.code, 0, good.stderr)
    assert.deepStrictEqual(JSON.parse(good.stdout), { ok: true, normal: "system.emitted(tx1.USDC.E.Transfer)" })
    const bad = await runVigil(cwd, {}, [...args, "system.emitted(tx1.USDC.E.Transferr)"])
    assert.strictEqual(bad.code, 1)
    const record = JSON.parse(bad.stdout) as {
      ok: boolean
      problems: ReadonlyArray<{ expression: number; offset: number; candidates: ReadonlyArray<string> }>
    }
    assert.isFalse(record.ok)
    assert.strictEqual(record.problems[0]!.expression, 0)
    assert.include(record.problems[0]!.candidates.join(" "), "Transfer")
    assert.strictEqual(bad.stdout.trim().split("\n").length, 1, "one record")
  })
})
