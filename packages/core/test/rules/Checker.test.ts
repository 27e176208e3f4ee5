/** The watch-rule checker against real ABI shapes: types, positions, candidates, placeholders and limits. */
import { Abi, Rules } from "@vigil/core"
import { Effect, Schema } from "effect"
import { assert, describe, it } from "vitest"

const { Checker, Literals } = Rules

const abi = (json: unknown): Abi.Abi => Schema.decodeUnknownSync(Abi.Abi)(json)
const param = (name: string, type: string, extra: object = {}) => ({ name, type, ...extra })

const erc20 = abi([
  {
    type: "event",
    name: "Transfer",
    inputs: [
      param("from", "address", { indexed: true }),
      param("to", "address", { indexed: true }),
      param("value", "uint256")
    ]
  },
  {
    type: "event",
    name: "Approval",
    inputs: [
      param("owner", "address", { indexed: true }),
      param("spender", "address", { indexed: true }),
      param("value", "uint256")
    ]
  },
  {
    type: "function",
    name: "transfer",
    inputs: [param("to", "address"), param("value", "uint256")],
    outputs: [param("", "bool")]
  },
  {
    type: "function",
    name: "transferFrom",
    inputs: [param("from", "address"), param("to", "address"), param("amount", "uint256")],
    outputs: [param("", "bool")]
  },
  {
    type: "function",
    name: "approve",
    inputs: [param("spender", "address"), param("value", "uint256")],
    outputs: [param("", "bool")]
  },
  { type: "function", name: "balanceOf", inputs: [param("owner", "address")], outputs: [param("", "uint256")] }
])
const nft = abi([
  {
    type: "function",
    name: "safeTransferFrom",
    inputs: [param("from", "address"), param("to", "address"), param("tokenId", "uint256")],
    outputs: []
  },
  {
    type: "function",
    name: "safeTransferFrom",
    inputs: [param("from", "address"), param("to", "address"), param("tokenId", "uint256"), param("data", "bytes")],
    outputs: []
  },
  { type: "fallback" }
])
const router = abi([
  {
    type: "function",
    name: "smartSwapByOrderId",
    inputs: [
      param("orderId", "uint256"),
      param("orders", "tuple[]", {
        components: [param("token", "address"), param("amount", "uint256"), param("memo", "string")]
      }),
      param("deadline", "int64")
    ],
    outputs: [param("returnAmount", "uint256")]
  },
  {
    type: "event",
    name: "Swap",
    inputs: [param("sender", "address"), param("amount0In", "uint256"), param("to", "address"), param("data", "bytes")]
  }
])

