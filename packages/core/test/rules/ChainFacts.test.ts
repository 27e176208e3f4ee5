/**
 * Facts from node data: real ABI encodings (ox) of calls, results and logs in the shapes of eth_getBlockByNumber,
 * eth_getBlockReceipts and debug_traceBlockByNumber (callTracer, withLog), decoded and evaluated.
 */
import { Abi, ChainFacts, Rules } from "@vigil/core"
import { Schema } from "effect"
import * as AbiEvent from "ox/AbiEvent"
import * as AbiFunction from "ox/AbiFunction"
import { assert, describe, it } from "vitest"

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const USDC = addr(0xc0de)
const ROUTER = addr(0x5a11)
const alice = addr(0xa11ce)
const bob = addr(0xb0b)

const usdcAbi = Schema.decodeUnknownSync(Abi.Abi)([
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256" }
    ]
  },
  {
    type: "function",
    name: "transfer",
    inputs: [
      { name: "to", type: "address" },
      { name: "value", type: "uint256" }
    ],
    outputs: [{ name: "", type: "bool" }]
  }
])
const routerAbi = Schema.decodeUnknownSync(Abi.Abi)([
  {
    type: "function",
    name: "swap",
    inputs: [
      {
        name: "route",
        type: "tuple[]",
        components: [
          { name: "token", type: "address" },
          { name: "amount", type: "uint256" }
        ]
      },
      { name: "data", type: "bytes" }
    ],
    outputs: [{ name: "out", type: "uint256" }]
  }
])
const contracts = [
  { label: "USDC", address: USDC, abi: usdcAbi },
  { label: "Router", address: ROUTER, abi: routerAbi }
]

const transferEvent = AbiEvent.from("event Transfer(address indexed from, address indexed to, uint256 value)")
const transferFn = AbiFunction.from("function transfer(address to, uint256 value) returns (bool)")
const swapFn = AbiFunction.from(
  "function swap((address token, uint256 amount)[] route, bytes data) returns (uint256 out)"
)

/** A Transfer log: indexed from and to in the topics (ox), the value as the data. */
const transferLog = (from: string, to: string, value: bigint) => {
  const { topics } = AbiEvent.encode(transferEvent, { from: from as `0x${string}`, to: to as `0x${string}` })
  return { address: USDC, topics: topics as ReadonlyArray<string>, data: `0x${value.toString(16).padStart(64, "0")}` }
}
const transferInput = (to: string, value: bigint) => AbiFunction.encodeData(transferFn, [to as `0x${string}`, value])
const swapInput = AbiFunction.encodeData(swapFn, [[{ token: USDC as `0x${string}`, amount: 7n }], "0xbeef"])
const swapOutput = AbiFunction.encodeResult(swapFn, 42n)

const hex = (n: number | bigint) => `0x${n.toString(16)}`

