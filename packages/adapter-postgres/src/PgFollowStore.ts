/**
 * FollowStore on PostgreSQL: cursors, recent block hashes and alerts beside the outbox, so a step's alerts, their
 * deliveries and the cursor move in one transaction. Each step takes its chain's advisory lock and checks the
 * cursor it started from (compare-and-set): of two instances stepping one chain at once, one moves it and the
 * other is told it moved, so no block is processed twice and no alert is stored twice.
 */
import { FollowStore, StoredJson, type StoreError } from "@vigil/core"
import { Effect, type Layer, Result, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { PgDatabase, serialised } from "./PgDatabase.ts"
import { inserter } from "./PgWebhookStore.ts"

interface MarkRow {
  readonly number: number
  readonly hash: string
  readonly parent_hash: string
}

interface AlertRow {
  readonly id: string
  readonly key_id: string
  readonly bot_id: string
  readonly chain_id: number
  readonly block_number: number
  readonly block_hash: string
  readonly block_time: number
  readonly rule: number
  readonly expression: string
  readonly transactions: string
  readonly evidence: string
  readonly created: string
  readonly retracted_at: string | null
  readonly unverified_at: string | null
  readonly suppressed: "threshold" | "interval" | null
}

const toMark = (r: MarkRow): FollowStore.Mark => ({ number: r.number, hash: r.hash, parentHash: r.parent_hash })

/** A value as JSON text. */
/** Stored columns through their codecs (a row that does not decode is `Corrupt`, not a cast). */
const readTransactions = StoredJson.reader(FollowStore.TransactionsJson, "FollowStore", "transactions")
const readEvidence = StoredJson.reader(FollowStore.EvidenceJson, "FollowStore", "evidence")
const encodeTransactions = Schema.encodeSync(FollowStore.TransactionsJson)
const encodeEvidence = FollowStore.evidenceText

const toAlert = (r: AlertRow): Result.Result<FollowStore.Alert, StoreError.StoreError> =>
  Result.map(
    Result.all({
      transactions: readTransactions(r.transactions, `alert ${r.id}`),
      evidence: readEvidence(r.evidence, `alert ${r.id}`)
    }),
    ({ transactions, evidence }) => alertOf(r, transactions, evidence)
  )

const alertOf = (
  r: AlertRow,
  transactions: FollowStore.Alert["transactions"],
  evidence: FollowStore.Alert["evidence"]
): FollowStore.Alert => ({
  id: r.id,
  keyId: r.key_id,
  botId: r.bot_id,
  chainId: r.chain_id,
  blockNumber: r.block_number,
  blockHash: r.block_hash,
  blockTime: r.block_time,
  rule: r.rule,
  expression: r.expression,
  transactions,
  evidence,
  created: r.created,
  ...(r.retracted_at === null ? {} : { retractedAt: r.retracted_at }),
  ...(r.unverified_at === null ? {} : { unverifiedAt: r.unverified_at }),
  ...(r.suppressed === null ? {} : { suppressed: r.suppressed })
})

const markColumns = "number::float8 AS number, hash, parent_hash"
const alertColumns = `id, key_id, bot_id, chain_id, block_number::float8 AS block_number, block_hash,
  block_time::float8 AS block_time, rule, expression, transactions, evidence, created, retracted_at, unverified_at,
  suppressed`

const make = Effect.gen(function* () {
  const database = yield* PgDatabase
  const { sql, run, transaction, skewMillis: skew } = database
  const deliver = inserter(database)

  const alerts = (operation: string, rows: Effect.Effect<ReadonlyArray<AlertRow>, SqlError.SqlError>) =>
    Effect.flatMap(run(operation, rows), (found) => StoredJson.each(found, toAlert))

  /** Takes the chain's lock; true when its cursor is still `expected`. */
  const still = (chainId: number, expected: FollowStore.Mark | undefined) =>
    Effect.gen(function* () {
      yield* serialised(sql, `follow:${chainId}`)
      const [row] =
        yield* sql<MarkRow>`SELECT ${sql.literal(markColumns)} FROM follow_cursors WHERE chain_id = ${chainId}`
      return row === undefined
        ? expected === undefined
        : expected !== undefined && row.number === expected.number && row.hash === expected.hash
    })

  const setCursor = (chainId: number, m: FollowStore.Mark) =>
    sql`INSERT INTO follow_cursors (chain_id, number, hash, parent_hash)
        VALUES (${chainId}, ${m.number}, ${m.hash}, ${m.parentHash})
        ON CONFLICT (chain_id) DO UPDATE
          SET number = excluded.number, hash = excluded.hash, parent_hash = excluded.parent_hash`

  const mark = (chainId: number, marks: ReadonlyArray<FollowStore.Mark>) =>
    marks.length === 0
      ? Effect.void
      : Effect.asVoid(sql`
          INSERT INTO follow_marks (chain_id, number, hash, parent_hash)
          SELECT ${chainId}, n, h, p FROM unnest(${marks.map((m) => m.number)}::bigint[], ${marks.map((m) => m.hash)}::text[],
                                                 ${marks.map((m) => m.parentHash)}::text[]) AS t(n, h, p)
          ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash`)

  /** Marks `ids` of the chain with `column` at `at` where not yet marked; the ids changed. */
  const markAlerts = (
    column: "retracted_at" | "unverified_at",
    at: string,
    ids: ReadonlyArray<string>,
    chainId?: number
  ) =>
    ids.length === 0
      ? Effect.succeed(new Set<string>())
      : Effect.map(
          column === "retracted_at"
            ? sql<{ readonly id: string }>`UPDATE monitor_alerts SET retracted_at = ${at}
                WHERE id = ANY(${[...ids]}::text[]) AND retracted_at IS NULL
                  AND (${chainId ?? null}::int IS NULL OR chain_id = ${chainId ?? null}::int) RETURNING id`
            : sql<{ readonly id: string }>`UPDATE monitor_alerts SET unverified_at = ${at}
                WHERE id = ANY(${[...ids]}::text[]) AND retracted_at IS NULL AND unverified_at IS NULL
                  AND chain_id = ${chainId ?? null}::int RETURNING id`,
          (rows) => new Set(rows.map((r) => r.id))
        )

  const store: FollowStore.Both = {
    cursor: (chainId) =>
      Effect.map(
        run(
          "FollowStore.cursor",
          sql<MarkRow>`SELECT ${sql.literal(markColumns)} FROM follow_cursors WHERE chain_id = ${chainId}`
        ),
        (rows) => (rows[0] === undefined ? undefined : toMark(rows[0]))
      ),
    coverage: (chainId) =>
      Effect.map(
        run(
          "FollowStore.coverage",
          sql<{ readonly bot_id: string; readonly from_block: number; readonly through: number }>`
            SELECT bot_id, from_block::float8 AS from_block, through::float8 AS through
            FROM follow_coverage WHERE chain_id = ${chainId}`
        ),
        (rows) =>
          new Map(rows.map((r) => [r.bot_id, { botId: r.bot_id, from: r.from_block, through: r.through }] as const))
      ),
    marks: (chainId, from) =>
      Effect.map(
        run(
          "FollowStore.marks",
          sql<MarkRow>`SELECT ${sql.literal(markColumns)} FROM follow_marks
                       WHERE chain_id = ${chainId} AND number >= ${from} ORDER BY number`
        ),
        (rows) => rows.map(toMark)
      ),
    advance: (chainId, expected, step) => {
      const { blocks, alerts, coverage = [] } = step
      const deliveries = step.deliveries
      // How far each bot was run (a bot named twice: its last).
      const covered = [...new Map(coverage.map((c) => [c.botId, c])).values()]
      // One statement (vigil_advance, migration 18), so one round trip: the chain's lock, its cursor checked, then
      // everything the step stores. Not suppressed is sent as '' (the driver cannot type an array of nulls alone).
      return Effect.map(
        run(
          "FollowStore.advance",
          sql<{ readonly stored: ReadonlyArray<string> | null }>`
            SELECT vigil_advance(
              ${chainId}, ${expected?.number ?? null}::bigint, ${expected?.hash ?? null}::text,
              ${blocks.map((m) => m.number)}::bigint[], ${blocks.map((m) => m.hash)}::text[],
              ${blocks.map((m) => m.parentHash)}::text[],
              ${alerts.map((a) => a.id)}::text[], ${alerts.map((a) => a.keyId)}::text[],
              ${alerts.map((a) => a.botId)}::text[], ${alerts.map((a) => a.chainId)}::int[],
              ${alerts.map((a) => a.blockNumber)}::bigint[], ${alerts.map((a) => a.blockHash)}::text[],
              ${alerts.map((a) => a.blockTime)}::bigint[], ${alerts.map((a) => a.rule)}::int[],
              ${alerts.map((a) => a.expression)}::text[],
              ${alerts.map((a) => encodeTransactions(a.transactions))}::text[],
              ${alerts.map((a) => encodeEvidence(a.evidence))}::text[], ${alerts.map((a) => a.created)}::text[],
              ${alerts.map((a) => a.suppressed ?? "")}::text[],
              ${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.webhookId)}::text[],
              ${deliveries.map((d) => d.keyId)}::text[], ${deliveries.map((d) => d.correlationId)}::text[],
              ${deliveries.map((d) => d.body)}::text[], ${deliveries.map((d) => d.attempts)}::int[],
              ${deliveries.map((d) => d.nextAttemptAt + skew)}::bigint[],
              ${covered.map((c) => c.botId)}::text[], ${covered.map((c) => c.from)}::bigint[],
              ${covered.map((c) => c.through)}::bigint[], ${step.keep}) AS stored`
        ),
        ([row]) =>
          row?.stored === null || row === undefined
            ? { outcome: "moved" as const, stored: [] }
            : { outcome: "advanced" as const, stored: [...row.stored] }
      )
    },
    recent: (botId, since) =>
      alerts(
        "FollowStore.recent",
        sql<AlertRow>`SELECT ${sql.literal(alertColumns)} FROM monitor_alerts
                      WHERE bot_id = ${botId} AND block_time >= ${since} AND retracted_at IS NULL
                      ORDER BY block_time, seq`
      ),
    // By the index of retracted alerts (migration 27): what it reads does not grow with the alerts stored.
    retracted: (chainId) =>
      Effect.map(
        run(
          "FollowStore.retracted",
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM monitor_alerts
                                      WHERE chain_id = ${chainId} AND retracted_at IS NOT NULL`
        ),
        (rows) => rows[0]?.n ?? 0
      ),
    orphaned: (chainId, number) =>
      alerts(
        "FollowStore.orphaned",
        sql<AlertRow>`SELECT ${sql.literal(alertColumns)} FROM monitor_alerts
                      WHERE chain_id = ${chainId} AND block_number > ${number} AND retracted_at IS NULL
                      ORDER BY block_number, seq`
      ),
    rewind: (chainId, expected, step) =>
      transaction(
        "FollowStore.rewind",
        Effect.gen(function* () {
          if (!(yield* still(chainId, expected))) return "moved" as const
          yield* sql`DELETE FROM follow_marks WHERE chain_id = ${chainId} AND number > ${step.ancestor.number}`
          const retracted = yield* markAlerts("retracted_at", step.at, step.retract)
          yield* deliver(step.deliveries.filter((d) => retracted.has(d.correlationId.replace(/:retraction$/, ""))))
          yield* setCursor(chainId, step.ancestor)
          return "advanced" as const
        })
      ),
    reset: (chainId, to, step) =>
      transaction(
        "FollowStore.reset",
        Effect.gen(function* () {
          yield* serialised(sql, `follow:${chainId}`)
          yield* sql`DELETE FROM follow_marks WHERE chain_id = ${chainId}`
          yield* mark(chainId, [to])
          yield* setCursor(chainId, to)
          const retracted = yield* markAlerts("retracted_at", step.at, step.retract, chainId)
          const unverified = yield* markAlerts("unverified_at", step.at, step.unverify, chainId)
          const changed = new Set([...retracted, ...unverified])
          yield* deliver(
            step.deliveries.filter((d) => changed.has(d.correlationId.replace(/:(retraction|unverified)$/, "")))
          )
        })
      ),
    alert: (keyId, botId, id) =>
      Effect.map(
        alerts(
          "FollowStore.alert",
          sql<AlertRow>`SELECT ${sql.literal(alertColumns)} FROM monitor_alerts
                        WHERE key_id = ${keyId} AND bot_id = ${botId} AND id = ${id}`
        ),
        (found) => found[0]
      ),
    alerts: (keyId, botId, query) =>
      alerts(
        "FollowStore.alerts",
        sql<AlertRow>`SELECT ${sql.literal(alertColumns)} FROM monitor_alerts
          WHERE key_id = ${keyId} AND bot_id = ${botId}
            AND (${query.before ?? null}::text IS NULL
                 OR seq < (SELECT seq FROM monitor_alerts WHERE id = ${query.before ?? null}::text))
            AND (CASE ${query.state ?? null}::text
                   WHEN 'active' THEN retracted_at IS NULL AND unverified_at IS NULL
                   WHEN 'retracted' THEN retracted_at IS NOT NULL
                   WHEN 'unverified' THEN retracted_at IS NULL AND unverified_at IS NOT NULL
                   ELSE true END)
          ORDER BY seq DESC LIMIT ${query.limit}`
      )
  }
  return store
})

/** A layer providing FollowStore and its alerts over the PgDatabase in context. */
export const layer: Layer.Layer<FollowStore.FollowStore | FollowStore.AlertLog, never, PgDatabase> =
  FollowStore.layerOf(make)