const contracts: ReadonlyArray<Rules.Checker.Contract> = [
  { label: "USDC", address: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", abi: erc20 },
  { label: "DAI", address: "0x6b175474e89094c44da98b954eedeac495271d0f", abi: erc20 },
  { label: "Punks", address: "0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb", abi: nft },
  { label: "Router", address: "0x1111111254eeb25477b68fb85ed929f73a960582", abi: router }
]

const literalDefs = Effect.runSync(
  Literals.fromJson(
    '{"maxTransferAmount": 1e+27, "exact": 123456789012345678901234567890, "suspiciousUser": "0x67bcc2443971070599265b34cf63dF57eAbA5940", "flag": true, "memo": "hi"}'
  )
)
/** Why `text` is not literal definitions. */
const refusal = (text: string) => Effect.runSync(Effect.flip(Literals.fromJson(text))).message

const check = (source: string, options: Partial<Rules.Checker.Options> = {}) =>
  Checker.check(source, { contracts, literalDefs, ...options })
const ok = (source: string, options: Partial<Rules.Checker.Options> = {}) => {
  const r = check(source, options)
  if (!r.ok) throw new Error(r.problems.map((p) => `${p.offset}: ${p.message}`).join("\n"))
  return r.rule
}
const problems = (source: string, options: Partial<Rules.Checker.Options> = {}) => {
  const r = check(source, options)
  if (r.ok) throw new Error(`checked: ${source}`)
  return r.problems
}

describe("the checker accepts well-typed rules", () => {
  it("types parameters, struct members, array elements, return values and metadata against the ABIs", () => {
    const rule = ok(
      "system.uintCompare(tx1.Router.F.smartSwapByOrderId.orders[0].amount, >, ${maxTransferAmount}) && system.stringCompare(tx1.Router.F.smartSwapByOrderId.orders[1].memo, ==, ${memo}) && system.uintCompare(tx1.Router.F.smartSwapByOrderId.orders.length, >=, 2) && system.intCompare(tx1.Router.F.smartSwapByOrderId.$2, <, 0) && system.uintCompare(tx1.itx1.USDC.F.balanceOf.return.$0, <, 1) && system.addressCompare(tx1.USDC.E.Transfer.@address, ==, tx1.to)"
    )
    assert.isTrue(rule.needsTraces)
    assert.strictEqual(rule.transactions, 1)
    assert.include(
      rule.normal,
      "system.uintCompare(tx1.Router.F.smartSwapByOrderId.orders[0].amount, >, 1000000000000000000000000000)"
    )
  })

  it("takes placeholder names of up to 64 characters, in the rule and in literalDefs", () => {
    const name = `p${"x".repeat(63)}`
    const defs = Effect.runSync(Literals.fromJson(`{"${name}": 5}`))
    assert.include(
      ok(`system.uintCompare(tx1.USDC.F.transfer.value, >, \${${name}})`, { literalDefs: defs }).normal,
      ", >, 5)"
    )
    const longer = `${name}y`
    assert.strictEqual(
      refusal(`{"${longer}": 5}`),
      `literalDefs key ${longer.slice(0, 20)}… is longer than 64 characters`
    )
    const [problem] = problems(`system.uintCompare(tx1.USDC.F.transfer.value, >, \${${longer}})`)
    assert.deepInclude(problem, {
      offset: "system.uintCompare(tx1.USDC.F.transfer.value, >, ${".length,
      message: "a placeholder name is at most 64 characters"
    })
  })

  it("substitutes placeholders exactly from the JSON text of literalDefs", () => {
    const rule = ok(
      "system.uintCompare(tx1.USDC.F.transfer.value, >, ${exact}) && system.addressCompare(tx1.USDC.F.transfer.to, ==, ${suspiciousUser}) && system.boolCompare(tx1.status, ==, ${flag})"
    )
    assert.strictEqual(
      rule.normal,
      "system.uintCompare(tx1.USDC.F.transfer.value, >, 123456789012345678901234567890) && system.addressCompare(tx1.USDC.F.transfer.to, ==, 0x67bcc2443971070599265b34cf63df57eaba5940) && system.boolCompare(tx1.status, ==, true)"
    )
    assert.isFalse(rule.needsTraces)
  })

  it("takes an overloaded function by its signature, a fallback, and a * contract with a full signature", () => {
    ok(
      "system.invoked(tx1.Punks.F.safeTransferFrom(address,address,uint256,bytes)) && system.invoked(tx1.itx1.Punks.F.fallback)"
    )
    ok("system.uintCompare(tx1.*.E.Transfer(address,address,uint256).$2, >, 0)")
  })

  it("counts transactions for multi-transaction rules", () => {
    assert.strictEqual(
      ok("system.invoked(tx1.DAI.F.approve) && !system.invoked(tx3.DAI.F.transferFrom)").transactions,
      3
    )
  })
})

describe("the checker reports each problem with its offset, a message and candidates", () => {
  it("names an unknown label, event, function, parameter or member, with what was probably meant", () => {
    const cases: ReadonlyArray<readonly [string, number, RegExp, ReadonlyArray<string>]> = [
      ["system.emitted(tx1.USDT.E.Transfer)", 19, /no contract labelled USDT on this chain/, ["USDC"]],
      ["system.emitted(tx1.USDC.E.Transfers)", 26, /USDC has no event Transfers/, ["Transfer"]],
      ["system.invoked(tx1.USDC.F.Transfer)", 26, /USDC has no function Transfer/, ["transfer"]],
      ["system.uintCompare(tx1.USDC.F.transfer.amount, >, 1)", 19, /no parameter or member amount/, []],
      ["system.uintCompare(tx1.DAI.F.transferFrom.amoutn, >, 1)", 19, /no parameter or member amoutn/, ["amount"]],
      ["system.uintCompare(tx1.Router.F.smartSwapByOrderId.orders[0].amt, >, 1)", 19, /no parameter or member amt/, []],
      ["system.uintCompare(tx1.Router.F.smartSwapByOrderId.orders.amount, >, 1)", 19, /orders is an array/, []],
      ["system.uintCompare(tx1.USDC.F.transfer.$5, >, 1)", 19, /there is no position \$5 \(2 values\)/, []]
    ]
    for (const [source, offset, message, candidates] of cases) {
      const [p] = problems(source)
      assert.match(p!.message, message, source)
      assert.strictEqual(p!.offset, offset, source)
      for (const c of candidates) assert.include(p!.candidates, c, source)
    }
  })

  it("refuses a comparison whose operand does not fit, naming the comparison that would", () => {
    const [p] = problems("system.uintCompare(tx1.USDC.F.transfer.to, >, 1)")
    assert.match(p!.message, /uintCompare compares uint values; this is address/)
    assert.deepStrictEqual(p!.candidates, ["addressCompare"])
    const [q] = problems("system.addressCompare(tx1.USDC.F.transfer.to, ==, tx1.value)")
    assert.match(q!.message, /tx1.value is uint256, not comparable by addressCompare/)
    const [r] = problems("system.uintCompare(tx1.USDC.F.transfer.value, >, ${suspiciousUser})")
    assert.match(r!.message, /\$\{suspiciousUser\} is .*not a number/)
    const [s] = problems("system.uintCompare(tx1.USDC.F.transfer.value, >, ${maxTransfer})")
    assert.match(s!.message, /\$\{maxTransfer\} is not defined in options.literalDefs/)
    assert.include(s!.candidates, "maxTransferAmount")
  })

  it("asks for a signature when a name is overloaded, and for a full one on a * contract", () => {
    const [p] = problems("system.invoked(tx1.Punks.F.safeTransferFrom)")
    assert.match(p!.message, /overloaded: give its signature/)
    assert.sameMembers(
      [...p!.candidates],
      ["safeTransferFrom(address,address,uint256)", "safeTransferFrom(address,address,uint256,bytes)"]
    )
    assert.match(problems("system.emitted(tx1.*.E.Transfer)")[0]!.message, /needs the full event signature/)
  })

  it("enforces the limits on transactions and internal frames", () => {
    assert.match(problems("system.emitted(tx4.USDC.E.Transfer)")[0]!.message, /at most 3 transactions/)
    assert.match(problems("system.invoked(tx1.itx4.USDC.F.transfer)")[0]!.message, /at most 3 internal frames/)
    assert.match(
      problems("system.emitted(tx1.USDC.E.Transfer) && " + "x".repeat(5_000))[0]!.message,
      /longer than 4096/
    )
  })

  it("keeps a simple rule simple: an advanced construct is refused, not silently upgraded", () => {
    ok("system.emitted(tx1.USDC.E.Transfer) && system.uintCompare(tx1.USDC.E.Transfer.value, >, 1)", {
      watchRuleType: "simple"
    })
    for (const [source, construct] of [
      ["system.emitted(tx1.USDC.E.Transfer) || system.emitted(tx1.DAI.E.Transfer)", /\|\|/],
      ["system.invoked(tx1.itx1.USDC.F.transfer)", /internal frame/],
      ["system.emitted(tx2.USDC.E.Transfer)", /tx2/],
      ["!system.emitted(tx1.USDC.E.Transfer)", /negation/],
      ["system.countCompare(tx1.USDC.E.Transfer, >, 2)", /countCompare/]
    ] as const) {
      const [p] = problems(source, { watchRuleType: "simple" })
      assert.match(p!.message, construct, source)
      assert.match(p!.message, /set watchRuleType to advanced/)
    }
  })

  it("refuses a rule whose every transaction is inside a negation", () => {
    assert.match(
      problems("!system.emitted(tx1.USDC.E.Transfer)")[0]!.message,
      /every transaction of this rule is inside a negation/
    )
    assert.match(problems("true")[0]!.message, /could never match/)
  })

  it("reports a syntax error with its offset", () => {
    assert.deepInclude(problems("system.emitted(tx1.USDC.E.Transfer")[0]!, { offset: 34 })
  })
})

describe("options.ruleScope", () => {
  it("conjoins the group test on the from of every transaction or numbered frame that names the contract", () => {
    const rule = ok(
      "system.invoked(tx1.USDC.F.transfer) && system.emitted(tx1.itx1.USDC.E.Transfer) && system.emitted(tx1.DAI.E.Transfer)",
      {
        ruleScope: { contractName: "USDC", groupId: "allowed", member: false }
      }
    )
    assert.strictEqual(
      Rules.Printer.print(rule.expr),
      'system.invoked(tx1.USDC.F.transfer) && system.emitted(tx1.itx1.USDC.E.Transfer) && system.emitted(tx1.DAI.E.Transfer) && !system.inGroup(tx1.from, "allowed") && !system.inGroup(tx1.itx1.from, "allowed")'
    )
    assert.strictEqual(
      rule.normal,
      "system.invoked(tx1.USDC.F.transfer) && system.emitted(tx1.itx1.USDC.E.Transfer) && system.emitted(tx1.DAI.E.Transfer)",
      "the expression as written"
    )
    assert.match(
      problems("system.emitted(tx1.DAI.E.Transfer)", {
        ruleScope: { contractName: "USDC", groupId: "g", member: true }
      })[0]!.message,
      /no transaction or numbered frame of the rule references/
    )
    assert.match(
      problems("system.emitted(tx1.DAI.E.Transfer)", {
        ruleScope: { contractName: "USDT", groupId: "g", member: true }
      })[0]!.message,
      /USDT is not a contract on this chain/
    )
  })
})

describe("literalDefs from JSON text", () => {
  it("keeps every digit of large numbers and refuses what is not an object of literals", () => {
    const defs = Effect.runSync(Literals.fromJson('{"a": 1e+27, "b": 123456789012345678901234567890}'))
    assert.strictEqual(Literals.asInteger(defs.get("a")!, false), 10n ** 27n)
    assert.strictEqual(Literals.asInteger(defs.get("b")!, false), 123456789012345678901234567890n)
    assert.strictEqual(refusal("[1]"), "literalDefs must be a JSON object")
    assert.match(refusal('{"a": {"b": 1}}'), /must be a number, a string or a boolean/)
    assert.match(refusal("{"), /not valid JSON/)
  })
})

describe("a bot's expressions are checked as one rule", () => {
  const rule = (sources: ReadonlyArray<string>, options: Partial<Rules.Checker.Options> = {}) =>
    Checker.checkRule(sources, { contracts, literalDefs, ...options })

  it("AND-s them: the rule is the conjunction, with tx1 the same transaction in each", () => {
    const r = rule([
      "system.emitted(tx1.USDC.E.Transfer)",
      "system.uintCompare(tx1.USDC.E.Transfer.value, >=, 1000000000000000000000)"
    ])
    assert.isTrue(r.ok)
    if (!r.ok) return
    assert.strictEqual(r.rule.expr._tag, "And")
    assert.strictEqual(
      r.rule.normal,
      "system.emitted(tx1.USDC.E.Transfer) && system.uintCompare(tx1.USDC.E.Transfer.value, >=, 1000000000000000000000)"
    )
    assert.strictEqual(r.rule.transactions, 1)
    const joined = ok(
      "system.emitted(tx1.USDC.E.Transfer) && system.uintCompare(tx1.USDC.E.Transfer.value, >=, 1000000000000000000000)"
    )
    assert.deepStrictEqual(Rules.Ast.strip(r.rule.expr), Rules.Ast.strip(joined.expr))
  })

  it("keeps an expression with || whole inside the conjunction", () => {
    const r = rule([
      "system.emitted(tx1.USDC.E.Transfer) || system.emitted(tx1.DAI.E.Transfer)",
      "system.uintCompare(tx1.value, >, 0)"
    ])
    if (!r.ok) assert.fail(JSON.stringify(r.problems))
    else assert.match(r.rule.normal, /^\(system\.emitted\(tx1\.USDC\.E\.Transfer\) \|\| .*\) && /)
  })

  it("takes a negation in an expression of its own when another binds the transaction, and positions problems per expression", () => {
    const r = rule(["system.invoked(tx1.USDC.F.approve)", "!system.invoked(tx2.USDC.F.transfer)"])
    assert.isTrue(r.ok)
    if (r.ok) assert.strictEqual(r.rule.transactions, 2)
    const alone = rule(["!system.invoked(tx1.USDC.F.approve)", "!system.invoked(tx2.USDC.F.transfer)"])
    assert.isFalse(alone.ok)
    if (!alone.ok)
      assert.match(alone.problems[0]!.message, /every transaction of these expressions is inside a negation/)
    const wrong = rule(["system.emitted(tx1.USDC.E.Transfer)", "system.emitted(tx1.USDC.E.Transfr)"])
    assert.isFalse(wrong.ok)
    if (!wrong.ok) {
      assert.strictEqual(wrong.problems[0]!.expression, 1)
      assert.strictEqual(wrong.problems[0]!.offset, "system.emitted(tx1.USDC.E.".length)
    }
  })

  it("applies ruleScope to the conjunction: a contract named in one expression is enough", () => {
    const r = rule(["system.emitted(tx1.USDC.E.Transfer)", "system.uintCompare(tx1.value, >, 0)"], {
      ruleScope: { contractName: "USDC", groupId: "team", member: true }
    })
    assert.isTrue(r.ok)
  })
})

describe("a rule over several transactions must join them (what a bot asks for)", () => {
  const joined = (sources: ReadonlyArray<string>) =>
    Checker.checkRule(sources, { contracts, literalDefs, requireJoin: true })
  const refused = (sources: ReadonlyArray<string>) => {
    const r = joined(sources)
    if (r.ok) throw new Error(`accepted: ${sources.join(" ; ")}`)
    return r.problems[0]!.message
  }

  it("refuses transactions with nothing joining them, and says how to join them", () => {
    assert.match(
      refused(["system.emitted(tx1.USDC.E.Transfer) && system.emitted(tx2.USDC.E.Transfer)"]),
      /^tx2 is not joined to tx1 by any equality: .* e\.g\. system\.addressCompare\(tx2\.from, ==, tx1\.from\)/
    )
    // tx3 joined to tx2 only, tx2 to nothing: both loose.
    assert.match(
      refused([
        "system.emitted(tx1.USDC.E.Transfer)",
        "system.emitted(tx2.DAI.E.Transfer) && system.addressCompare(tx3.from, ==, tx2.from)"
      ]),
      /^tx2, tx3 are not joined to tx1/
    )
    // An inequality does not join; an equality on one side of || only does not either.
    assert.match(
      refused(["system.emitted(tx1.USDC.E.Transfer) && system.uintCompare(tx2.value, >, tx1.value)"]),
      /tx2 is not joined/
    )
    assert.match(
      refused([
        "system.emitted(tx1.USDC.E.Transfer) && (system.addressCompare(tx2.from, ==, tx1.from) || system.emitted(tx2.DAI.E.Transfer))"
      ]),
      /tx2 is not joined/
    )
  })

  it("accepts joined transactions (across expressions, through a chain of equalities), negated ones, and one transaction", () => {
    for (const sources of [
      ["system.emitted(tx1.USDC.E.Transfer)", "system.addressCompare(tx2.from, ==, tx1.from)"],
      [
        "system.emitted(tx1.USDC.E.Transfer) && system.addressCompare(tx2.USDC.E.Transfer.to, ==, tx1.USDC.E.Transfer.to)",
        "system.addressCompare(tx3.from, ==, tx2.to)"
      ],
      ["system.invoked(tx1.USDC.F.approve) && !system.invoked(tx2.USDC.F.transfer)"],
      ["system.emitted(tx1.USDC.E.Transfer)", "system.uintCompare(tx1.value, >, 0)"]
    ])
      assert.isTrue(joined(sources).ok, sources.join(" ; "))
    // Without the requirement (stored bots, backtests), a loose rule checks.
    assert.isTrue(
      Checker.checkRule(["system.emitted(tx1.USDC.E.Transfer) && system.emitted(tx2.USDC.E.Transfer)"], {
        contracts,
        literalDefs
      }).ok
    )
  })
})
