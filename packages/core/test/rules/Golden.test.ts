/**
 * The golden corpus of evaluation: every example of research §5.7 (FailSafe's and the new capabilities) over
 * hand-built transactions, with the matches each must (and must not) give.
 */
import { Rules } from "@vigil/core"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"

const { Evaluator, Facts, Parser } = Rules
type Tx = Rules.Facts.Transaction

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const PAIR = addr(0x1)
const USDC = addr(0x2)
const ROUTER = addr(0x3)
const WETH = addr(0x4)
const CTOKEN = addr(0x5)
const AAVE = addr(0x6)
const VAULT = addr(0x7)
const POOL = addr(0x8)
const TOKEN = addr(0x9)
const alice = addr(0xa11ce)
const bob = addr(0xb0b)
const attacker = addr(0xbad)

const labels = new Map(
  Object.entries({
    UniswapV2Pair: PAIR,
    USDC,
    UniswapV2Router: ROUTER,
    Router: ROUTER,
    WETH,
    CompoundCToken: CTOKEN,
    AavePool: AAVE,
    Vault: VAULT,
    Pool: POOL,
    Token: TOKEN
  }).map(([label, a]) => [label, new Set([a])])
)
const addressOf = (label: string) => [...labels.get(label)!][0]!

type Args = ReadonlyArray<readonly [string, Rules.Facts.AbiValue]>
interface Spec {
  readonly block: number
  readonly from?: string
  readonly status?: boolean
  readonly events?: ReadonlyArray<readonly [string, string, Args, number?]>
  readonly call?: readonly [string, string, Args, boolean?]
  /** Internal frames: [label, function, args, value, reverted]. */
  readonly frames?: ReadonlyArray<readonly [string, string, Args, bigint?, boolean?]>
}

let counter = 0
const tx = (spec: Spec): Tx => {
  const hash = `0x${(++counter).toString(16).padStart(4, "0")}`
  const frames = spec.frames ?? []
  const sig = (name: string, args: Args) => `${name}(${args.map(() => "uint256").join(",")})`
  return {
    hash,
    blockNumber: spec.block,
    txIndex: counter,
    fields: {
      from: spec.from ?? alice,
      to: spec.call === undefined ? addr(0) : addressOf(spec.call[0]),
      value: 0n,
      status: spec.status ?? true
    },
    frames: [
      {
        index: 0,
        depth: 0,
        fields: {
          from: spec.from ?? alice,
          to: spec.call === undefined ? addr(0) : addressOf(spec.call[0]),
          value: 0n,
          type: "CALL"
        }
      },
      ...frames.map(([label, , , value, reverted], i) => ({
        index: i + 1,
        depth: 1,
        fields: {
          from: i === 0 ? (spec.call === undefined ? addr(0) : addressOf(spec.call[0])) : addressOf(frames[i - 1]![0]),
          to: addressOf(label),
          value: value ?? 0n,
          type: "CALL",
          ...(reverted === true ? { error: "execution reverted" } : {})
        }
      }))
    ],
    events: (spec.events ?? []).map(([label, name, args, frame], logIndex) => ({
      contract: label,
      name,
      signature: sig(name, args),
      args: Facts.tuple(args),
      address: addressOf(label),
      logIndex,
      ...(frame === undefined ? {} : { frame })
    })),
    calls: [
      ...(spec.call === undefined
        ? []
        : [
            {
              contract: spec.call[0],
              name: spec.call[1],
              signature: sig(spec.call[1], spec.call[2]),
              args: Facts.tuple(spec.call[2]),
              frame: 0,
              reverted: spec.call[3] ?? false,
              reentrant: false
            }
          ]),
      ...frames.map(([label, name, args, , reverted], i) => ({
        contract: label,
        name,
        signature: sig(name, args),
        args: Facts.tuple(args),
        frame: i + 1,
        reverted: reverted ?? false,
        reentrant: false
      }))
    ]
  }
}

const run = (source: string, txs: ReadonlyArray<Tx>, extra: Partial<Rules.Facts.Facts> = {}) => {
  const parsed = Parser.parse(source)
  if (!parsed.ok) throw new Error(parsed.error.message)
  const facts: Rules.Facts.Facts = { transactions: txs, blockRange: 100, labels, ...extra }
  return Evaluator.evaluate(parsed.expr, facts).map((m) =>
    Object.fromEntries(Object.entries(m.transactions).map(([k, at]) => [k, txs[at]!.hash]))
  )
}

