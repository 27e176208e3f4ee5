/**
 * Refreshing the official lists from their publishers: OFAC's SDN Advanced XML from its public URL, and each
 * stablecoin issuer's freezes from its token contract's events on the configured node, read on from the last block
 * the list's current version read. Each becomes a new dated version through the same guard as any ingest. A source
 * that cannot be reached is reported in one line and noted beside its list (the list in force keeps serving).
 */
import { JsonRpc } from "@vigil/adapter-evm"
import { Ingestion, Instant, IntelIndex, type StoreError } from "@vigil/core"
import { Clock, Effect, Schema } from "effect"
import * as Input from "./Input.ts"

/** OFAC's SDN list in its Advanced XML form, where OFAC publishes it. */
export const ofacSdnUrl = "https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_ADVANCED.XML"

/** What a refresh reads, and from where. */
export interface Settings {
  /** The SDN Advanced XML's URL (or a file); default {@link ofacSdnUrl}. */
  readonly sdnUrl?: string
  /** Each chain's node (by chain id): the freeze logs of a chain with no node are not refreshed. */
  readonly rpcUrls: ReadonlyMap<number, string>
  /** Blocks left unread behind each chain's head, by chain id; default {@link defaultConfirmations}. */
  readonly confirmations?: (chainId: number) => number | undefined
  /** The freeze logs to read; default `Freezes.sources` (USDT and USDC on Ethereum). */
  readonly freezes?: ReadonlyArray<Ingestion.Freezes.Source>
}

/** Blocks a freeze log is read behind its chain's head unless configured: a reorganisation rarely reaches them. */
export const defaultConfirmations = 12

/** What a refresh did to one list. */
export interface Report {
  readonly list: string
  /** committed: a new version; unchanged: nothing new; skipped: not configured; failed: the source could not be read. */
  readonly status: "committed" | "unchanged" | "skipped" | "failed"
  /** One line saying so. */
  readonly line: string
  readonly outcome?: Ingestion.Ingest.Outcome
}

/** A node that cannot be read, or answers with an error. */
class NodeFailed extends Schema.TaggedError<NodeFailed>()("NodeFailed", {
  message: Schema.String,
  /** The node answered, refusing the call (a range too wide, say), rather than not answering at all. */
  refused: Schema.optionalKey(Schema.Boolean)
}) {}

/** One JSON-RPC call; its result, or the node's failure or refusal in words. */
const call = (url: string, method: string, params: ReadonlyArray<unknown>) =>
  JsonRpc.call(url, method, params).pipe(
    Effect.mapError((e) => new NodeFailed({ message: e.message, refused: e.code !== undefined }))
  )

/** A JSON-RPC quantity (0x and hex digits). */
const Quantity = Schema.String.check(Schema.makeFilter((t: string) => /^0x[0-9a-f]+$/i.test(t) || "not a hex quantity"))

const Log = Schema.Struct({
  topics: Schema.Array(Schema.String),
  data: Schema.String,
  blockNumber: Quantity,
  logIndex: Quantity,
  transactionHash: Schema.String
})
const Logs = Schema.Array(Log)
const Block = Schema.Struct({ timestamp: Quantity })

const hex = (n: number) => `0x${n.toString(16)}`

/** The most blocks one `eth_getLogs` asks for; a range the node refuses is halved until it answers. */
const widestRange = 100_000

/** Every log of `source`'s two events from `from` to `to`, in ranges the node accepts. */
const logsOf = (url: string, source: Ingestion.Freezes.Source, from: number, to: number) =>
  Effect.gen(function* () {
    const topics = [
      [Ingestion.Freezes.selector(source.listed), Ingestion.Freezes.selector(source.unlisted)]
    ] as ReadonlyArray<unknown>
    const out: Array<typeof Log.Type> = []
    let start = from
    let width = widestRange
    while (start <= to) {
      const end = Math.min(to, start + width - 1)
      const answer = yield* call(url, "eth_getLogs", [
        { address: source.contract, fromBlock: hex(start), toBlock: hex(end), topics }
      ]).pipe(
        Effect.flatMap((result) =>
          Effect.mapError(
            Schema.decodeUnknownEffect(Logs)(result),
            (e) => new NodeFailed({ message: `eth_getLogs: not a list of logs: ${e.message}` })
          )
        ),
        Effect.map((logs) => ({ logs }) as const),
        // A node that answers but refuses the range (too wide, too many logs): asked again in halves.
        Effect.catchIf(
          (e) => e.refused === true,
          (e) => Effect.succeed({ refused: e.message } as const)
        )
      )
      if ("refused" in answer) {
        if (width === 1) return yield* new NodeFailed({ message: `eth_getLogs at block ${start}: ${answer.refused}` })
        width = Math.max(1, Math.floor(width / 2))
        continue
      }
      out.push(...answer.logs)
      start = end + 1
    }
    return out
  })

