/**
 * The evaluator: golden cases of each semantic rule, and properties against the brute-force reference evaluator
 * (every assignment of every variable) on generated transactions and rules.
 */
import { fc, test } from "@fast-check/vitest"
import { Rules } from "@vigil/core"
import { assert, describe, it } from "vitest"

const { Evaluator, Facts, Parser, Printer } = Rules
type Transaction = Rules.Facts.Transaction

const parsed = (source: string) => {
  const r = Parser.parse(source)
  if (!r.ok) throw new Error(r.error.message)
  return r.expr
}
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const labels = new Map([
  ["A", new Set([addr(0xa)])],
  ["B", new Set([addr(0xb)])]
])

/** A transaction with events and calls of labels A and B (args: to, value) and optional internal frames. */
const tx = (
  blockNumber: number,
  txIndex: number,
  parts: {
    readonly events?: ReadonlyArray<readonly [string, string, bigint, (number | undefined)?]>
    readonly calls?: ReadonlyArray<readonly [string, string, bigint, number, boolean?]>
    readonly frames?: number
    readonly from?: string
  } = {}
): Transaction => ({
  hash: `0x${blockNumber}${txIndex}`,
  blockNumber,
  txIndex,
  fields: { from: parts.from ?? addr(1), to: addr(0xa), value: 0n, status: true },
  events: (parts.events ?? []).map(([contract, name, value, frame], logIndex) => ({
    contract,
    name,
    signature: `${name}(address,uint256)`,
    args: Facts.tuple([
      ["to", addr(Number(value % 3n))],
      ["value", value]
    ]),
    address: [...labels.get(contract)!][0]!,
    logIndex,
    ...(frame === undefined ? {} : { frame })
  })),
  calls: (parts.calls ?? []).map(([contract, name, value, frame, reverted]) => ({
    contract,
    name,
    signature: `${name}(address,uint256)`,
    args: Facts.tuple([
      ["to", addr(Number(value % 3n))],
      ["value", value]
    ]),
    frame,
    reverted: reverted ?? false,
    reentrant: false
  })),
  ...(parts.frames === undefined
    ? {}
    : {
        frames: Array.from({ length: parts.frames + 1 }, (_, index) => ({
          index,
          depth: index === 0 ? 0 : 1,
          fields: { from: addr(index), to: addr(index % 2 === 0 ? 0xa : 0xb), value: BigInt(index), type: "CALL" }
        }))
      })
})

const facts = (transactions: ReadonlyArray<Transaction>, blockRange = 100): Rules.Facts.Facts => ({
  transactions,
  blockRange,
  labels
})
const matches = (source: string, f: Rules.Facts.Facts) =>
  Evaluator.evaluate(parsed(source), f).map((m) => m.transactions)

