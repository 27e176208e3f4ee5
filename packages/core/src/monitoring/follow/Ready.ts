/**
 * The bots a chain's follower runs, ready: each active bot's rules checked against its key's contracts (once per
 * revision of the bot and set of contracts, not at every step), its channels, and how far back its matches reach;
 * and the window of recent blocks kept between steps with each bot's matches still pending there.
 */
import { Clock, Effect } from "effect"
import { ApiKeys, type ApiKeyStore } from "../../access/index.ts"
import type { WebhookStore } from "../../delivery/index.ts"
import type { Pace } from "../../kernel/index.ts"
import type { Bot, BotStore } from "../bots/BotStore.ts"
import type { BlockData, Contract } from "../chain/ChainFacts.ts"
import * as Scan from "../chain/Scan.ts"
import type { ContractStore } from "../contracts/ContractStore.ts"
import * as Checker from "../rules/Checker.ts"
import * as Evaluator from "../rules/Evaluator.ts"
import type * as Facts from "../rules/Facts.ts"
import * as Literals from "../rules/Literals.ts"
import * as Reads from "../rules/Reads.ts"
import type { Mark } from "./FollowStore.ts"

/** A block read for following, with its number. */
export type Block = BlockData & { readonly number: number }

/** A block's mark: number, hash and parent's hash. */
export const markOf = (b: Block): Mark => ({
  number: b.number,
  hash: b.block.hash,
  parentHash: b.block.parentHash ?? ""
})

/** A bot ready to run: its checked rules, its key's contracts and its notification channels. */
export interface Prepared {
  readonly bot: Bot
  /** Blocks before a new one that its matches may reach: its block range if a rule binds several transactions. */
  readonly reach: number
  readonly rules: ReadonlyArray<Scan.Rule>
  /** The normal form of each rule, by index. */
  readonly normals: ReadonlyArray<string>
  /** What its pending matches are kept under: its id and revision (a changed rule starts afresh). */
  readonly key: string
  /** The first block it is run on (`watchingFrom`); undefined: from the block the follower processes next. */
  readonly from?: number
  readonly contracts: ReadonlyArray<Contract>
  readonly channels: ReadonlyArray<WebhookStore.Webhook>
}

/** The blocks before the cursor that a rule may still reach, and each bot's matches left pending. */
export interface Window {
  readonly at: Mark
  readonly traces: boolean
  /** How many blocks before the cursor it holds: the longest reach of the bots it was built for. */
  readonly range: number
  readonly blocks: ReadonlyArray<Block>
  readonly pending: ReadonlyMap<string, ReadonlySet<string>>
}

/** What the rules of `bots` read of the blocks' occurrences: all a step decodes for them. */
export const readsOf = (bots: ReadonlyArray<Prepared>): Reads.Reads =>
  Reads.union(bots.flatMap((p) => p.rules.map((r) => Reads.of(r.expr))))

/**
 * The facts of spans of `blocks` (ascending), each decoded once per set of contracts (a key's bots share its
 * contracts, so a step decodes a span once for all of them, whatever their number), a slice at a time, of the
 * occurrences `reads` covers (what the bots judged over them read).
 */
export const factsOf = (blocks: ReadonlyArray<Block>, reads: Reads.Reads, pace: Pace.Pace) => {
  const made = new Map<ReadonlyArray<Contract>, Map<string, Facts.Facts>>()
  /** The facts of the blocks numbered `from` to `head` decoded for `contracts`, with `blockRange`. */
  return (
    from: number,
    head: number,
    contracts: ReadonlyArray<Contract>,
    blockRange: number
  ): Effect.Effect<Facts.Facts> =>
    Effect.gen(function* () {
      const byContracts = made.get(contracts) ?? new Map<string, Facts.Facts>()
      made.set(contracts, byContracts)
      const key = `${from}:${head}`
      let facts = byContracts.get(key)
      if (facts === undefined) {
        facts = yield* Scan.decode(
          blocks.filter((b) => b.number >= from && b.number <= head),
          contracts,
          { blockRange, head, reads },
          pace
        )
        byContracts.set(key, facts)
      }
      return facts.blockRange === blockRange ? facts : { ...facts, blockRange }
    })
}

/**
 * The order a step judges `joined` in (their positions): bots over the same decoded blocks (contracts and reach)
 * whose rules visit the same transactions (`Evaluator.footprint`) one after another, so each finds those transactions
 * in the processor's caches rather than in memory; otherwise in their own order. Which of a key's bots its share
 * leaves for a later step follows this order.
 */
export const judgingOrder = (joined: ReadonlyArray<Prepared>): ReadonlyArray<number> => {
  const lists = new Map<ReadonlyArray<Contract>, number>()
  const keys = joined.map((p) => {
    let list = lists.get(p.contracts)
    if (list === undefined) lists.set(p.contracts, (list = lists.size))
    return `${list}\u0000${p.reach}\u0000${p.rules.map((r) => Evaluator.footprint(r.expr)).join("\u0003")}`
  })
  return keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b))
}

/** Nothing pending, found without evaluating. */
const nonePending: Scan.Judged = { found: [], pending: new Set(), bindings: 0 }

/**
 * The matches of `p` still pending at block `head` (its negations' ranges open past it), within `limits`: only a
 * rule whose negation looks forward can leave any, so only such a rule is evaluated.
 */
export const pendingOf = (
  p: Prepared,
  facts: ReturnType<typeof factsOf>,
  head: number,
  limits: { readonly bindings: number; readonly matches: number },
  pace: Pace.Pace
): Effect.Effect<Scan.Judged> =>
  p.reach === 0 || !p.rules.some((r) => Evaluator.looksForward(r.expr))
    ? Effect.succeed(nonePending)
    : Effect.flatMap(facts(head - p.reach + 1, head, p.contracts, p.bot.options.topLevelTxBlockRange), (f) =>
        Scan.pendingAt(p.rules, f, limits, pace)
      )

