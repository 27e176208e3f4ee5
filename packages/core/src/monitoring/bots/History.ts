/**
 * Historical analysis in two steps (spec §3, §4.7): blocks are submitted for a bot (read from the chain's node,
 * kept whole, recorded as the bot's), then the bot's rules run over every block it was given, decoded with the
 * key's ABIs as they are when the query runs.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Instant, Pace, type StoreError } from "../../kernel/index.ts"
import { type StoredBlock, BlockStore } from "../chain/BlockStore.ts"
import type { Bot } from "./Bot.ts"
import { type BotNotFound, Bots } from "./Bots.ts"
import { ChainData, type ChainDataError } from "../chain/ChainData.ts"
import * as Scan from "../chain/Scan.ts"
import { ContractStore } from "../contracts/ContractStore.ts"
import * as Checker from "../rules/Checker.ts"
import * as Evaluator from "../rules/Evaluator.ts"
import * as Literals from "../rules/Literals.ts"
import * as Reads from "../rules/Reads.ts"

/** Blocks one submission may name. */
export const maxBlocksPerRequest = 1_000

/** Blocks read and stored in one step of a submission: what a failure later in the request cannot take back. */
export const blocksPerStep = 100

/**
 * The work one query may do: bindings its rule tries (10,000,000 take about 0.3 to 5 s) and matches it finds
 * (what one answer carries). Past them the query is refused, saying how to narrow it.
 */
export const queryLimits = { bindings: 10_000_000, matches: 10_000 }

/** A request of historical analysis is wrong; `field` names what. */
export class InvalidHistoryRequest extends Schema.TaggedError<InvalidHistoryRequest>()("InvalidHistoryRequest", {
  field: Schema.String,
  message: Schema.String
}) {}

/** The query cannot run: nothing was submitted, or the bot's rules cannot be evaluated on what was. */
export class HistoryNotReady extends Schema.TaggedError<HistoryNotReady>()("HistoryNotReady", {
  message: Schema.String
}) {}

/** What became of each block of a submission. */
export interface Submitted {
  readonly blocks: ReadonlyArray<{
    readonly number: number
    readonly status: "stored" | "already stored" | "missing"
    readonly reason?: string
  }>
  /** Blocks the bot has now, in all. */
  readonly total: number
}

/** What a bot has been given, and the submission under way in this process, if any. */
export interface Progress {
  readonly blocks: number
  readonly firstBlock?: number
  readonly lastBlock?: number
  readonly running?: { readonly requested: number; readonly processed: number; readonly started: string }
}

/** One match of a historical query. */
export interface HistoricalMatch {
  readonly rule: number
  readonly expression: string
  readonly blockNumber: number
  readonly evidence: Evaluator.Evidence
}

/** What a query found: its matches, and counts of them per rule, contract, event or function, and block span. */
export interface Outcome {
  readonly matches: ReadonlyArray<HistoricalMatch>
  readonly patterns: ReadonlyArray<{
    readonly rule: number
    readonly expression: string
    readonly matches: number
    readonly occurrences: Readonly<Record<string, number>>
    readonly firstBlock?: number
    readonly lastBlock?: number
  }>
  readonly blocks: number
  readonly transactions: number
}

/** A rule's matches over the blocks of a query, each at its first block, and their counts per occurrence and span. */
const summarise = (
  rule: { readonly index: number; readonly checked: Checker.Checked },
  found: ReadonlyArray<{ readonly evidence: Evaluator.Evidence }>
): { readonly matches: ReadonlyArray<HistoricalMatch>; readonly pattern: Outcome["patterns"][number] } => {
  const matches: Array<HistoricalMatch> = []
  const occurrences: Record<string, number> = {}
  let first: number | undefined
  let last: number | undefined
  for (const m of found) {
    const numbers = Object.values(m.evidence.transactions).map((t) => t.blockNumber)
    const blockNumber = Math.min(...numbers)
    first = first === undefined ? blockNumber : Math.min(first, blockNumber)
    last = Math.max(last ?? blockNumber, ...numbers)
    for (const o of Object.values(m.evidence.occurrences)) {
      const name = `${o.contract}.${o.logIndex === undefined ? "F" : "E"}.${o.name}`
      occurrences[name] = (occurrences[name] ?? 0) + 1
    }
    matches.push({ rule: rule.index, expression: rule.checked.normal, blockNumber, evidence: m.evidence })
  }
  const pattern = {
    rule: rule.index,
    expression: rule.checked.normal,
    matches: found.length,
    occurrences,
    ...(first === undefined ? {} : { firstBlock: first, lastBlock: last! })
  }
  return { matches, pattern }
}

