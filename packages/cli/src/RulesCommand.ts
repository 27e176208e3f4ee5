/**
 * `vigil rules check --contracts FILE [--literal-defs JSON] [--chain ID] [--type simple|advanced] EXPR...`: checks
 * watch-rule expressions against a contracts file (a JSON array of `POST /v1/contracts` bodies) the way bot creation
 * will, so operators can lint rules in their own CI. Prints each expression's normal form (exit 0), or each problem
 * with a caret under its position and what was probably meant (exit 1).
 */
import { Abi, Rules } from "@vigil/core"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { readFileSync } from "node:fs"
import * as JsonLine from "./JsonLine.ts"
import { CommandFailed, needsSubcommand, UsageError } from "./CommandFailed.ts"

/** One entry of the contracts file: the body of `POST /v1/contracts` (the ABI as JSON or as a JSON string). */
const ContractEntry = Schema.Struct({
  chainId: Schema.Int,
  contractAddress: Schema.String.check(
    Schema.makeFilter(
      (a: string) => /^0[xX][0-9a-fA-F]{40}$/.test(a) || "must be an EVM address (0x and 40 hex digits)"
    )
  ),
  label: Schema.String.check(
    Schema.makeFilter((l: string) => Rules.Ast.isLabel(l) || "must be an identifier that is not a reserved word")
  ),
  ABI: Schema.Union([Abi.Abi, Schema.fromJsonString(Abi.Abi)])
})
const ContractsFile = Schema.fromJsonString(Schema.Array(ContractEntry))

/** The contracts of a contracts file on one chain (the only chain in the file, or `chain`), labels unique. */
export const readContracts = (path: string, chain: Option.Option<number>) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) => new CommandFailed({ message: `cannot read ${path}: ${(e as Error).message}` })
    })
    const entries = yield* Schema.decodeUnknownEffect(ContractsFile)(text).pipe(
      Effect.mapError((e) => new CommandFailed({ message: `${path}: ${e.message.split("\n").join(" ")}` }))
    )
    const chains = new Set(entries.map((e) => e.chainId))
    if (Option.isNone(chain) && chains.size > 1) {
      return yield* new CommandFailed({
        message: `${path} has contracts of chains ${[...chains].join(", ")}: give --chain ID (a bot watches one chain)`
      })
    }
    const onChain = entries.filter((e) => Option.isNone(chain) || e.chainId === chain.value)
    const labels = new Set<string>()
    for (const e of onChain) {
      if (labels.has(e.label)) {
        return yield* new CommandFailed({
          message: `${path}: the label ${e.label} is used twice on chain ${e.chainId}`
        })
      }
      labels.add(e.label)
    }
    return {
      chainId: Option.getOrElse(chain, () => entries[0]?.chainId ?? 0),
      contracts: onChain.map((e) => ({ label: e.label, address: e.contractAddress.toLowerCase(), abi: e.ABI }))
    }
  })

/** The problem under its expression: the source line and a caret at the offset, then the message. */
const render = (index: number, source: string, problem: Rules.Checker.Problem): string => {
  const prefix = `expression ${index + 1}: `
  const meant = problem.candidates.length === 0 ? "" : ` (did you mean ${problem.candidates.join(", ")}?)`
  return `${prefix}${source}\n${" ".repeat(prefix.length + problem.offset)}^ ${problem.message}${meant}`
}

const check = Command.make(
  "check",
  {
    contracts: Flag.String("contracts").pipe(
      Flag.withDescription("JSON array of contracts: [{chainId, contractAddress, label, ABI}] (required)")
    ),
    literalDefs: Flag.String("literal-defs").pipe(
      Flag.withDescription("JSON object of placeholder values, e.g. '{\"maxTransferAmount\": 1e+27}'"),
      Flag.optional
    ),
    chain: Flag.Int("chain").pipe(Flag.withDescription("Chain id whose contracts the rules use"), Flag.optional),
    type: Flag.Literals("type", ["simple", "advanced"]).pipe(
      Flag.withDescription("watchRuleType: simple allows tx1, events, calls, comparisons and && only"),
      Flag.withDefault("advanced")
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription(
        "One JSON record: {ok: true, normal} or {ok: false, problems: [{expression, offset, message, candidates}]}"
      ),
      Flag.withDefault(false)
    ),
    expressions: Argument.String("expression").pipe(Argument.variadic({ min: 1 }))
  },
  (args) =>
    Effect.gen(function* () {
      const { contracts } = yield* readContracts(args.contracts, args.chain)
      const literalDefs = yield* Rules.Literals.fromJson(Option.getOrUndefined(args.literalDefs)).pipe(
        Effect.mapError(({ message }) => new UsageError({ message: `--literal-defs: ${message}` }))
      )
      // As a bot takes them: one rule, its expressions AND-ed, its transactions joined.
      const result = Rules.Checker.checkRule(args.expressions, {
        contracts,
        literalDefs,
        watchRuleType: args.type,
        requireJoin: true,
        refuseUnfed: true
      })
      if (result.ok)
        return yield* args.json
          ? JsonLine.print({ ok: true, normal: result.rule.normal })
          : Console.log(result.rule.normal)
      if (args.json)
        yield* JsonLine.print({
          ok: false,
          problems: result.problems.map((p) => ({
            expression: p.expression,
            offset: p.offset,
            message: p.message,
            candidates: p.candidates
          }))
        })
      else
        for (const problem of result.problems)
          yield* Console.log(render(problem.expression, args.expressions[problem.expression]!, problem))
      const failed = new Set(result.problems.map((p) => p.expression)).size
      return yield* new CommandFailed({
        message: `${failed} of ${args.expressions.length} expression${args.expressions.length === 1 ? "" : "s"} did not check`
      })
    })
).pipe(
  Command.withDescription(
    "Check watch-rule expressions against a contracts file as a bot takes them (one rule, the expressions AND-ed); print its normal form"
  ),
  Command.withExamples([
    {
      command: "vigil rules check --contracts contracts.json 'system.emitted(tx1.Token.E.Transfer)'",
      description: "Check a rule against your contracts"
    }
  ])
)

/** The command group. */
export const command = Command.make("rules", {}, needsSubcommand("vigil rules", ["check"])).pipe(
  Command.withDescription("Watch rules: check expressions before deploying bots"),
  Command.withSubcommands([check])
)