describe("evaluation, case by case", () => {
  it("matches a single-transaction rule once per transaction that satisfies it", () => {
    const f = facts([
      tx(1, 0, { events: [["A", "Transfer", 5n]] }),
      tx(1, 1, { events: [["A", "Transfer", 2000n]] }),
      tx(2, 0)
    ])
    assert.deepStrictEqual(matches("system.uintCompare(tx1.A.E.Transfer.value, >, 1000)", f), [{ tx1: 1 }])
    assert.deepStrictEqual(matches("system.emitted(tx1.A.E.Transfer)", f), [{ tx1: 0 }, { tx1: 1 }])
  })

  it("visits only transactions with the occurrences a rule needs, and sees transactions added to the list", () => {
    // The evaluator indexes a list of transactions by the contracts and names of their occurrences on first use;
    // a list that grows in place (a window being filled) must not be answered from the old index.
    const list: Array<Transaction> = [tx(1, 0, { events: [["A", "Approval", 1n]] }), tx(1, 1)]
    const f = facts(list)
    const rule = "system.uintCompare(tx1.A.E.Transfer.value, >, 1000) && system.emitted(tx2.A.E.Approval)"
    assert.deepStrictEqual(matches(rule, f), [])
    assert.deepStrictEqual(matches("system.emitted(tx1.A.E.Approval)", f), [{ tx1: 0 }])
    list.push(tx(2, 0, { events: [["A", "Transfer", 5000n]] }), tx(3, 0, { events: [["A", "Approval", 2n]] }))
    assert.deepStrictEqual(matches(rule, f), [{ tx1: 2, tx2: 3 }])
    assert.deepStrictEqual(matches("system.emitted(tx1.A.E.Approval)", f), [{ tx1: 0 }, { tx1: 3 }])
  })

  it("joins references to one occurrence: both conditions must hold for the same event", () => {
    // One big Transfer to addr(1), one small one to addr(2): no single Transfer is big and to addr(2).
    const f = facts([
      tx(1, 0, {
        events: [
          ["A", "Transfer", 3001n],
          ["A", "Transfer", 2n]
        ]
      })
    ])
    const rule = `system.uintCompare(tx1.A.E.Transfer.value, >, 1000) && system.addressCompare(tx1.A.E.Transfer.to, ==, ${addr(2)})`
    assert.deepStrictEqual(matches(rule, f), [])
    // With #1 and #2 the two references are two distinct occurrences, in order.
    const two = `system.uintCompare(tx1.A.E.Transfer#1.value, >, 1000) && system.addressCompare(tx1.A.E.Transfer#2.to, ==, ${addr(2)})`
    assert.deepStrictEqual(matches(two, f), [{ tx1: 0 }])
    const reversed = `system.addressCompare(tx1.A.E.Transfer#1.to, ==, ${addr(2)}) && system.uintCompare(tx1.A.E.Transfer#2.value, >, 1000)`
    assert.deepStrictEqual(matches(reversed, f), [])
  })

  it("binds transactions in order within the block range, and correlates a negation with what is bound", () => {
    const f = facts([
      tx(1, 0, { calls: [["B", "approve", 1n, 0]] }),
      tx(2, 0, { calls: [["B", "transferFrom", 500n, 0]] }),
      tx(3, 0, { calls: [["B", "transferFrom", 700n, 0]] })
    ])
    const rule =
      "system.uintCompare(tx2.B.F.transferFrom.value, >, 100) && system.noMatches(system.invoked(tx1.B.F.approve))"
    assert.deepStrictEqual(matches(rule, f), [], "an approve came before each")
    assert.deepStrictEqual(
      matches(rule, { ...f, blockRange: 1 }),
      [{ tx2: 2 }],
      "the approve is out of range for the last"
    )
    assert.deepStrictEqual(
      matches("system.invoked(tx1.B.F.approve) && system.invoked(tx2.B.F.transferFrom)", { ...f, blockRange: 1 }),
      [{ tx1: 0, tx2: 1 }]
    )
  })

  it("binds internal frames in execution order, and itx* to any internal frame", () => {
    const f = facts([
      tx(1, 0, {
        frames: 2,
        calls: [
          ["B", "swap", 1n, 1],
          ["A", "pay", 2n, 2]
        ]
      }),
      tx(1, 1, {
        frames: 2,
        calls: [
          ["A", "pay", 2n, 1],
          ["B", "swap", 1n, 2]
        ]
      })
    ])
    assert.deepStrictEqual(matches("system.invoked(tx1.itx1.A.F.pay) && system.invoked(tx1.itx2.B.F.swap)", f), [
      { tx1: 1 }
    ])
    assert.deepStrictEqual(matches("system.invoked(tx1.itx*.B.F.swap)", f), [{ tx1: 0 }, { tx1: 1 }])
    assert.deepStrictEqual(
      matches("system.invoked(tx1.A.F.pay)", f),
      [],
      "a top-level reference means the top-level call"
    )
  })

  it("binds only the internal frames that emitted or made what the rule needs in them", () => {
    // 40 internal frames; A's transfers in frames 7 and 31 (the one in 31 above the threshold), a call in 12.
    const f = facts([
      tx(1, 0, {
        frames: 40,
        events: [
          ["A", "Transfer", 5n, 7],
          ["A", "Approval", 9000n, 20],
          ["A", "Transfer", 9000n, 31]
        ],
        calls: [["B", "swap", 1n, 12]]
      })
    ])
    const within = (source: string) =>
      Evaluator.evaluateWithin(parsed(source), f, { bindings: Infinity, matches: Infinity })
    const large = within("system.uintCompare(tx1.itx1.A.E.Transfer.value, >, 1000)")
    const frames = (o: Rules.Evaluator.Outcome) =>
      o.matches.map((m) => Object.fromEntries(Object.entries(m.evidence.frames).map(([k, v]) => [k, v.index])))
    assert.deepStrictEqual(frames(large), [{ "tx1.itx1": 31 }])
    // The transaction, each of the two frames with a transfer and its transfer: not all 40 frames.
    assert.isAtMost(large.bindings, 5)
    const both = within("system.emitted(tx1.itx1.A.E.Transfer) && system.invoked(tx1.itx2.B.F.swap)")
    assert.deepStrictEqual(frames(both), [{ "tx1.itx1": 7, "tx1.itx2": 12 }])
    assert.isAtMost(both.bindings, 8)
    // A frame the rule may leave unbound, or reads only through a negation, is still tried in every frame.
    assert.lengthOf(within("system.emitted(tx1.A.E.Approval) || system.emitted(tx1.itx1.B.E.Transfer)").matches, 1)
    assert.lengthOf(within("system.emitted(tx1.A.E.Approval) && !system.emitted(tx1.itx1.A.E.Transfer)").matches, 0)
    assert.lengthOf(within("system.emitted(tx1.A.E.Approval) && !system.emitted(tx1.itx1.B.E.Transfer)").matches, 1)
  })
})