/**
 * Reads one step of a submission's blocks from the node and stores those it has as the bot's, noting in `outcome`
 * what became of each.
 */
const readStep = Effect.fnUntraced(function* (
  chain: ChainData["Service"],
  store: BlockStore["Service"],
  bot: { readonly id: string; readonly chainId: number },
  step: ReadonlyArray<number>,
  traces: boolean,
  outcome: Map<number, Submitted["blocks"][number]>
) {
  const stored: Array<StoredBlock> = []
  for (const r of yield* chain.blocks(bot.chainId, step, { traces })) {
    if (r._tag === "Missing") {
      outcome.set(r.number, { number: r.number, status: "missing", reason: r.error.message })
      continue
    }
    stored.push({ chainId: bot.chainId, number: r.number, hash: r.data.block.hash, traces, data: r.data })
    outcome.set(r.number, { number: r.number, status: "stored" })
  }
  yield* store.put(stored)
  yield* store.submit(
    bot.id,
    stored.map((b) => b.number)
  )
})

/** A submission of blocks for a bot, as decoded from its request: the bot's chain and the block numbers. */
export const SubmitRequest = Schema.Struct({
  chainId: Schema.Int.annotate({ description: "The bot's chain" }),
  blocks: Schema.Array(Schema.Int).annotate({ description: "1 to 1,000 block numbers" })
})
export type SubmitRequest = typeof SubmitRequest.Type

/** The submitted block numbers, distinct and in order; an empty list, too many, or a negative one is refused. */
const blockNumbers = (list: ReadonlyArray<number>): Effect.Effect<ReadonlyArray<number>, InvalidHistoryRequest> =>
  list.length > 0 && list.length <= maxBlocksPerRequest && list.every((n) => Number.isSafeInteger(n) && n >= 0)
    ? Effect.succeed([...new Set(list)].sort((a, b) => a - b))
    : Effect.fail(
        new InvalidHistoryRequest({
          field: "blocks",
          message: `must be 1 to ${maxBlocksPerRequest} block numbers (whole numbers, 0 or more)`
        })
      )

/** The bot's rules, checked against the key's contracts as they are now. */
const rulesOf = Effect.fnUntraced(function* (contracts: ContractStore["Service"], keyId: string, bot: Bot) {
  const onChain = yield* contracts.list(keyId, bot.chainId)
  const literalDefs = yield* Literals.fromJson(bot.options.literalDefs).pipe(
    Effect.mapError(({ message }) => new HistoryNotReady({ message }))
  )
  const result = Checker.checkRule(bot.watchRule.expressions, {
    contracts: onChain,
    literalDefs,
    watchRuleType: bot.watchRule.watchRuleType,
    ...(bot.options.ruleScope === undefined ? {} : { ruleScope: bot.options.ruleScope })
  })
  if (!result.ok) {
    const first = result.problems[0]!
    return yield* new HistoryNotReady({
      message: `expression ${first.expression + 1} no longer checks against the key's contracts: ${first.message}`
    })
  }
  // The bot's expressions are one rule (AND-ed), index 0.
  const rules = [{ index: 0, checked: result.rule }]
  return { rules, contracts: onChain }
})

/** Historical analysis of bots. */
export class History extends Context.Service<
  History,
  {
    readonly submit: (
      keyId: string,
      botId: string,
      request: SubmitRequest
    ) => Effect.Effect<Submitted, InvalidHistoryRequest | BotNotFound | ChainDataError | StoreError.StoreError>
    readonly execute: (
      keyId: string,
      botId: string,
      request: { readonly chainId: number }
    ) => Effect.Effect<Outcome, InvalidHistoryRequest | HistoryNotReady | BotNotFound | StoreError.StoreError>
    /** What the bot has been given so far, and how far a submission under way in this process has got. */
    readonly progress: (keyId: string, botId: string) => Effect.Effect<Progress, BotNotFound | StoreError.StoreError>
  }
