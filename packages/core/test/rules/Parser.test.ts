/** The watch-rule parser and printer: a golden corpus, positioned errors, exact numbers, and print∘parse = id. */
import { fc, test } from "@fast-check/vitest"
import { Rules } from "@vigil/core"
import { assert, describe, it } from "vitest"

const { Ast, Parser, Printer } = Rules

const parsed = (source: string): Rules.Ast.Expr => {
  const result = Parser.parse(source)
  if (!result.ok) throw new Error(`${source}\n${" ".repeat(result.error.offset)}^ ${result.error.message}`)
  return result.expr
}
const normal = (source: string) => Printer.print(parsed(source))
const error = (source: string) => {
  const result = Parser.parse(source)
  if (result.ok) throw new Error(`parsed: ${source}`)
  return result.error
}

describe("the golden corpus: every FailSafe construct and every example parses, and prints in normal form", () => {
  const corpus: ReadonlyArray<readonly [string, string]> = [
    // FailSafe's documented constructs (research §1.4).
    ["system.invoked(tx1.WETH.F.transfer)", "system.invoked(tx1.WETH.F.transfer)"],
    ["system.emitted(tx1.UniswapV2Pair.E.Swap)", "system.emitted(tx1.UniswapV2Pair.E.Swap)"],
    ["system.invoked(tx1.USDC.F.*)", "system.invoked(tx1.USDC.F.*)"],
    ["system.emitted(tx1.UniswapV2Pair.E.*)", "system.emitted(tx1.UniswapV2Pair.E.*)"],
    [
      "system.uintCompare(tx1.USDC.F.transfer.value, >, 1000000000000000000000000000)",
      "system.uintCompare(tx1.USDC.F.transfer.value, >, 1000000000000000000000000000)"
    ],
    [
      "system.addressCompare(tx1.USDC.F.transfer.to, ==, 0x67bcc2443971070599265b34cf63dF57eAbA5940)",
      "system.addressCompare(tx1.USDC.F.transfer.to, ==, 0x67bcc2443971070599265b34cf63df57eaba5940)"
    ],
    ["system.reverted(tx1.AavePool.F.deposit)", "system.reverted(tx1.AavePool.F.deposit)"],
    [
      "system.reentrant(tx1.WETH.F.withdraw) && system.invoked(tx1.itx1.MaliciousContract.F.fallback)",
      "system.reentrant(tx1.WETH.F.withdraw) && system.invoked(tx1.itx1.MaliciousContract.F.fallback)"
    ],
    ["system.uintCompare(tx1.LendingPool.riskscore, >, 75)", "system.uintCompare(tx1.LendingPool.riskscore, >, 75)"],
    [
      "system.addressCompare(tx1.LendingPool.from, !=, 0x0000000000000000000000000000000000000000)",
      "system.addressCompare(tx1.LendingPool.from, !=, 0x0000000000000000000000000000000000000000)"
    ],
    [
      "system.addressCompare(tx1.UniswapV2Pair.E.Swap.to, ==, ${attacker})",
      "system.addressCompare(tx1.UniswapV2Pair.E.Swap.to, ==, ${attacker})"
    ],
    [
      "system.uintCompare(tx1.Router.F.smartSwapByOrderId.order.amount, >, ${maxTransferAmount})",
      "system.uintCompare(tx1.Router.F.smartSwapByOrderId.order.amount, >, ${maxTransferAmount})"
    ],
    [
      "system.uintCompare(tx2.DAI.F.transferFrom.amount, >, 1e24) && system.noMatches(system.invoked(tx1.DAI.F.approve))",
      "system.uintCompare(tx2.DAI.F.transferFrom.amount, >, 1000000000000000000000000) && !system.invoked(tx1.DAI.F.approve)"
    ],
    // The examples of research §5.7, FailSafe's first.
    ["system.emitted(tx1.UniswapV2Pair.E.Swap)", "system.emitted(tx1.UniswapV2Pair.E.Swap)"],
    [
      "system.invoked(tx1.itx1.UniswapV2Router.F.swapExactTokensForTokens) && system.invoked(tx1.itx2.WETH.F.transfer)",
      "system.invoked(tx1.itx1.UniswapV2Router.F.swapExactTokensForTokens) && system.invoked(tx1.itx2.WETH.F.transfer)"
    ],
    [
      "system.invoked(tx1.CompoundCToken.F.mint) && system.noMatches(system.invoked(tx2.CompoundCToken.F.redeem)) || system.uintCompare(tx1.CompoundCToken.F.mint.mintAmount, >, 50000000000000)",
      "system.invoked(tx1.CompoundCToken.F.mint) && !system.invoked(tx2.CompoundCToken.F.redeem) || system.uintCompare(tx1.CompoundCToken.F.mint.mintAmount, >, 50000000000000)"
    ],
    [
      "system.addressCompare(tx1.AavePool.E.Deposit.user, ==, ${suspiciousUser})",
      "system.addressCompare(tx1.AavePool.E.Deposit.user, ==, ${suspiciousUser})"
    ],
    [
      "system.nativeTransfer(tx1.itx1) && system.addressCompare(tx1.itx1.from, ==, ${vault}) && system.uintCompare(tx1.itx1.value, >, 100e18) && system.boolCompare(tx1.status, ==, true)",
      "system.nativeTransfer(tx1.itx1) && system.addressCompare(tx1.itx1.from, ==, ${vault}) && system.uintCompare(tx1.itx1.value, >, 100000000000000000000) && system.boolCompare(tx1.status, ==, true)"
    ],
    ["system.reverted(tx1.itx*.Vault.F.transferOwnership)", "system.reverted(tx1.itx*.Vault.F.transferOwnership)"],
    [
      "system.emitted(tx1.Pool.E.Deposit) && system.addressCompare(tx2.from, ==, tx1.from) && system.uintCompare(tx2.Pool.E.Withdraw.amount, >, ${bigAmount})",
      "system.emitted(tx1.Pool.E.Deposit) && system.addressCompare(tx2.from, ==, tx1.from) && system.uintCompare(tx2.Pool.E.Withdraw.amount, >, ${bigAmount})"
    ],
    [
      "(system.invoked(tx1.itx1.AavePool.F.flashLoan) && system.invoked(tx1.itx2.Router.F.swapExactTokensForTokens) && system.uintCompare(tx1.riskscore, >=, 75)) || system.countCompare(tx1.USDC.E.Transfer, >=, 10)",
      "system.invoked(tx1.itx1.AavePool.F.flashLoan) && system.invoked(tx1.itx2.Router.F.swapExactTokensForTokens) && system.uintCompare(tx1.riskscore, >=, 75) || system.countCompare(tx1.USDC.E.Transfer, >=, 10)"
    ],
    [
      'system.emitted(tx1.Token.E.Approval) && !system.inGroup(tx1.Token.E.Approval.spender, "trusted_spenders")',
      'system.emitted(tx1.Token.E.Approval) && !system.inGroup(tx1.Token.E.Approval.spender, "trusted_spenders")'
    ],
    // Comma as AND, parentheses, signatures, occurrences, positions, indexes, return values, metadata.
    [
      "system.emitted(tx1.A.E.X), system.emitted(tx1.B.E.Y) || system.emitted(tx1.C.E.Z)",
      "system.emitted(tx1.A.E.X) && (system.emitted(tx1.B.E.Y) || system.emitted(tx1.C.E.Z))"
    ],
    [
      "system.uintCompare(tx1.*.E.Transfer(address,address,uint256)#2.$2, >=, 0x10)",
      "system.uintCompare(tx1.*.E.Transfer(address,address,uint256)#2.$2, >=, 16)"
    ],
    [
      "system.addressCompare(tx1.any.Router.F.swap((uint256,address)[],bytes).route[0].pool, ==, tx1.from)",
      "system.addressCompare(tx1.any.Router.F.swap((uint256,address)[],bytes).route[0].pool, ==, tx1.from)"
    ],
    [
      "system.uintCompare(tx1.Oracle.F.latestAnswer.return.$0, <, 1_000)",
      "system.uintCompare(tx1.Oracle.F.latestAnswer.return.$0, <, 1000)"
    ],
    [
      "system.uintCompare(tx1.USDC.E.Transfer.@logIndex, <, 3) && system.addressCompare(tx1.DAI.F.transferFrom.@from, !=, tx1.from)",
      "system.uintCompare(tx1.USDC.E.Transfer.@logIndex, <, 3) && system.addressCompare(tx1.DAI.F.transferFrom.@from, !=, tx1.from)"
    ],
    [
      "system.intCompare(tx1.Pool.E.Swap.amount0, <, -5e3) && system.bytesCompare(tx1.input, startsWith, 0xA9059CBB)",
      "system.intCompare(tx1.Pool.E.Swap.amount0, <, -5000) && system.bytesCompare(tx1.input, startsWith, 0xa9059cbb)"
    ],
    [
      "system.stringCompare(tx1.itx2.error, contains, 'it\\'s \"bad\"') && system.created(tx1.itx3)",
      'system.stringCompare(tx1.itx2.error, contains, "it\'s \\"bad\\"") && system.created(tx1.itx3)'
    ],
    [
      "!!system.reverted(tx1) || !(system.emitted(tx1.A.E.X) || true) && false",
      "!!system.reverted(tx1) || !(system.emitted(tx1.A.E.X) || true) && false"
    ],
    [
      "system.sumCompare(tx1.itx*.USDC.E.Transfer.value, >, 1e24) && system.nativeTransfer(tx1.itx1.Vault)",
      "system.sumCompare(tx1.itx*.USDC.E.Transfer.value, >, 1000000000000000000000000) && system.nativeTransfer(tx1.itx1.Vault)"
    ]
  ]
  it.each(corpus)("%s", (source, expected) => {
    assert.strictEqual(normal(source), expected)
    assert.strictEqual(normal(expected), expected, "the normal form is a fixed point")
  })
})