type Checked = Extract<Checker.RuleResult, { ok: true }>["rule"] | string

/** Checks a bot's rules (one rule, AND-ed) against contracts: the rule, or what is wrong. */
const check = Effect.fnUntraced(function* (bot: Bot, contracts: ReadonlyArray<Contract>): Effect.fn.Return<Checked> {
  const defs = yield* Effect.result(Literals.fromJson(bot.options.literalDefs))
  if (defs._tag === "Failure") return `bot ${bot.id}: ${defs.failure.message}`
  const literalDefs = defs.success
  const checked = Checker.checkRule(bot.watchRule.expressions, {
    contracts,
    literalDefs,
    watchRuleType: bot.watchRule.watchRuleType,
    ...(bot.options.ruleScope === undefined ? {} : { ruleScope: bot.options.ruleScope })
  })
  if (checked.ok) return checked.rule
  const first = checked.problems[0]!
  return `bot ${bot.id}, expression ${first.expression + 1}: ${first.message}`
})

/**
 * Reads a chain's active bots and makes them ready; a bot whose rules no longer check is left out and said. The
 * checked rules are kept by bot revision and contract set (contracts are never changed, only added and removed).
 */
export const preparer = (
  bots: BotStore["Service"],
  contracts: ContractStore["Service"],
  outbox: WebhookStore.Destinations["Service"],
  keys: ApiKeyStore.ApiKeyStore["Service"]
) => {
  const byChain = new Map<number, Map<string, Checked>>()
  /**
   * Per chain, the first list of contracts seen with each content (labels, addresses, ABIs): keys that registered
   * the same contracts under the same labels get the same list, so a step decodes a span of blocks once for all of
   * them. Contracts are never changed, only added and removed, so a list is looked up by its ids and its content is
   * read only when those ids are new.
   */
  const sameAsByChain = new Map<number, Map<string, ReadonlyArray<Contract>>>()
  const byIdsByChain = new Map<number, Map<string, ReadonlyArray<Contract>>>()
  const remembered = <K, V>(maps: Map<number, Map<K, V>>, chainId: number) => {
    const map = maps.get(chainId) ?? new Map<K, V>()
    maps.set(chainId, map)
    return map
  }
  return Effect.fnUntraced(function* (chainId: number) {
    const checkedRules = remembered(byChain, chainId)
    const sameAs = remembered(sameAsByChain, chainId)
    const byIds = remembered(byIdsByChain, chainId)
    const sharedList = (list: ReadonlyArray<Contract>, ids: string) => {
      let shared = byIds.get(ids)
      if (shared === undefined) {
        const content = list
          .map((c) => `${c.label}\u0000${c.address.toLowerCase()}\u0000${JSON.stringify(c.abi)}`)
          .join("\u0001")
        shared = sameAs.get(content) ?? list
        sameAs.set(content, shared)
        byIds.set(ids, shared)
      }
      return shared
    }
    const active = (yield* bots.active()).filter((b) => b.chainId === chainId)
    const byKey = new Map<
      string,
      { contracts: ReadonlyArray<Contract>; ids: string; channels: ReadonlyArray<WebhookStore.Webhook> }
    >()
    const ready: Array<Prepared> = []
    const problems: Array<string> = []
    /** Bots of a key revoked or expired: they stop, whatever instance follows their chain. */
    const lapsed: Array<{ readonly bot: (typeof active)[number]; readonly reason: string }> = []
    const standing = new Map<string, string | undefined>()
    const now = yield* Clock.currentTimeMillis
    const used = new Set<string>()
    for (const bot of active) {
      if (!standing.has(bot.keyId)) standing.set(bot.keyId, ApiKeys.lapsed(yield* keys.find(bot.keyId), now))
      const reason = standing.get(bot.keyId)
      if (reason !== undefined) {
        lapsed.push({ bot, reason })
        continue
      }
      let of = byKey.get(bot.keyId)
      if (of === undefined) {
        const list = yield* contracts.list(bot.keyId, chainId)
        const ids = list.map((c) => c.id).join(",")
        of = {
          contracts: sharedList(list, ids),
          ids,
          channels: yield* outbox.list(bot.keyId, "channels")
        }
        byKey.set(bot.keyId, of)
      }
      const cacheKey = `${bot.id}@${bot.revision}|${of.ids}`
      used.add(cacheKey)
      let rule = checkedRules.get(cacheKey)
      if (rule === undefined) {
        rule = yield* check(bot, of.contracts)
        checkedRules.set(cacheKey, rule)
      }
      if (typeof rule === "string") {
        problems.push(rule)
        continue
      }
      ready.push({
        bot,
        reach: rule.transactions > 1 ? bot.options.topLevelTxBlockRange : 0,
        // The bot's expressions are one rule (AND-ed): index 0.
        rules: [{ index: 0, expr: rule.expr, needsTraces: rule.needsTraces }],
        normals: [rule.normal],
        key: `${bot.id}@${bot.revision}`,
        ...(bot.watchingFrom === undefined ? {} : { from: bot.watchingFrom.blockNumber }),
        contracts: of.contracts,
        channels: of.channels.filter((c) => bot.notifications.includes(c.id))
      })
    }
    for (const k of checkedRules.keys()) if (!used.has(k)) checkedRules.delete(k)
    const listed = new Set([...byKey.values()].map((of) => of.ids))
    for (const k of byIds.keys()) if (!listed.has(k)) byIds.delete(k)
    const kept = new Set(byIds.values())
    for (const [k, list] of sameAs) if (!kept.has(list)) sameAs.delete(k)
    return { ready, problems, lapsed, active: active.length }
  })
}