/** The UTC day of each block, read once per block. */
const daysOf = (url: string, blocks: ReadonlyArray<number>) =>
  Effect.forEach(
    [...new Set(blocks)],
    (block) =>
      call(url, "eth_getBlockByNumber", [hex(block), false]).pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Block)),
        Effect.mapError((e) => new NodeFailed({ message: `block ${block}: ${e.message}` })),
        Effect.map((b) => [block, Instant.day(Number(BigInt(b.timestamp)) * 1000)] as const)
      ),
    { concurrency: 8 }
  ).pipe(Effect.map((entries) => new Map(entries)))

/** Every record of `list`, de-listed ones included, read through the index in pages. */
const recordsOf = (list: string) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.IntelIndex
    const out: Array<Ingestion.Builtin.List["records"][number]> = []
    let after = ""
    for (;;) {
      const page = yield* index.scan(after, 1_000)
      if (page.length === 0) return out
      for (const r of page)
        if (r.list === list)
          out.push({
            address: r.address,
            family: r.family,
            category: r.category,
            reference: r.reference,
            ...(r.label === undefined ? {} : { label: r.label }),
            listedAt: r.listedAt,
            ...(r.delistedAt === undefined ? {} : { delistedAt: r.delistedAt })
          })
      after = page.at(-1)!.address
    }
  })

/** Notes beside a list that its refresh could not read its source (shown by `lists` and `/health`). */
const noted = (list: string, origin: string, message: string) =>
  Effect.flatMap(IntelIndex.Versions, (versions) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      versions.recordRefusal(list, { at: Instant.iso(now), origin, message: `refresh failed: ${message}` })
    )
  )

const failed = (list: string, origin: string, problem: string, asOf: string | undefined) => {
  const message = problem.replace(`cannot read ${origin}: `, "")
  return Effect.as(noted(list, origin, `cannot read ${origin}: ${message}`), {
    list,
    status: "failed" as const,
    line: `${list}: cannot refresh from ${origin}: ${message}; ${asOf === undefined ? "the list is not there yet" : `the list in force (as of ${asOf}) keeps serving`}`
  })
}

/** The version of `list` in force, if any. */
const current = (list: string) =>
  Effect.map(
    Effect.flatMap(IntelIndex.IntelIndex, (index) => index.lists),
    (lists) => lists.find((l) => l.list === list)
  )

/** Refreshes OFAC's SDN list from its publisher. */
const refreshSdn = (url: string) =>
  Effect.gen(function* () {
    const list = "ofac-sdn"
    const before = yield* current(list)
    // An SDN source always plans.
    const { request, parser } = yield* Effect.orDie(Ingestion.Sources.plan({ kind: "ofac-sdn-xml", input: url, list }))
    const input = yield* Input.open(url).pipe(Effect.result)
    if (input._tag === "Failure") return yield* failed(list, url, input.failure.message, before?.asOf)
    const outcome = yield* Input.ingest(request, parser, input.success.bytes).pipe(Effect.result)
    if (outcome._tag === "Failure") {
      const e = outcome.failure
      if (e._tag === "InputError") return yield* failed(list, url, e.message, before?.asOf)
      if (e._tag === "IngestFailed")
        return {
          list,
          status: "failed" as const,
          line: e.message.startsWith(list) ? e.message : `${list}: ${e.message}`
        }
      return yield* e
    }
    return {
      list,
      status: outcome.success.status,
      line: Ingestion.Sources.summary(url, outcome.success),
      outcome: outcome.success
    }
  })