describe("numbers are exact 256-bit integers", () => {
  const value = (literal: string, comparator = "uintCompare") => {
    const e = parsed(`system.${comparator}(tx1.value, >, ${literal})`)
    return e._tag === "Compare" && e.right._tag === "Number" ? e.right.value : undefined
  }
  it("reads scientific, separated, fractional and hex forms without a double in between", () => {
    assert.strictEqual(value("1e+27"), 10n ** 27n)
    assert.strictEqual(value("123456789012345678901234567890"), 123456789012345678901234567890n)
    assert.strictEqual(value("1.5e18"), 1_500_000_000_000_000_000n)
    assert.strictEqual(value("1_000_000"), 1_000_000n)
    assert.strictEqual(value("0xde0b6b3a7640000"), 10n ** 18n)
    assert.strictEqual(value(Parser.maxUint.toString()), Parser.maxUint)
    assert.strictEqual(value("-1", "intCompare"), -1n)
  })
  it("refuses what is not a whole number in range, at its position", () => {
    assert.deepInclude(error("system.uintCompare(tx1.value, >, 1.5e0)"), {
      offset: 33,
      message: "1.5e0 is not a whole number"
    })
    assert.match(error(`system.uintCompare(tx1.value, >, ${Parser.maxUint + 1n})`).message, /outside the uint256 range/)
    assert.match(error("system.uintCompare(tx1.value, >, -1)").message, /expected a number/)
    assert.match(error(`system.intCompare(tx1.value, >, ${Parser.maxInt + 1n})`).message, /outside the int256 range/)
  })
})