describe("ChainFacts.fromBlocks", () => {
  const logA = transferLog(ROUTER, alice, 100n)
  const logB = transferLog(ROUTER, bob, 300n)
  const dropped = transferLog(ROUTER, bob, 999n)
  const block1: ChainFacts.BlockData = {
    block: {
      number: hex(10),
      hash: "0xb1",
      timestamp: hex(1_700_000_000),
      transactions: [
        {
          hash: "0xt1",
          from: alice,
          to: ROUTER,
          value: "0x0",
          nonce: "0x1",
          input: swapInput,
          gas: hex(500_000),
          transactionIndex: "0x0"
        }
      ]
    },
    receipts: [
      {
        transactionHash: "0xt1",
        status: "0x1",
        gasUsed: hex(200_000),
        logs: [
          { ...logA, logIndex: "0x0" },
          { ...logB, logIndex: "0x1" }
        ]
      }
    ],
    traces: [
      {
        type: "CALL",
        from: alice,
        to: ROUTER,
        input: swapInput,
        output: swapOutput,
        calls: [
          {
            type: "CALL",
            from: ROUTER,
            to: USDC,
            input: transferInput(alice, 100n),
            output: AbiFunction.encodeResult(transferFn, true),
            logs: [{ ...logA, index: 0 }]
          },
          // Reverted: its log was never emitted, though the trace lists it (and counts it in the indexes).
          {
            type: "CALL",
            from: ROUTER,
            to: USDC,
            input: transferInput(bob, 999n),
            error: "execution reverted",
            logs: [{ ...dropped, index: 1 }]
          },
          {
            type: "CALL",
            from: ROUTER,
            to: USDC,
            input: transferInput(bob, 300n),
            logs: [{ ...logB, index: 2 }],
            // USDC calls back into the router while the router's swap is open: reentrancy.
            calls: [{ type: "CALL", from: USDC, to: ROUTER, input: "0x" }]
          }
        ]
      }
    ]
  }
  const block2: ChainFacts.BlockData = {
    block: {
      number: hex(11),
      hash: "0xb2",
      timestamp: hex(1_700_000_012),
      transactions: [
        {
          hash: "0xt2",
          from: bob,
          to: USDC,
          value: "0x0",
          nonce: "0x2",
          input: transferInput(alice, 5n),
          gas: hex(60_000),
          transactionIndex: "0x0"
        }
      ]
    },
    receipts: [{ transactionHash: "0xt2", status: "0x0", gasUsed: hex(30_000), logs: [] }]
  }
  const facts = ChainFacts.fromBlocks([block1, block2], contracts, { blockRange: 5 })
  const [t1, t2] = facts.transactions

  it("decodes calls, results and logs, ties each standing log to the frame that emitted it, and skips dropped ones", () => {
    assert.deepStrictEqual(
      t1!.frames!.map((f) => [f.index, f.depth, f.fields.to, f.fields.error]),
      [
        [0, 0, ROUTER, undefined],
        [1, 1, USDC, undefined],
        [2, 1, USDC, "execution reverted"],
        [3, 1, USDC, undefined],
        [4, 2, ROUTER, undefined]
      ]
    )
    assert.deepStrictEqual(
      t1!.events.map((e) => [e.name, e.frame, e.logIndex, e.args.values]),
      [
        ["Transfer", 1, 0, [ROUTER, alice, 100n]],
        ["Transfer", 3, 1, [ROUTER, bob, 300n]]
      ]
    )
    const swap = t1!.calls.find((c) => c.name === "swap")!
    assert.deepStrictEqual(swap.args.values[0], [{ _tag: "Tuple", values: [USDC, 7n], names: ["token", "amount"] }])
    assert.strictEqual(swap.args.values[1], "0xbeef")
    assert.deepStrictEqual(swap.output?.values, [42n])
    assert.isTrue(swap.reentrant)
    assert.deepStrictEqual(
      t1!.calls.filter((c) => c.name === "transfer").map((c) => [c.frame, c.reverted, c.args.values[1]]),
      [
        [1, false, 100n],
        [2, true, 999n],
        [3, false, 300n]
      ]
    )
  })

  it("without traces, decodes the top-level call from the input and takes its status from the receipt", () => {
    assert.isUndefined(t2!.frames)
    assert.deepStrictEqual(
      t2!.calls.map((c) => [c.name, c.frame, c.reverted, c.args.values]),
      [["transfer", 0, true, [alice, 5n]]]
    )
    assert.strictEqual(t2!.fields.status, false)
  })

  it("evaluates rules over the decoded facts", () => {
    const matches = (source: string) => {
      const r = Rules.Parser.parse(source)
      if (!r.ok) throw new Error(r.error.message)
      return Rules.Evaluator.evaluate(r.expr, facts).map((m) => facts.transactions[m.transactions.tx1!]!.hash)
    }
    assert.deepStrictEqual(
      matches(
        "system.uintCompare(tx1.Router.F.swap.route[0].amount, ==, 7) && system.uintCompare(tx1.Router.F.swap.return.out, ==, 42)"
      ),
      ["0xt1"]
    )
    assert.deepStrictEqual(matches("system.reentrant(tx1.Router.F.swap)"), ["0xt1"])
    assert.deepStrictEqual(matches(`system.addressCompare(tx1.itx*.USDC.E.Transfer.to, ==, ${bob})`), ["0xt1"])
    assert.deepStrictEqual(
      matches("system.uintCompare(tx1.itx*.USDC.E.Transfer.value, ==, 999)"),
      [],
      "the dropped log was never emitted"
    )
    assert.deepStrictEqual(
      matches("system.reverted(tx1.itx*.USDC.F.transfer) && system.reverted(tx2.USDC.F.transfer)"),
      ["0xt1"]
    )
    const internal = Rules.Parser.parse("system.invoked(tx1.itx1.USDC.F.transfer)")
    if (!internal.ok) throw new Error(internal.error.message)
    assert.match(Rules.Evaluator.notEvaluable(internal.expr, facts) ?? "", /transaction 0xt2 of block 11 has none/)
  })

  it("decodes only the occurrences the rules read: each of them as a full decoding has it, none of the others", () => {
    const reads = Rules.Reads.union(
      ["system.emitted(tx1.itx*.USDC.E.Transfer)", "system.reentrant(tx1.Router.F.*)"].map((source) => {
        const r = Rules.Parser.parse(source)
        if (!r.ok) throw new Error(r.error.message)
        return Rules.Reads.of(r.expr)
      })
    )
    const narrowed = ChainFacts.fromBlocks([block1, block2], contracts, { blockRange: 5, reads })
    assert.deepStrictEqual(
      narrowed.transactions.map((t) => [t.events, t.calls]),
      facts.transactions.map((t) => [t.events, t.calls.filter((c) => c.contract === "Router")])
    )
    assert.deepStrictEqual(
      narrowed.transactions.map((t) => [t.fields, t.frames]),
      facts.transactions.map((t) => [t.fields, t.frames])
    )
    assert.lengthOf(narrowed.transactions[1]!.calls, 0, "USDC's transfer calls are not read")
  })

  it("marks the call reentrant under every label its contract is registered by", () => {
    const twice = [...contracts, { label: "Swapper", address: ROUTER, abi: routerAbi }]
    const calls = ChainFacts.fromBlocks([block1], twice, { blockRange: 0 }).transactions[0]!.calls
    assert.deepStrictEqual(
      calls.filter((c) => c.name === "swap").map((c) => [c.contract, c.reentrant]),
      [
        ["Router", true],
        ["Swapper", true]
      ]
    )
  })

  it("reads indexed parameters from the topics in order, a dynamic one kept as its hash; a topic not of 32 bytes leaves its log undecoded", () => {
    const named = AbiEvent.from(
      "event Named(string indexed name, address indexed who, uint256 indexed rank, uint256 amount)"
    )
    const abi = Schema.decodeUnknownSync(Abi.Abi)([
      {
        type: "event",
        name: "Named",
        inputs: [
          { name: "name", type: "string", indexed: true },
          { name: "who", type: "address", indexed: true },
          { name: "rank", type: "uint256", indexed: true },
          { name: "amount", type: "uint256", indexed: false }
        ]
      }
    ])
    // Every topic of this event is one word (ox types a topic as a word or a list of them).
    const topics = AbiEvent.encode(named, { name: "vigil", who: bob as `0x${string}`, rank: 3n })
      .topics as ReadonlyArray<string>
    const data = `0x${250n.toString(16).padStart(64, "0")}`
    const log = (ts: ReadonlyArray<string>, logIndex: string) => ({ address: USDC, topics: ts, data, logIndex })
    const long = [topics[0]!, topics[1]!, `${topics[2]!}00`, topics[3]!]
    const block: ChainFacts.BlockData = {
      block: {
        number: hex(12),
        hash: "0xb3",
        timestamp: hex(1_700_000_024),
        transactions: [
          {
            hash: "0xt3",
            from: alice,
            to: USDC,
            value: "0x0",
            nonce: "0x3",
            input: "0x",
            gas: hex(90_000),
            transactionIndex: "0x0"
          }
        ]
      },
      receipts: [
        {
          transactionHash: "0xt3",
          status: "0x1",
          gasUsed: hex(50_000),
          logs: [log(topics, "0x0"), log(long, "0x1")]
        }
      ]
    }
    const [t3] = ChainFacts.fromBlocks([block], [{ label: "Names", address: USDC, abi }], {
      blockRange: 0
    }).transactions
    assert.deepStrictEqual(
      t3!.events.map((e) => [e.logIndex, e.signature, e.args.values]),
      [[0, "Named(string,address,uint256,uint256)", [topics[1]!.toLowerCase(), bob, 3n, 250n]]]
    )
  })
})