describe("an evaluation within bounds", () => {
  // 60 transactions with a transfer each: a loose pair rule has 60 * 59 / 2 = 1,770 matches.
  const crowd = facts(
    Array.from({ length: 60 }, (_, i) => tx(1 + Math.floor(i / 10), i % 10, { events: [["A", "Transfer", BigInt(i)]] }))
  )
  const loose = parsed("system.emitted(tx1.A.E.Transfer) && system.emitted(tx2.A.E.Transfer)")

  it("finds the same matches as without bounds when it stays within them", () => {
    const all = Evaluator.evaluate(loose, crowd)
    assert.strictEqual(all.length, 1_770)
    const within = Evaluator.evaluateWithin(loose, crowd, { bindings: 1_000_000, matches: 2_000 })
    assert.isUndefined(within.exceeded)
    assert.deepStrictEqual(within.matches, all)
  })

  it("stops at the bindings or the matches it may try, and says which", () => {
    const bindings = Evaluator.evaluateWithin(loose, crowd, { bindings: 500, matches: Infinity })
    assert.strictEqual(bindings.exceeded, "bindings")
    assert.isBelow(bindings.matches.length, 500)
    const found = Evaluator.evaluateWithin(loose, crowd, { bindings: Infinity, matches: 100 })
    assert.strictEqual(found.exceeded, "matches")
    assert.strictEqual(found.matches.length, 101)
    // A negation's search counts too: each approval looks for a later transfer over the whole crowd.
    const negated = parsed("system.emitted(tx1.A.E.Transfer) && !system.uintCompare(tx2.A.E.Transfer.value, >, 1000)")
    assert.strictEqual(
      Evaluator.evaluateWithin(negated, crowd, { bindings: 200, matches: Infinity }).exceeded,
      "bindings"
    )
    // Only matches completing at `fromBlock` or later count, and only they are kept: the crowd's last block (6)
    // completes 10 * 50 + 45 of them, the earlier ones were judged in earlier steps.
    const fresh = Evaluator.evaluateWithin(loose, crowd, { bindings: Infinity, matches: 545, fromBlock: 6 })
    assert.isUndefined(fresh.exceeded)
    assert.strictEqual(fresh.matches.length, 545)
    assert.strictEqual(
      Evaluator.evaluateWithin(loose, crowd, { bindings: Infinity, matches: 544, fromBlock: 6 }).exceeded,
      "matches"
    )
    // Bounds end with the evaluation: the next one is unbounded again.
    assert.strictEqual(Evaluator.evaluate(loose, crowd).length, 1_770)
  })
})

describe("a wide window: what is kept, and what is counted", () => {
  // 500 blocks of 4 transactions to one contract, and a rule joining three of them on that contract: every triple
  // of the window matches (2,000 choose 3, about 1.3 billion), so the bounds are all that hold the search.
  const wide = facts(
    Array.from({ length: 2_000 }, (_, i) => tx(1 + Math.floor(i / 4), i % 4)),
    500
  )
  const triples = parsed("system.addressCompare(tx1.to, ==, tx2.to) && system.addressCompare(tx2.to, ==, tx3.to)")

  it("keeps no match judged in an earlier step: a step over the last block stops at its new matches", () => {
    const step = Evaluator.evaluateWithin(triples, wide, { bindings: 1_000_000, matches: 100, fromBlock: 500 })
    assert.strictEqual(step.exceeded, "matches")
    assert.strictEqual(step.matches.length, 101)
    for (const m of step.matches) assert.strictEqual(wide.transactions[m.transactions["tx3"]!]!.blockNumber, 500)
    // Every binding tried leads to a new match or to the transactions of one: old triples are not searched.
    assert.isBelow(step.bindings, 2_000 * 3)
  })

  it("stops at the bindings it may try when nothing new can match, holding nothing", () => {
    const never = parsed(
      "system.addressCompare(tx1.to, ==, tx2.to) && system.addressCompare(tx2.to, ==, tx3.to) && system.uintCompare(tx3.value, >, 0)"
    )
    const step = Evaluator.evaluateWithin(never, wide, { bindings: 1_000_000, matches: 100, fromBlock: 1 })
    assert.strictEqual(step.exceeded, "bindings")
    assert.deepStrictEqual(step.matches, [])
    assert.strictEqual(step.bindings, 1_000_000)
  })

  it("finds a rule without a forward negation has nothing pending, without searching", () => {
    const pending = Evaluator.evaluateWithin(
      triples,
      { ...wide, head: 500 },
      { bindings: 10, matches: 0, pendingOnly: true }
    )
    assert.deepStrictEqual(pending, { matches: [], bindings: 0 })
    assert.isFalse(Evaluator.looksForward(triples))
    assert.isTrue(
      Evaluator.looksForward(parsed("system.emitted(tx1.A.E.Transfer) && !system.emitted(tx2.A.E.Transfer)"))
    )
  })
})