describe("a number's work is bounded by its text, not by its exponent", () => {
  it("refuses huge exponents and digit runs at once, before any arithmetic", () => {
    // Each of these took ~25 s (10^1000000000 computed) before the magnitude was checked first.
    assert.strictEqual(Parser.integer("1e-1000000000"), "1e-1000000000 is not a whole number")
    assert.strictEqual(Parser.integer("1e1000000000"), "1e1000000000 is outside the uint256 range")
    assert.strictEqual(Parser.integer(`1e${"9".repeat(400)}`), `1e${"9".repeat(400)} is outside the uint256 range`)
    assert.strictEqual(Parser.integer(`1e-${"9".repeat(400)}`), `1e-${"9".repeat(400)} is not a whole number`)
    assert.strictEqual(Parser.integer("0e999999999999999999"), 0n)
    assert.strictEqual(Parser.integer(`${"1".repeat(100_000)}`), `${"1".repeat(100_000)} is outside the uint256 range`)
    assert.strictEqual(Parser.integer(`1${"0".repeat(100_000)}e-100000`), 1n)
    assert.strictEqual(Parser.integer(`0x${"0".repeat(100_000)}1`), 1n)
    assert.match(error("system.uintCompare(tx1.value, >, 1e-1000000000)").message, /not a whole number/)
  })

  /** The reference: the exact rational value, computed with BigInt for exponents small enough to afford. */
  const reference = (digits: string, fraction: string, exponent: number): bigint | "fraction" | "range" => {
    const scaled = exponent - fraction.length
    const raw = BigInt(digits + fraction)
    if (scaled >= 0) {
      const v = raw * 10n ** BigInt(scaled)
      return v > Parser.maxUint ? "range" : v
    }
    const scale = 10n ** BigInt(-scaled)
    if (raw % scale !== 0n) return "fraction"
    return raw / scale > Parser.maxUint ? "range" : raw / scale
  }
  test.prop(
    [fc.stringMatching(/^[0-9]{1,90}$/), fc.stringMatching(/^[0-9]{0,12}$/), fc.integer({ min: -120, max: 120 })],
    { numRuns: 2_000 }
  )("agrees with exact arithmetic on every digit string, fraction and exponent", (digits, fraction, exponent) => {
    const text = `${digits}${fraction === "" ? "" : `.${fraction}`}e${exponent}`
    const expected = reference(digits, fraction, exponent)
    const got = Parser.integer(text)
    if (typeof expected === "bigint") assert.strictEqual(got, expected, text)
    else if (expected === "fraction") assert.strictEqual(got, `${text} is not a whole number`)
    else assert.strictEqual(got, `${text} is outside the uint256 range`)
  })
})