>()("@vigil/core/History") {
  static readonly layer: Layer.Layer<History, never, Bots | BlockStore | ContractStore | ChainData> = Layer.effect(
    History
  )(
    Effect.gen(function* () {
      const bots = yield* Bots
      const store = yield* BlockStore
      const contracts = yield* ContractStore
      const chain = yield* ChainData
      /** Submissions under way in this process, by bot. */
      const running = new Map<string, { requested: number; processed: number; started: string }>()

      const botOn = (keyId: string, botId: string, chainId: number) =>
        Effect.gen(function* () {
          const bot = yield* bots.get(keyId, botId)
          if (chainId !== bot.chainId)
            return yield* new InvalidHistoryRequest({
              field: "chainId",
              message: `must be the bot's chain, ${bot.chainId}`
            })
          return bot
        })

      return {
        submit: Effect.fn("History.submit")(function* (keyId, botId, request) {
          const bot = yield* botOn(keyId, botId, request.chainId)
          const numbers = yield* blockNumbers(request.blocks)
          const { rules } = yield* Effect.catchTag(rulesOf(contracts, keyId, bot), "HistoryNotReady", () =>
            Effect.succeed({ rules: [] })
          )
          const traces = rules.some((r) => r.checked.needsTraces)
          const have = new Map((yield* store.get(bot.chainId, numbers)).map((b) => [b.number, b]))
          const wanted = numbers.filter((n) => {
            const b = have.get(n)
            return b === undefined || (traces && !b.traces)
          })
          const outcome = new Map<number, Submitted["blocks"][number]>()
          // What is already stored is the bot's at once; the rest is read and stored step by step, so a long
          // request shows its progress and a failure keeps what was done (submitting again skips it).
          const toRead = new Set(wanted)
          yield* store.submit(
            bot.id,
            numbers.filter((n) => !toRead.has(n))
          )
          const progress = {
            requested: wanted.length,
            processed: 0,
            started: Instant.iso(yield* Clock.currentTimeMillis)
          }
          yield* Effect.acquireUseRelease(
            Effect.sync(() => running.set(bot.id, progress)),
            () =>
              Effect.forEach(
                Array.from({ length: Math.ceil(wanted.length / blocksPerStep) }, (_, i) =>
                  wanted.slice(i * blocksPerStep, (i + 1) * blocksPerStep)
                ),
                (step) =>
                  Effect.tap(
                    readStep(chain, store, bot, step, traces, outcome),
                    Effect.sync(() => {
                      progress.processed += step.length
                    })
                  ),
                { discard: true }
              ),
            () => Effect.sync(() => running.get(bot.id) === progress && running.delete(bot.id))
          )
          return {
            blocks: numbers.map((n) => outcome.get(n) ?? { number: n, status: "already stored" as const }),
            total: (yield* store.submitted(bot.id)).length
          }
        }),
        execute: Effect.fn("History.execute")(function* (keyId, botId, request) {
          const bot = yield* botOn(keyId, botId, request.chainId)
          const numbers = yield* store.submitted(bot.id)
          if (numbers.length === 0)
            return yield* new HistoryNotReady({
              message: `no blocks were submitted for bot ${bot.id}: POST /v1/bots/${bot.id}/historical-blocks first`
            })
          const { rules, contracts: onChain } = yield* rulesOf(contracts, keyId, bot)
          const blocks = yield* store.get(bot.chainId, numbers)
          const pace = yield* Pace.make
          // Decoded and evaluated in slices: a long query does not hold the process.
          const facts = yield* Scan.decode(
            blocks.map((b) => b.data),
            onChain,
            {
              blockRange: bot.options.topLevelTxBlockRange,
              reads: Reads.union(rules.map((rule) => Reads.of(rule.checked.expr)))
            },
            pace
          )
          const matches: Array<HistoricalMatch> = []
          const patterns: Array<Outcome["patterns"][number]> = []
          for (const rule of rules) {
            const why = Evaluator.notEvaluable(rule.checked.expr, facts)
            if (why !== undefined)
              return yield* new HistoryNotReady({
                message: `the rule cannot be evaluated: ${why}; submit the blocks again from a node with debug_traceBlockByNumber`
              })
            const evaluation = Evaluator.start(rule.checked.expr, facts, queryLimits)
            yield* Pace.slices(evaluation.run, pace)
            const evaluated = evaluation.outcome()
            if (evaluated.exceeded !== undefined)
              return yield* new HistoryNotReady({
                message:
                  evaluated.exceeded === "bindings"
                    ? `the rule tried more than ${queryLimits.bindings} bindings over these blocks: it matches too widely; join its transactions on a field or narrow it, or submit fewer blocks`
                    : `the rule matched more than ${queryLimits.matches} times over these blocks: narrow it, or submit fewer blocks`
              })
            const summary = summarise(
              rule,
              evaluated.matches.filter((m) => !m.pending)
            )
            matches.push(...summary.matches)
            patterns.push(summary.pattern)
          }
          return { matches, patterns, blocks: blocks.length, transactions: facts.transactions.length }
        }),
        progress: Effect.fn("History.progress")(function* (keyId, botId) {
          const bot = yield* bots.get(keyId, botId)
          const numbers = yield* store.submitted(bot.id)
          const now = running.get(bot.id)
          return {
            blocks: numbers.length,
            ...(numbers.length === 0 ? {} : { firstBlock: numbers[0]!, lastBlock: numbers.at(-1)! }),
            ...(now === undefined ? {} : { running: { ...now } })
          }
        })
      }
    })
  )
}