/** Refreshes one issuer's freezes from its contract's events, read on from the list's last block read. */
const refreshFreezes = (source: Ingestion.Freezes.Source, settings: Settings) =>
  Effect.gen(function* () {
    const url = settings.rpcUrls.get(source.chainId)
    if (url === undefined)
      return {
        list: source.list,
        status: "skipped" as const,
        line: `${source.list}: no node for chain ${source.chainId} (VIGIL_RPC_URL_${source.chainId} or --chains): not refreshed`
      }
    const before = yield* current(source.list)
    const where = `chain ${source.chainId}'s node`
    const from = (before === undefined ? undefined : Ingestion.Freezes.lastBlock(before.origin)) ?? source.deployBlock
    const read = yield* Effect.gen(function* () {
      const head = yield* call(url, "eth_blockNumber", []).pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Quantity)),
        Effect.map((text) => Number(BigInt(text))),
        Effect.mapError(() => new NodeFailed({ message: "eth_blockNumber: the node did not answer a block number" }))
      )
      const to = head - (settings.confirmations?.(source.chainId) ?? defaultConfirmations)
      if (to < from) return { to, events: [], day: undefined }
      const logs = yield* logsOf(url, source, from, to)
      const days = yield* daysOf(url, [...logs.map((l) => Number(BigInt(l.blockNumber))), to])
      const events = logs.flatMap((l) => {
        const block = Number(BigInt(l.blockNumber))
        const e = Ingestion.Freezes.decodeLog(source, l as Ingestion.Freezes.Log, {
          block,
          logIndex: Number(BigInt(l.logIndex)),
          date: days.get(block)!,
          tx: l.transactionHash
        })
        return e === undefined ? [] : [e]
      })
      return { to, events, day: days.get(to) }
    }).pipe(Effect.result)
    if (read._tag === "Failure") return yield* failed(source.list, where, read.failure.message, before?.asOf)
    const { to, events, day } = read.success
    const held = before === undefined ? [] : yield* recordsOf(source.list)
    const next = Ingestion.Freezes.apply(held, events, source.token)
    // A contract that never froze anything on this chain makes no list (an empty version would be refused).
    if (before === undefined && next.records.length === 0)
      return {
        list: source.list,
        status: "unchanged" as const,
        line: `${source.list}: no freeze in blocks ${from}–${Math.max(from, to)} of chain ${source.chainId}; no list made`
      }
    if (before !== undefined && next.added === 0 && next.ended === 0)
      return {
        list: source.list,
        status: "unchanged" as const,
        line: `${source.list}: unchanged, no new freeze or end in blocks ${from}–${Math.max(from, to)} of chain ${source.chainId}`
      }
    const list: Ingestion.Builtin.List = {
      list: source.list,
      kind: source.kind,
      source: source.publisher,
      asOf: day ?? (yield* Instant.today),
      origin: Ingestion.Freezes.origin(source, source.deployBlock, to),
      records: next.records as Ingestion.Builtin.List["records"]
    }
    const outcome = yield* Ingestion.Builtin.ingestList(list).pipe(Effect.result)
    if (outcome._tag === "Failure") {
      const e = outcome.failure
      if (e._tag === "IngestFailed") return { list: source.list, status: "failed" as const, line: e.message }
      return yield* e
    }
    return {
      list: source.list,
      status: outcome.success.status,
      line: `${Ingestion.Sources.summary(where, outcome.success)}; ${next.added} new freeze${next.added === 1 ? "" : "s"}, ${next.ended} ended`,
      outcome: outcome.success
    }
  })

/** Refreshes every official source in turn; a source that fails does not stop the others. */
export const run = (
  settings: Settings
): Effect.Effect<ReadonlyArray<Report>, StoreError.StoreError, IntelIndex.IntelIndex | IntelIndex.Versions> =>
  Effect.gen(function* () {
    const reports: Array<Report> = [yield* refreshSdn(settings.sdnUrl ?? ofacSdnUrl)]
    for (const source of settings.freezes ?? Ingestion.Freezes.sources)
      reports.push(yield* refreshFreezes(source, settings))
    return reports
  })