describe("syntax errors say where and what was expected", () => {
  const cases: ReadonlyArray<readonly [string, number, RegExp]> = [
    ["system.emited(tx1.A.E.X)", 7, /unknown function system\.emited/],
    ["system.emitted(tx1.A.F.X)", 15, /expected an event: txN….Label.E.name/],
    ["system.emitted(tx1.A.E.X", 24, /expected '\)', found the end/],
    ["system.emitted(tx1.A.E.X) &", 26, /expected '&&', '\|\|', ',' or the end/],
    ["system.uintCompare(tx1.A.E.X.v, =>, 1)", 32, /uintCompare takes > >= < <= == !=/],
    ["system.addressCompare(tx1.from, >, 0x00)", 32, /addressCompare takes == !=, not >/],
    ["system.addressCompare(tx1.from, ==, 0x1234)", 36, /expected an address: 0x and 40 hex digits/],
    ["system.uintCompare(tx0.value, >, 1)", 22, /expected the transaction number after tx/],
    ["system.uintCompare(tx1.A.Q.x, >, 1)", 25, /expected E \(an event\), F \(a function\) or a field after A/],
    ["system.uintCompare(tx1.A.E.X, >, 1)", 19, /expected a parameter after the event or function/],
    ["system.uintCompare(tx1.A.E.X.@nope, >, 1)", 30, /unknown occurrence metadata @nope/],
    ['system.stringCompare(tx1.itx1.error, ==, "open)', 41, /unterminated string/],
    ["", 0, /expected system.<function>/],
    ["(".repeat(70) + "true" + ")".repeat(70), 64, /nested deeper than 64 levels/]
  ]
  it.each(cases)("%s", (source, offset, message) => {
    const e = error(source)
    assert.match(e.message, message)
    assert.strictEqual(e.offset, offset, e.message)
  })
  it("lists the functions when the name is unknown", () => {
    assert.include(error("system.nope(tx1)").expected, "system.uintCompare")
  })
})

// ---------------------------------------------------------------- generated trees
const label = fc.constantFrom("USDC", "Pool", "Router_2", "A", "*")
const name = fc.constantFrom("transfer", "Swap", "amount", "to", "value_1", "x")
const frame: fc.Arbitrary<Rules.Ast.FrameRef> = fc.record(
  { tx: fc.integer({ min: 1, max: 3 }), itx: fc.constantFrom<number | "*" | "any">(1, 2, 3, "*", "any") },
  { requiredKeys: ["tx"] }
)
const selector: fc.Arbitrary<Rules.Ast.Selector> = fc.oneof(
  fc.constant({ _tag: "Any" as const }),
  fc.record(
    {
      _tag: fc.constant("Named" as const),
      name,
      types: fc.array(fc.constantFrom("uint256", "address", "bytes32[]", "(uint8,address)[2]"), { maxLength: 3 })
    },
    { requiredKeys: ["_tag", "name"] }
  )
)
const occurrence = (kind: "E" | "F"): fc.Arbitrary<Rules.Ast.OccurrenceRef> =>
  fc.record(
    { frame, contract: label, kind: fc.constant(kind), selector, occurrence: fc.integer({ min: 1, max: 3 }) },
    { requiredKeys: ["frame", "contract", "kind", "selector"] }
  )
