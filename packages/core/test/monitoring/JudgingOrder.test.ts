/**
 * The order a follower's step judges its bots in: those over the same decoded blocks whose rules visit the same
 * transactions together, otherwise the bots' own order.
 */
import { Follower, Rules } from "@vigil/core"
import { assert, describe, it } from "vitest"

const contractsOf = (label: string): Follower.Prepared["contracts"] => [
  { label, address: `0x${"a".repeat(40)}`, abi: [] }
]
const shared = contractsOf("USDC")

/** A bot as the order sees it: its rule, the contracts it was decoded for and its reach. */
const bot = (name: string, rule: string, contracts = shared, reach = 0): Follower.Prepared => {
  const parsed = Rules.Parser.parse(rule)
  if (!parsed.ok) throw new Error(parsed.error.message)
  return {
    bot: { id: name } as Follower.Prepared["bot"],
    reach,
    rules: [{ index: 0, expr: parsed.expr, needsTraces: false }],
    normals: [rule],
    key: name,
    contracts,
    channels: []
  }
}

const names = (bots: ReadonlyArray<Follower.Prepared>) => Follower.judgingOrder(bots).map((i) => bots[i]!.bot.id)

describe("the order a step judges bots in", () => {
  const transfer = (n: number) => `system.uintCompare(tx1.USDC.E.Transfer.value, >, ${n})`
  const approval = (n: number) => `system.uintCompare(tx1.USDC.E.Approval.value, >, ${n})`

  it("puts bots whose rules visit the same transactions together, each group in the bots' own order", () => {
    const bots = [
      bot("t1", transfer(1)),
      bot("a1", approval(1)),
      bot("t2", transfer(2)),
      bot("a2", approval(2)),
      bot("t3", `${transfer(3)} && system.addressCompare(tx1.from, !=, 0x${"0".repeat(40)})`)
    ]
    const order = names(bots)
    const at = (name: string) => order.indexOf(name)
    assert.deepStrictEqual([at("t2") - at("t1"), at("t3") - at("t2")], [1, 1], order.join(" "))
    assert.strictEqual(at("a2") - at("a1"), 1, order.join(" "))
  })

  it("keeps apart bots decoded for other contracts or over another reach, whatever their rules", () => {
    const other = contractsOf("USDC")
    const bots = [
      bot("t1", transfer(1)),
      bot("other", transfer(1), other),
      bot("reach", transfer(1), shared, 2),
      bot("t2", transfer(2))
    ]
    const order = names(bots)
    assert.strictEqual(order.indexOf("t2") - order.indexOf("t1"), 1, order.join(" "))
  })

  it("leaves bots that visit the same transactions in their own order", () => {
    const bots = Array.from({ length: 6 }, (_, i) => bot(`t${i}`, transfer(6 - i)))
    assert.deepStrictEqual(names(bots), ["t0", "t1", "t2", "t3", "t4", "t5"])
  })
})