describe("what a match carries, and what cannot be evaluated", () => {
  it("gives the bound transactions, frames and occurrences with decoded arguments, and the terms that held", () => {
    const f = facts([tx(7, 3, { frames: 2, events: [["A", "Transfer", 2000n, 1]], calls: [["B", "swap", 4n, 1]] })])
    const [m] = Evaluator.evaluate(
      parsed(
        "system.emitted(tx1.itx1.A.E.Transfer) && system.uintCompare(tx1.itx1.A.E.Transfer.value, >, 1000) && (system.invoked(tx1.itx1.B.F.swap) || system.invoked(tx1.itx1.B.F.pay))"
      ),
      f
    )
    assert.deepStrictEqual(m!.evidence, {
      transactions: { tx1: { hash: "0x73", blockNumber: 7, txIndex: 3 } },
      frames: { "tx1.itx1": { index: 1, from: addr(1), to: addr(0xb), type: "CALL" } },
      occurrences: {
        "tx1.itx1.A.E.Transfer": {
          contract: "A",
          name: "Transfer",
          signature: "Transfer(address,uint256)",
          args: { to: addr(2), value: "2000" },
          logIndex: 0
        },
        "tx1.itx1.B.F.swap": {
          contract: "B",
          name: "swap",
          signature: "swap(address,uint256)",
          args: { to: addr(1), value: "4" },
          frame: 1,
          reverted: false
        }
      },
      held: [
        "system.emitted(tx1.itx1.A.E.Transfer)",
        "system.uintCompare(tx1.itx1.A.E.Transfer.value, >, 1000)",
        "system.invoked(tx1.itx1.B.F.swap)"
      ]
    })
  })

  it("says a rule that needs traces cannot be evaluated on transactions without them, instead of finding no match", () => {
    const untraced = facts([tx(1, 0, { events: [["A", "Transfer", 1n]] })])
    assert.match(
      Evaluator.notEvaluable(parsed("system.invoked(tx1.itx1.A.F.pay)"), untraced) ?? "",
      /uses internal frames \(tx1.itx1\), which needs call traces .* transaction 0x10 of block 1 has none/
    )
    assert.isUndefined(Evaluator.notEvaluable(parsed("system.emitted(tx1.A.E.Transfer)"), untraced))
    assert.isUndefined(
      Evaluator.notEvaluable(parsed("system.invoked(tx1.itx1.A.F.pay)"), facts([tx(1, 0, { frames: 1 })]))
    )
  })

  it("holds a match whose negation looks forward as pending until the block range past it has been seen", () => {
    const f = facts([tx(10, 0, { calls: [["A", "mint", 1n, 0]] })], 5)
    const rule = parsed("system.invoked(tx1.A.F.mint) && !system.invoked(tx2.A.F.redeem)")
    assert.deepStrictEqual(
      Evaluator.evaluate(rule, { ...f, head: 12 }).map((m) => m.pending),
      [true]
    )
    assert.deepStrictEqual(
      Evaluator.evaluate(rule, { ...f, head: 15 }).map((m) => m.pending),
      [false]
    )
    assert.deepStrictEqual(
      Evaluator.evaluate(rule, f).map((m) => m.pending),
      [false],
      "historical: every window closed"
    )
    const redeemed = facts(
      [tx(10, 0, { calls: [["A", "mint", 1n, 0]] }), tx(12, 0, { calls: [["A", "redeem", 1n, 0]] })],
      5
    )
    assert.deepStrictEqual(Evaluator.evaluate(rule, { ...redeemed, head: 12 }), [], "a redeem in range undoes it")
  })
})

// ---------------------------------------------------------------- generated facts and rules
const eventGen = (frames: number) =>
  fc.tuple(
    fc.constantFrom("A", "B"),
    fc.constantFrom("Transfer", "Approval"),
    fc.bigInt(0n, 5n),
    fc.option(fc.integer({ min: 1, max: frames }), { nil: undefined })
  )
const callGen = (frames: number) =>
  fc.tuple(
    fc.constantFrom("A", "B"),
    fc.constantFrom("pay", "swap"),
    fc.bigInt(0n, 5n),
    fc.integer({ min: 0, max: frames }),
    fc.boolean()
  )
/**
 * Transactions (1 to `transactions`, a few blocks apart) with events, calls and two internal frames each, a block
 * range up to `maxRange`, and, with `head`, a head somewhat past the last block (so forward negations can pend).
 */