const anyOccurrence = fc.oneof(occurrence("E"), occurrence("F"))
const accessor: fc.Arbitrary<Rules.Ast.Accessor> = fc.oneof(
  fc.record({ _tag: fc.constant("Member" as const), name }),
  fc.record({ _tag: fc.constant("Position" as const), index: fc.nat(5) }),
  fc.record({ _tag: fc.constant("Index" as const), index: fc.nat(5) })
)
const at = fc.constant(0)
const field = fc.oneof(occurrence("E"), occurrence("F")).chain((ref) =>
  fc.record({
    _tag: fc.constant("Field" as const),
    at,
    ref: fc.constant(ref),
    returned: ref.kind === "F" ? fc.boolean() : fc.constant(false),
    path: fc.array(accessor, { minLength: 1, maxLength: 3 })
  })
)
const value: fc.Arbitrary<Rules.Ast.Value> = fc.oneof(
  field,
  fc.record({ _tag: fc.constant("Meta" as const), at, ref: anyOccurrence, field: fc.constantFrom(...Ast.metaFields) }),
  fc.record(
    {
      _tag: fc.constant("FrameField" as const),
      at,
      frame,
      contract: fc.constantFrom("USDC", "Pool"),
      field: fc.constantFrom(...Ast.fieldNames)
    },
    { requiredKeys: ["_tag", "at", "frame", "field"] }
  )
)
const placeholder = fc.record({ _tag: fc.constant("Placeholder" as const), at, name })
const text = fc.string({ maxLength: 8 })
const literalFor: { readonly [C in Rules.Ast.Comparator]: fc.Arbitrary<Rules.Ast.Operand> } = {
  uintCompare: fc.record({ _tag: fc.constant("Number" as const), at, value: fc.bigInt(0n, Parser.maxUint) }),
  intCompare: fc.record({ _tag: fc.constant("Number" as const), at, value: fc.bigInt(Parser.minInt, Parser.maxInt) }),
  addressCompare: fc.record({
    _tag: fc.constant("Address" as const),
    at,
    value: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`)
  }),
  boolCompare: fc.record({ _tag: fc.constant("Bool" as const), at, value: fc.boolean() }),
  stringCompare: fc.record({ _tag: fc.constant("String" as const), at, value: text }),
  bytesCompare: fc.record({
    _tag: fc.constant("Bytes" as const),
    at,
    value: fc.uint8Array({ maxLength: 6 }).map((b) => `0x${Buffer.from(b).toString("hex")}`)
  })
}
const comparison: fc.Arbitrary<Rules.Ast.Expr> = fc
  .constantFrom(...(Object.keys(Ast.comparators) as Array<Rules.Ast.Comparator>))
  .chain((comparator) =>
    fc.record({
      _tag: fc.constant("Compare" as const),
      at,
      comparator: fc.constant(comparator),
      left: value,
      operator: fc.constantFrom(...Ast.comparators[comparator]),
      right: fc.oneof(literalFor[comparator], placeholder, value)
    })
  )
const numeric = fc.oneof(literalFor.uintCompare, placeholder, value)
const leaf: fc.Arbitrary<Rules.Ast.Expr> = fc.oneof(
  comparison,
  fc.record({ _tag: fc.constant("Constant" as const), at, value: fc.boolean() }),
  fc.record({ _tag: fc.constant("Emitted" as const), at, ref: occurrence("E") }),
  fc.record({ _tag: fc.constant("Invoked" as const), at, ref: occurrence("F") }),
  fc.record({ _tag: fc.constant("Reentrant" as const), at, ref: occurrence("F") }),
  fc.record({ _tag: fc.constant("Reverted" as const), at, target: fc.oneof(occurrence("F"), frame) }),
  fc.record({ _tag: fc.constant("Created" as const), at, frame }),
  fc.record(
    { _tag: fc.constant("NativeTransfer" as const), at, frame, contract: fc.constantFrom("USDC", "Vault") },
    { requiredKeys: ["_tag", "at", "frame"] }
  ),
  fc.record({ _tag: fc.constant("InGroup" as const), at, value, group: text }),
  fc.record({
    _tag: fc.constant("Count" as const),
    at,
    ref: anyOccurrence,
    operator: fc.constantFrom(...Parser.numericOps),
    right: numeric
  }),
  fc.record({
    _tag: fc.constant("Sum" as const),
    at,
    value: field,
    operator: fc.constantFrom(...Parser.numericOps),
    right: numeric
  })
)
const expr: fc.Arbitrary<Rules.Ast.Expr> = fc.letrec<{ e: Rules.Ast.Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({ _tag: fc.constant("Not" as const), at, expr: tie("e") }),
    fc.record({ _tag: fc.constant("And" as const), at, left: tie("e"), right: tie("e") }),
    fc.record({ _tag: fc.constant("Or" as const), at, left: tie("e"), right: tie("e") })
  )
})).e

describe("printing and parsing", () => {
  test.prop([expr], { numRuns: 500 })("parse(print(e)) is e for every tree", (e) => {
    const text = Printer.print(e)
    const back = Parser.parse(text)
    assert.isTrue(back.ok, back.ok ? "" : `${text}\n${back.error.offset}: ${back.error.message}`)
    if (back.ok) assert.deepStrictEqual(Ast.strip(back.expr), Ast.strip(e), text)
  })

  test.prop([fc.string({ maxLength: 60 })])("parsing never throws, whatever the text", (source) => {
    const result = Parser.parse(source)
    assert.isTrue(result.ok || (result.error.offset >= 0 && result.error.offset <= source.length))
  })
})