describe("the examples of research §5.7, evaluated", () => {
  it("system.emitted(tx1.UniswapV2Pair.E.Swap)", () => {
    const swap = tx({ block: 1, events: [["UniswapV2Pair", "Swap", [["amount0In", 5n]]]] })
    const other = tx({ block: 1, events: [["USDC", "Transfer", [["value", 5n]]]] })
    assert.deepStrictEqual(run("system.emitted(tx1.UniswapV2Pair.E.Swap)", [swap, other]), [{ tx1: swap.hash }])
  })

  it("system.uintCompare(tx1.USDC.F.transfer.value, >, 1000000000000000000000000000)", () => {
    const big = tx({
      block: 1,
      call: [
        "USDC",
        "transfer",
        [
          ["to", bob],
          ["value", 10n ** 27n + 1n]
        ]
      ]
    })
    const exact = tx({
      block: 1,
      call: [
        "USDC",
        "transfer",
        [
          ["to", bob],
          ["value", 10n ** 27n]
        ]
      ]
    })
    const internal = tx({
      block: 1,
      frames: [
        [
          "USDC",
          "transfer",
          [
            ["to", bob],
            ["value", 10n ** 28n]
          ]
        ]
      ]
    })
    assert.deepStrictEqual(
      run("system.uintCompare(tx1.USDC.F.transfer.value, >, 1000000000000000000000000000)", [big, exact, internal]),
      [{ tx1: big.hash }]
    )
  })

  it("router then WETH transfer, as internal frames in that order", () => {
    const inOrder = tx({
      block: 1,
      frames: [
        ["UniswapV2Router", "swapExactTokensForTokens", []],
        ["WETH", "transfer", []]
      ]
    })
    const reversed = tx({
      block: 1,
      frames: [
        ["WETH", "transfer", []],
        ["UniswapV2Router", "swapExactTokensForTokens", []]
      ]
    })
    assert.deepStrictEqual(
      run(
        "system.invoked(tx1.itx1.UniswapV2Router.F.swapExactTokensForTokens) && system.invoked(tx1.itx2.WETH.F.transfer)",
        [inOrder, reversed]
      ),
      [{ tx1: inOrder.hash }]
    )
  })

  it("a mint never redeemed, or a large mint", () => {
    const rule =
      "system.invoked(tx1.CompoundCToken.F.mint) && system.noMatches(system.invoked(tx2.CompoundCToken.F.redeem)) || system.uintCompare(tx1.CompoundCToken.F.mint.mintAmount, >, 50000000000000)"
    const smallRedeemed = tx({ block: 1, call: ["CompoundCToken", "mint", [["mintAmount", 10n]]] })
    const redeem = tx({ block: 2, call: ["CompoundCToken", "redeem", [["amount", 10n]]] })
    const bigRedeemed = tx({ block: 3, call: ["CompoundCToken", "mint", [["mintAmount", 60_000_000_000_000n]]] })
    const redeemAgain = tx({ block: 4, call: ["CompoundCToken", "redeem", [["amount", 10n]]] })
    const kept = tx({ block: 5, call: ["CompoundCToken", "mint", [["mintAmount", 10n]]] })
    assert.deepStrictEqual(run(rule, [smallRedeemed, redeem, bigRedeemed, redeemAgain, kept]), [
      { tx1: bigRedeemed.hash },
      { tx1: kept.hash }
    ])
  })

  it("system.addressCompare(tx1.AavePool.E.Deposit.user, ==, ${suspiciousUser}) with the placeholder substituted", () => {
    const contracts: ReadonlyArray<Rules.Checker.Contract> = [
      {
        label: "AavePool",
        address: AAVE,
        abi: [{ type: "event", name: "Deposit", inputs: [{ name: "user", type: "address" }] }]
      }
    ]
    const literalDefs = Effect.runSync(Rules.Literals.fromJson(`{"suspiciousUser": "${attacker}"}`))
    const checked = Rules.Checker.check("system.addressCompare(tx1.AavePool.E.Deposit.user, ==, ${suspiciousUser})", {
      contracts,
      literalDefs
    })
    if (!checked.ok) throw new Error(checked.problems[0]!.message)
    const bad = tx({ block: 1, events: [["AavePool", "Deposit", [["user", attacker]]]] })
    const good = tx({ block: 1, events: [["AavePool", "Deposit", [["user", alice]]]] })
    const facts: Rules.Facts.Facts = { transactions: [bad, good], blockRange: 100, labels }
    assert.deepStrictEqual(
      Evaluator.evaluate(checked.rule.expr, facts).map((m) => m.transactions),
      [{ tx1: 0 }]
    )
  })

  it("large native ETH leaving the vault through an internal call of a successful transaction", () => {
    const rule = `system.nativeTransfer(tx1.itx1) && system.addressCompare(tx1.itx1.from, ==, ${VAULT}) && system.uintCompare(tx1.itx1.value, >, 100e18) && system.boolCompare(tx1.status, ==, true)`
    // The vault calls out with 200 ETH: its frame is the second (the first is the call into the vault).
    const drained = tx({
      block: 1,
      frames: [
        ["Vault", "withdraw", []],
        ["Pool", "receive", [], 200n * 10n ** 18n]
      ]
    })
    const small = tx({
      block: 1,
      frames: [
        ["Vault", "withdraw", []],
        ["Pool", "receive", [], 10n ** 18n]
      ]
    })
    const failed = tx({
      block: 1,
      status: false,
      frames: [
        ["Vault", "withdraw", []],
        ["Pool", "receive", [], 200n * 10n ** 18n]
      ]
    })
    assert.deepStrictEqual(run(rule, [drained, small, failed]), [{ tx1: drained.hash }])
  })

  it("a privileged function reached internally and reverted", () => {
    const reverted = tx({
      block: 1,
      frames: [
        ["Router", "execute", []],
        ["Vault", "transferOwnership", [["owner", bob]], 0n, true]
      ]
    })
    const succeeded = tx({ block: 1, frames: [["Vault", "transferOwnership", [["owner", bob]]]] })
    const direct = tx({ block: 1, call: ["Vault", "transferOwnership", [["owner", bob]], true] })
    assert.deepStrictEqual(run("system.reverted(tx1.itx*.Vault.F.transferOwnership)", [reverted, succeeded, direct]), [
      { tx1: reverted.hash }
    ])
  })

  it("the same sender deposits, then withdraws a large amount within 5 blocks", () => {
    const rule =
      "system.emitted(tx1.Pool.E.Deposit) && system.addressCompare(tx2.from, ==, tx1.from) && system.uintCompare(tx2.Pool.E.Withdraw.amount, >, 1000)"
    const deposit = tx({ block: 10, from: alice, events: [["Pool", "Deposit", [["amount", 5n]]]] })
    const otherWithdraws = tx({ block: 11, from: bob, events: [["Pool", "Withdraw", [["amount", 5000n]]]] })
    const withdraws = tx({ block: 14, from: alice, events: [["Pool", "Withdraw", [["amount", 5000n]]]] })
    const late = tx({ block: 16, from: alice, events: [["Pool", "Withdraw", [["amount", 5000n]]]] })
    assert.deepStrictEqual(run(rule, [deposit, otherWithdraws, withdraws, late], { blockRange: 5 }), [
      { tx1: deposit.hash, tx2: withdraws.hash }
    ])
  })

  it("a flash-loan-shaped sequence from a risky sender, or a burst of 10 or more Transfers", () => {
    const rule =
      "(system.invoked(tx1.itx1.AavePool.F.flashLoan) && system.invoked(tx1.itx2.Router.F.swapExactTokensForTokens) && system.uintCompare(tx1.riskscore, >=, 75)) || system.countCompare(tx1.USDC.E.Transfer, >=, 10)"
    const flash = tx({
      block: 1,
      frames: [
        ["AavePool", "flashLoan", []],
        ["Router", "swapExactTokensForTokens", []]
      ]
    })
    const risky = { ...flash, hash: "0xrisky", riskscore: 90n }
    const burst = tx({
      block: 1,
      events: Array.from({ length: 10 }, () => ["USDC", "Transfer", [["value", 1n]]] as const)
    })
    const nine = tx({
      block: 1,
      events: Array.from({ length: 9 }, () => ["USDC", "Transfer", [["value", 1n]]] as const)
    })
    assert.deepStrictEqual(run(rule, [flash, risky, burst, nine]), [{ tx1: "0xrisky" }, { tx1: burst.hash }])
  })

  it("an approval to an address outside the allow-list", () => {
    const rule =
      'system.emitted(tx1.Token.E.Approval) && !system.inGroup(tx1.Token.E.Approval.spender, "trusted_spenders")'
    const trusted = tx({ block: 1, events: [["Token", "Approval", [["spender", ROUTER]]]] })
    const unknown = tx({ block: 1, events: [["Token", "Approval", [["spender", attacker]]]] })
    const groups = new Map([["trusted_spenders", new Set([ROUTER])]])
    assert.deepStrictEqual(run(rule, [trusted, unknown], { groups }), [{ tx1: unknown.hash }])
  })
})
