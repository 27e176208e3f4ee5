/**
 * `vigil monitor backtest --rpc URL --contracts FILE --from N --to M [--chain ID] [--block-range K]
 * [--literal-defs JSON] [--separately] EXPR...`: runs watch rules over a range of blocks read from a node, as
 * historical analysis does, and prints each match as a JSON line (rule index, bound transactions, frames, decoded
 * occurrences, the terms that held), then one summary line on stderr. The fastest way to try a rule before
 * deploying a bot. Several expressions are AND-ed into one rule, as a bot's are (`tx1` is the same transaction in
 * each); `--separately` runs each as a rule of its own (rule index = its position).
 */
import { EvmRpc } from "@vigil/adapter-evm"
import { ChainData, Rules, Scan } from "@vigil/core"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CommandFailed, needsSubcommand, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { readContracts } from "./RulesCommand.ts"

const httpUrl = (text: string): URL | undefined => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url?.protocol === "http:" || url?.protocol === "https:" ? url : undefined
}

/** Blocks one backtest may read (a larger range is refused: split it). */
const maxBlocks = 100_000

const backtest = Command.make(
  "backtest",
  {
    rpc: Flag.String("rpc").pipe(Flag.withDescription("JSON-RPC URL of the chain's node (required)")),
    contracts: Flag.String("contracts").pipe(
      Flag.withDescription("JSON array of contracts: [{chainId, contractAddress, label, ABI}] (required)")
    ),
    chain: Flag.Int("chain").pipe(Flag.withDescription("Chain id whose contracts the rules use"), Flag.optional),
    from: Flag.Int("from").pipe(Flag.withDescription("First block (required)")),
    to: Flag.Int("to").pipe(Flag.withDescription("Last block (inclusive) (required)")),
    blockRange: Flag.Int("block-range").pipe(
      Flag.withDescription("topLevelTxBlockRange: the most blocks between a rule's first and last transaction"),
      Flag.withDefault(100)
    ),
    literalDefs: Flag.String("literal-defs").pipe(
      Flag.withDescription("JSON object of placeholder values, e.g. '{\"maxTransferAmount\": 1e+27}'"),
      Flag.optional
    ),
    separately: Flag.Boolean("separately").pipe(
      Flag.withDescription(
        "Run each expression as a rule of its own (by default several expressions are AND-ed into one rule, as a bot's are)"
      ),
      Flag.withDefault(false)
    ),
    expressions: Argument.String("expression").pipe(Argument.variadic({ min: 1 }))
  },
  (args) =>
    Effect.gen(function* () {
      if (args.from < 0 || args.to < args.from)
        return yield* new UsageError({ message: `--from ${args.from} --to ${args.to} is not a range of blocks` })
      if (args.to - args.from + 1 > maxBlocks)
        return yield* new UsageError({
          message: `--from ${args.from} --to ${args.to} is ${args.to - args.from + 1} blocks; at most ${maxBlocks} at once`
        })
      if (args.blockRange < 0)
        return yield* new UsageError({ message: `--block-range must be 0 or more (0: the same block)` })
      const url = httpUrl(args.rpc)
      if (url === undefined) return yield* new UsageError({ message: `--rpc ${args.rpc} is not an http(s) URL` })
      const { chainId, contracts } = yield* readContracts(args.contracts, args.chain)
      const literalDefs = yield* Rules.Literals.fromJson(Option.getOrUndefined(args.literalDefs)).pipe(
        Effect.mapError(({ message }) => new UsageError({ message: `--literal-defs: ${message}` }))
      )
      const groups = args.separately ? args.expressions.map((e) => [e]) : [args.expressions]
      const rules: Array<Scan.Rule> = []
      for (const [index, sources] of groups.entries()) {
        // What no data feeds (address groups, transaction risk scores) is refused: it would find nothing, silently.
        const result = Rules.Checker.checkRule(sources, { contracts, literalDefs, refuseUnfed: true })
        if (!result.ok) {
          const p = result.problems[0]!
          return yield* new CommandFailed({
            message: `expression ${index + p.expression + 1} does not check at offset ${p.offset}: ${p.message} (vigil rules check shows every problem)`
          })
        }
        rules.push({ index, expr: result.rule.expr, needsTraces: result.rule.needsTraces })
      }
      const blocks = Array.from({ length: args.to - args.from + 1 }, (_, i) => args.from + i)
      let matches = 0
      const outcome = yield* Scan.scan({
        chainId,
        blocks,
        contracts,
        rules,
        blockRange: args.blockRange,
        onMatch: (found) => {
          matches++
          return JsonLine.print({ rule: found.rule, ...found.evidence })
        }
      }).pipe(
        Effect.provideService(ChainData.ChainData, EvmRpc.make({ urls: new Map([[chainId, url.href]]) })),
        Effect.mapError(
          (e) => new CommandFailed({ message: e._tag === "OverBounds" ? e.message : `${args.rpc}: ${e.message}` })
        )
      )
      const missing =
        outcome.missing.length === 0
          ? ""
          : `; ${outcome.missing.length} block${outcome.missing.length === 1 ? "" : "s"} missing (${outcome.missing
              .slice(0, 5)
              .map((m) => `${m.number}: ${m.reason}`)
              .join(", ")}${outcome.missing.length > 5 ? ", …" : ""})`
      yield* Console.error(
        `${outcome.blocks} blocks, ${outcome.transactions} transactions, ${matches} match${matches === 1 ? "" : "es"}${missing}`
      )
    })
).pipe(
  Command.withDescription(
    "Run watch rules over a range of blocks from a node; print matches as JSON lines. Several expressions are AND-ed into one rule, as a bot's are (tx1 is the same transaction in each); --separately runs each as its own rule"
  ),
  Command.withExamples([
    {
      command:
        "vigil monitor backtest --rpc http://127.0.0.1:8545 --contracts contracts.json --from 100 --to 200 'system.emitted(tx1.Token.E.Transfer)'",
      description: "What a rule would have alerted on"
    }
  ])
)

/** The command group. */
export const command = Command.make("monitor", {}, needsSubcommand("vigil monitor", ["backtest"])).pipe(
  Command.withDescription("Monitoring: try watch rules against a chain"),
  Command.withSubcommands([backtest])
)