const generated = (options: {
  readonly transactions: number
  readonly calls: number
  readonly maxRange: number
  readonly head: boolean
  /** Internal frames of each transaction (2 unless said). */
  readonly frames?: number
}) =>
  fc
    .array(
      fc.record({
        gap: fc.integer({ min: 0, max: 2 }),
        events: fc.array(eventGen(options.frames ?? 2), { maxLength: 2 }),
        calls: fc.array(callGen(options.frames ?? 2), { maxLength: options.calls }),
        from: fc.constantFrom(addr(1), addr(2))
      }),
      { minLength: 1, maxLength: options.transactions }
    )
    .chain((txs) =>
      fc.record({
        txs: fc.constant(txs),
        blockRange: fc.integer({ min: 0, max: options.maxRange }),
        past: fc.integer({ min: 0, max: 4 })
      })
    )
    .map(({ txs, blockRange, past }): Rules.Facts.Facts => {
      let block = 1
      const transactions = txs.map((t, i) => {
        block += t.gap
        return tx(block, i, { events: t.events, calls: t.calls, frames: options.frames ?? 2, from: t.from })
      })
      return { ...facts(transactions, blockRange), ...(options.head ? { head: block + past } : {}) }
    })

const factsGen = generated({ transactions: 3, calls: 2, maxRange: 3, head: false })

const txVar = fc.constantFrom("tx1", "tx2")
const frameGen = fc.tuple(txVar, fc.constantFrom("", ".itx1", ".itx2", ".itx*", ".any")).map(([t, i]) => `${t}${i}`)
const eventRef = fc
  .tuple(frameGen, fc.constantFrom("A", "B"), fc.constantFrom("Transfer", "Approval"), fc.constantFrom("", "#1", "#2"))
  .map(([f, c, n, k]) => `${f}.${c}.E.${n}${f.includes("*") || f.includes("any") ? "" : k}`)
const callRef = fc
  .tuple(frameGen, fc.constantFrom("A", "B"), fc.constantFrom("pay", "swap"))
  .map(([f, c, n]) => `${f}.${c}.F.${n}`)
const atomGen: fc.Arbitrary<string> = fc.oneof(
  eventRef.map((r) => `system.emitted(${r})`),
  callRef.map((r) => `system.invoked(${r})`),
  callRef.map((r) => `system.reverted(${r})`),
  fc
    .tuple(eventRef, fc.constantFrom(">", "<=", "=="), fc.bigInt(0n, 5n))
    .map(([r, op, n]) => `system.uintCompare(${r}.value, ${op}, ${n})`),
  fc.tuple(callRef, fc.constantFrom("==", "!=")).map(([r, op]) => `system.addressCompare(${r}.to, ${op}, ${addr(1)})`),
  fc.tuple(txVar, txVar).map(([a, b]) => `system.addressCompare(${a}.from, ==, ${b}.from)`),
  fc
    .tuple(eventRef, fc.integer({ min: 0, max: 2 }))
    .map(([r, n]) => `system.countCompare(${r.replace(/#\d$/, "")}, >=, ${n})`)
)
/** Rules of `atoms` under `!`, `&&` and `||`. */
const rulesOf = (atoms: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.letrec<{ r: string }>((tie) => ({
    r: fc.oneof(
      { depthSize: "small" },
      atoms,
      tie("r").map((r) => `!(${r})`),
      fc.tuple(tie("r"), tie("r")).map(([a, b]) => `(${a}) && (${b})`),
      fc.tuple(tie("r"), tie("r")).map(([a, b]) => `(${a}) || (${b})`)
    )
  })).r
const ruleGen = rulesOf(atomGen)

describe("evaluation properties", () => {
  test.prop([ruleGen, factsGen], { numRuns: 300 })(
    "agrees with the brute-force reference evaluator on every rule and set of transactions",
    (rule, f) => {
      const e = parsed(rule)
      const shape = (ms: ReadonlyArray<Rules.Evaluator.Match>) => ms.map((m) => [m.transactions, m.pending])
      assert.deepStrictEqual(
        shape(Evaluator.evaluate(e, f)),
        shape(Evaluator.evaluateReference(e, f)),
        Printer.print(e)
      )
    }
  )

  test.prop([ruleGen, generated({ transactions: 2, calls: 2, maxRange: 2, head: false, frames: 9 })], {
    numRuns: 300
  })(
    "agrees with the reference evaluator on transactions with many internal frames (looked up by occurrence)",
    (rule, f) => {
      const e = parsed(rule)
      assert.deepStrictEqual(
        Evaluator.evaluate(e, f).map((m) => [m.transactions, m.evidence.frames]),
        Evaluator.evaluateReference(e, f).map((m) => [m.transactions, m.evidence.frames]),
        Printer.print(e)
      )
    }
  )

  test.prop([ruleGen, factsGen])("is deterministic", (rule, f) => {
    const e = parsed(rule)
    assert.deepStrictEqual(Evaluator.evaluate(e, f), Evaluator.evaluate(e, f))
  })

  // Atoms over tx1 only, anchored by a conjunct that binds every reference they use, so no variable is local
  // to a negation: there, double negation and De Morgan hold exactly.
  const anchored = fc
    .tuple(
      fc.constantFrom("A", "B"),
      fc.constantFrom("Transfer", "Approval"),
      fc.constantFrom("A", "B"),
      fc.constantFrom("pay", "swap")
    )
    .chain(([ec, en, cc, cn]) => {
      const event = `tx1.${ec}.E.${en}`
      const call = `tx1.${cc}.F.${cn}`
      const atom = fc.oneof(
        fc
          .tuple(fc.constantFrom(">", "<=", "=="), fc.bigInt(0n, 5n))
          .map(([op, n]) => `system.uintCompare(${event}.value, ${op}, ${n})`),
        fc.constantFrom(
          `system.reverted(${call})`,
          `system.addressCompare(${call}.to, ==, ${addr(1)})`,
          "true",
          "false"
        )
      )
      return fc.record({ anchor: fc.constant(`system.emitted(${event}) && system.invoked(${call})`), a: atom, b: atom })
    })

  test.prop([anchored, factsGen])(
    "!!E is E, and De Morgan holds, where E's variables are bound outside",
    ({ anchor, a, b }, f) => {
      const m = (rule: string) => Evaluator.evaluate(parsed(rule), f).map((x) => x.transactions)
      assert.deepStrictEqual(m(`${anchor} && !!(${a})`), m(`${anchor} && ${a}`))
      assert.deepStrictEqual(m(`${anchor} && !((${a}) && (${b}))`), m(`${anchor} && (!(${a}) || !(${b}))`))
      assert.deepStrictEqual(m(`${anchor} && !((${a}) || (${b}))`), m(`${anchor} && !(${a}) && !(${b})`))
    }
  )

  test.prop([ruleGen.filter((r) => !r.includes("!")), atomGen.filter((r) => !r.includes("tx2")), factsGen])(
    "adding a conjunct never adds a match",
    (rule, extra, f) => {
      const without = Evaluator.evaluate(parsed(rule), f).map((m) => m.transactions)
      const withExtra = Evaluator.evaluate(parsed(`(${rule}) && ${extra}`), f)
      // Each match with the conjunct extends one without it: the variables that one binds, bound alike. The matches
      // of a disjunction need not bind the same variables (one side may leave tx2 unbound), so each is compared on
      // its own variables.
      for (const m of withExtra) {
        const extended = without.some((w) => Object.entries(w).every(([k, v]) => m.transactions[k] === v))
        assert.isTrue(extended, `${rule}: ${JSON.stringify(m.transactions)} extends none of ${JSON.stringify(without)}`)
      }
    }
  )
})

// ---------------------------------------------------------------- footprints: which transactions a search visits
describe("a rule's footprint", () => {
  it("is the contracts and names its transactions must have: the same whatever its literals, else different", () => {
    const of = (rule: string) => Evaluator.footprint(parsed(rule))
    const above = (n: number) => `system.uintCompare(tx1.A.E.Transfer.value, >, ${n})`
    assert.strictEqual(of(above(1)), of(above(1_000)))
    assert.strictEqual(of(above(1)), of("system.emitted(tx1.A.E.Transfer)"))
    assert.notStrictEqual(of(above(1)), of("system.uintCompare(tx1.B.E.Transfer.value, >, 1)"))
    assert.notStrictEqual(of(above(1)), of("system.uintCompare(tx1.A.E.Approval.value, >, 1)"))
    assert.notStrictEqual(of(above(1)), of("system.reverted(tx1.A.F.pay)"))
    // A transaction that may be any (only its fields are compared, or an occurrence is under a disjunction).
    assert.strictEqual(of(`system.addressCompare(tx1.from, ==, ${addr(1)})`), "")
    assert.strictEqual(of("system.emitted(tx1.A.E.Transfer) || system.emitted(tx1.B.E.Transfer)"), "")
    assert.strictEqual(of(`${above(1)} && system.addressCompare(tx2.from, ==, tx1.from)`), "")
    // Two transactions, each with its own: both count, each for its own transaction.
    assert.notStrictEqual(
      of(`${above(1)} && system.emitted(tx2.A.E.Approval)`),
      of(`${above(1)} && system.emitted(tx1.A.E.Approval)`)
    )
    assert.notStrictEqual(
      of(`${above(1)} && system.emitted(tx2.A.E.Approval)`),
      of(`${above(1)} && system.emitted(tx2.B.E.Approval)`)
    )
  })

  test.prop([ruleGen, factsGen], { numRuns: 300 })(
    "a match's transactions each have an occurrence under its footprint, and have every key of it between them",
    (rule, f) => {
      const e = parsed(rule)
      const footprint = Evaluator.footprint(e)
      if (footprint === "") return
      const keys = footprint
        .split("\u0002")
        .flatMap((each) => each.split("\u0001"))
        .map((k) => k.split("\u0000"))
      const holds = (t: Transaction, [kind, contract, name]: ReadonlyArray<string>) =>
        (kind === "E" ? t.events : t.calls).some((o) => o.contract === contract && o.name === name)
      for (const m of Evaluator.evaluate(e, f)) {
        const bound = Object.values(m.transactions).map((at) => f.transactions[at]!)
        for (const t of bound)
          assert.isTrue(
            keys.some((k) => holds(t, k)),
            `${rule}: ${t.hash} has nothing under ${JSON.stringify(keys)}`
          )
        for (const k of keys)
          assert.isTrue(
            bound.some((t) => holds(t, k)),
            `${rule}: no transaction of ${JSON.stringify(m.transactions)} has ${k.join(" ")}`
          )
      }
    }
  )
})

// ---------------------------------------------------------------- reads: which occurrences a rule can see
describe("the occurrences a rule reads", () => {
  const keys = (rule: string) => [...Rules.Reads.of(parsed(rule)).keys].map((k) => k.replaceAll("\u0000", ".")).sort()

  it("are those its references name, every one of a label whose involvement it asks, none of a native transfer", () => {
    assert.deepStrictEqual(keys("system.uintCompare(tx1.A.E.Transfer.value, >, 1) && system.reverted(tx2.B.F.pay)"), [
      "E.A.Transfer",
      "F.B.pay"
    ])
    assert.deepStrictEqual(keys("system.countCompare(tx1.any.A.E.*, >=, 2)"), ["E.A.*"])
    assert.deepStrictEqual(keys("system.invoked(tx1.*.F.pay(address,uint256))"), ["F.*.pay"])
    assert.deepStrictEqual(keys(`system.addressCompare(tx1.B.from, ==, ${addr(1)})`), ["E.B.*", "F.B.*"])
    assert.deepStrictEqual(keys("system.nativeTransfer(tx1.B)"), [])
    assert.deepStrictEqual(keys(`system.addressCompare(tx1.from, ==, ${addr(1)})`), [])
  })

  it("are covered by name, by label and by `*` on either side; a union reads what any of its rules reads", () => {
    const { covers, union, of, everything } = Rules.Reads
    const reads = union([of(parsed("system.emitted(tx1.A.E.Transfer)")), of(parsed("system.invoked(tx1.*.F.pay)"))])
    assert.isTrue(covers(reads, "E", "A", "Transfer"))
    assert.isFalse(covers(reads, "E", "A", "Approval"))
    assert.isFalse(covers(reads, "E", "B", "Transfer"))
    assert.isFalse(covers(reads, "F", "A", "Transfer"))
    assert.isTrue(covers(reads, "F", "A", "pay"))
    assert.isTrue(covers(reads, "F", "B", "pay"))
    assert.isFalse(covers(reads, "F", "B", "swap"))
    assert.isTrue(covers(union([reads, everything]), "F", "B", "swap"))
  })

  /** The facts with only the occurrences `reads` covers: what decoding for it gives. */
  const narrowed = (f: Rules.Facts.Facts, reads: Rules.Reads.Reads): Rules.Facts.Facts => ({
    ...f,
    transactions: f.transactions.map((t) => ({
      ...t,
      events: t.events.filter((o) => Rules.Reads.covers(reads, "E", o.contract, o.name)),
      calls: t.calls.filter((o) => Rules.Reads.covers(reads, "F", o.contract, o.name))
    }))
  })
  const label = fc.constantFrom("A", "B")
  const wider: fc.Arbitrary<string> = fc.oneof(
    atomGen,
    fc.tuple(frameGen, label).map(([f, c]) => `system.emitted(${f}.${c}.E.*)`),
    fc.tuple(frameGen, label).map(([f, c]) => `system.countCompare(${f}.${c}.F.*, >=, 1)`),
    fc.constantFrom("Transfer", "Approval").map((n) => `system.emitted(tx1.any.*.E.${n}(address,uint256))`),
    fc.constantFrom("pay", "swap").map((n) => `system.invoked(tx2.*.F.${n}(address,uint256))`),
    fc.tuple(txVar, label).map(([t, c]) => `system.addressCompare(${t}.${c}.from, ==, ${addr(1)})`),
    fc.tuple(txVar, label).map(([t, c]) => `system.nativeTransfer(${t}.any.${c})`),
    callRef.map((r) => `system.reentrant(${r})`),
    callRef.map((r) => `system.uintCompare(${r}.@value, >=, 0)`),
    eventRef.map((r) => `system.sumCompare(${r.replace(/#\d$/, "")}.value, >, 3)`)
  )
  const widerRule = rulesOf(wider)

  test.prop([widerRule, factsGen], { numRuns: 500 })(
    "give every rule the matches and evidence it has over all the occurrences",
    (rule, f) => {
      const e = parsed(rule)
      assert.deepStrictEqual(
        Evaluator.evaluate(e, narrowed(f, Rules.Reads.of(e))),
        Evaluator.evaluate(e, f),
        Printer.print(e)
      )
    }
  )
})

// ---------------------------------------------------------------- slices, and the matches an evaluation keeps
/** Up to 9 transactions over a few blocks, and a head somewhat past the last (so forward negations can pend). */
const widerFactsGen = generated({ transactions: 9, calls: 1, maxRange: 4, head: true })

const limitsGen = fc.record({
  bindings: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.constant(Infinity)),
  matches: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(Infinity))
})

/** The block a match completes at. */
const lastOf = (f: Rules.Facts.Facts, m: Rules.Evaluator.Match) =>
  Math.max(...Object.values(m.transactions).map((at) => f.transactions[at]!.blockNumber))

describe("an evaluation in slices, and the matches it keeps", () => {
  test.prop([ruleGen, widerFactsGen, limitsGen, fc.integer({ min: 1, max: 25 })], { numRuns: 300 })(
    "comes to the same outcome however it is sliced: matches, evidence, the limit reached and the bindings tried",
    (rule, f, limits, slice) => {
      const e = parsed(rule)
      const whole = Evaluator.evaluateWithin(e, f, limits)
      const evaluation = Evaluator.start(e, f, limits)
      let runs = 0
      while (!evaluation.run(slice)) runs++
      assert.deepStrictEqual(evaluation.outcome(), whole, `${Printer.print(e)} in slices of ${slice} (${runs} pauses)`)
      // Another evaluation meanwhile does not disturb it: bounds belong to each evaluation.
      assert.deepStrictEqual(
        Evaluator.evaluate(e, f),
        Evaluator.evaluateWithin(e, f, { bindings: Infinity, matches: Infinity }).matches
      )
    }
  )

  test.prop([ruleGen, widerFactsGen, fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 2 ** 20 })], {
    numRuns: 300
  })(
    "from a block, keeps exactly the matches completing there or later, and those it is told to judge again",
    (rule, f, fromBlock, pick) => {
      const e = parsed(rule)
      const all = Evaluator.evaluate(e, f)
      const old = all.filter((m) => lastOf(f, m) < fromBlock)
      const again = new Set(
        old.filter((_, i) => (pick >> (i % 20)) & 1).map((m) => Evaluator.keyOf(m.evidence.transactions))
      )
      const shape = (ms: ReadonlyArray<Rules.Evaluator.Match>) => ms.map((m) => [m.transactions, m.pending])
      const from = Evaluator.evaluateWithin(e, f, { bindings: Infinity, matches: Infinity, fromBlock })
      assert.deepStrictEqual(shape(from.matches), shape(all.filter((m) => lastOf(f, m) >= fromBlock)), Printer.print(e))
      const judgedAgain = Evaluator.evaluateWithin(e, f, {
        bindings: Infinity,
        matches: Infinity,
        fromBlock,
        again: (key) => again.has(key)
      })
      assert.deepStrictEqual(
        shape(judgedAgain.matches),
        shape(all.filter((m) => lastOf(f, m) >= fromBlock || again.has(Evaluator.keyOf(m.evidence.transactions)))),
        Printer.print(e)
      )
      // Those judged again are kept, not counted: a limit of the new ones alone holds.
      const fresh = all.filter((m) => lastOf(f, m) >= fromBlock).length
      assert.isUndefined(
        Evaluator.evaluateWithin(e, f, {
          bindings: Infinity,
          matches: fresh,
          fromBlock,
          again: (key) => again.has(key)
        }).exceeded
      )
    }
  )

  test.prop([ruleGen, widerFactsGen], { numRuns: 300 })(
    "asked for pending matches only, keeps exactly the pending ones",
    (rule, f) => {
      const e = parsed(rule)
      const shape = (ms: ReadonlyArray<Rules.Evaluator.Match>) => ms.map((m) => [m.transactions, m.evidence])
      const pending = Evaluator.evaluateWithin(e, f, { bindings: Infinity, matches: Infinity, pendingOnly: true })
      assert.deepStrictEqual(
        shape(pending.matches),
        shape(Evaluator.evaluate(e, f).filter((m) => m.pending)),
        Printer.print(e)
      )
      if (!Evaluator.looksForward(e)) assert.deepStrictEqual(pending.matches, [])
    }
  )
})
