/**
 * FollowStore on SQLite: cursors, recent block hashes and alerts in the same file as the outbox, so a step's
 * alerts, their deliveries and the cursor move in one immediate transaction.
 */
import { FollowStore, StoredJson } from "@vigil/core"
import { Effect, type Layer, Schema } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"
import { inserter } from "./SqliteWebhookStore.ts"

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

/** Stored columns read back through their codecs (a row that does not decode is `Corrupt`, not a cast). */
const readTransactions = StoredJson.reader(FollowStore.TransactionsJson, "FollowStore", "transactions")
const readEvidence = StoredJson.reader(FollowStore.EvidenceJson, "FollowStore", "evidence")
const encodeTransactions = Schema.encodeSync(FollowStore.TransactionsJson)
const encodeEvidence = FollowStore.evidenceText

const toAlert = (r: AlertRow): FollowStore.Alert => ({
  id: r.id,
  keyId: r.key_id,
  botId: r.bot_id,
  chainId: r.chain_id,
  blockNumber: r.block_number,
  blockHash: r.block_hash,
  blockTime: r.block_time,
  rule: r.rule,
  expression: r.expression,
  transactions: StoredJson.orThrow(readTransactions(r.transactions, `alert ${r.id}`)),
  evidence: StoredJson.orThrow(readEvidence(r.evidence, `alert ${r.id}`)),
  created: r.created,
  ...(r.retracted_at === null ? {} : { retractedAt: r.retracted_at }),
  ...(r.unverified_at === null ? {} : { unverifiedAt: r.unverified_at }),
  ...(r.suppressed === null ? {} : { suppressed: r.suppressed })
})

/**
 * A chain's retracted alerts, counted for every `/health` and `/metrics` while it is followed: by the index of
 * retracted alerts (migration 27), so what it reads does not grow with the alerts stored.
 */
export const retractedQuery = "SELECT count(*) FROM monitor_alerts WHERE chain_id = ? AND retracted_at IS NOT NULL"

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const s = yield* database.use("FollowStore.prepare", (db) => ({
    cursor: db.prepare<[number], MarkRow>("SELECT number, hash, parent_hash FROM follow_cursors WHERE chain_id = ?"),
    setCursor: db.prepare<[number, number, string, string]>(
      "INSERT OR REPLACE INTO follow_cursors (chain_id, number, hash, parent_hash) VALUES (?, ?, ?, ?)"
    ),
    coverage: db.prepare<[number], { bot_id: string; from_block: number; through: number }>(
      "SELECT bot_id, from_block, through FROM follow_coverage WHERE chain_id = ?"
    ),
    cover: db.prepare<[number, string, number, number]>(
      "INSERT OR REPLACE INTO follow_coverage (chain_id, bot_id, from_block, through) VALUES (?, ?, ?, ?)"
    ),
    marks: db.prepare<[number, number], MarkRow>(
      "SELECT number, hash, parent_hash FROM follow_marks WHERE chain_id = ? AND number >= ? ORDER BY number"
    ),
    mark: db.prepare<[number, number, string, string]>(
      "INSERT OR REPLACE INTO follow_marks (chain_id, number, hash, parent_hash) VALUES (?, ?, ?, ?)"
    ),
    forgetBelow: db.prepare<[number, number]>("DELETE FROM follow_marks WHERE chain_id = ? AND number < ?"),
    forgetAbove: db.prepare<[number, number]>("DELETE FROM follow_marks WHERE chain_id = ? AND number > ?"),
    alert: db.prepare<
      [string, string, string, number, number, string, number, number, string, string, string, string, string | null]
    >(
      `INSERT OR IGNORE INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule,
         expression, transactions, evidence, created, suppressed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
    ),
    recent: db.prepare<[string, number], AlertRow>(
      `SELECT * FROM monitor_alerts WHERE bot_id = ? AND block_time >= ? AND retracted_at IS NULL
       ORDER BY block_time, rowid`
    ),
    // The outbox's own writer: this store never writes its table itself.
    delivery: inserter(db),
    retracted: db.prepare<[number], number>(retractedQuery).pluck(),
    orphaned: db.prepare<[number, number], AlertRow>(
      `SELECT * FROM monitor_alerts WHERE chain_id = ? AND block_number > ? AND retracted_at IS NULL
       ORDER BY block_number, rowid`
    ),
    forgetAll: db.prepare<[number]>("DELETE FROM follow_marks WHERE chain_id = ?"),
    unverify: db.prepare<[string, string, number]>(
      "UPDATE monitor_alerts SET unverified_at = ? WHERE id = ? AND chain_id = ? AND retracted_at IS NULL AND unverified_at IS NULL"
    ),
    retractOf: db.prepare<[string, string, number]>(
      "UPDATE monitor_alerts SET retracted_at = ? WHERE id = ? AND chain_id = ? AND retracted_at IS NULL"
    ),
    retract: db.prepare<[string, string]>(
      "UPDATE monitor_alerts SET retracted_at = ? WHERE id = ? AND retracted_at IS NULL"
    ),
    alertById: db.prepare<[string, string, string], AlertRow>(
      "SELECT * FROM monitor_alerts WHERE key_id = ? AND bot_id = ? AND id = ?"
    ),
    alerts: db.prepare<[string, string, string | null, string | null, string | null, number], AlertRow>(
      `SELECT * FROM monitor_alerts WHERE key_id = ? AND bot_id = ?
         AND (? IS NULL OR rowid < (SELECT rowid FROM monitor_alerts WHERE id = ?))
         AND (CASE ? WHEN 'active' THEN retracted_at IS NULL AND unverified_at IS NULL
           WHEN 'retracted' THEN retracted_at IS NOT NULL
           WHEN 'unverified' THEN retracted_at IS NULL AND unverified_at IS NOT NULL ELSE 1 END)
       ORDER BY rowid DESC LIMIT ?`
    )
  }))

  const same = (a: MarkRow | undefined, b: FollowStore.Mark | undefined) =>
    a === undefined ? b === undefined : b !== undefined && a.number === b.number && a.hash === b.hash

  const store: FollowStore.Both = {
    cursor: (chainId) =>
      database.use("FollowStore.cursor", () => {
        const row = s.cursor.get(chainId)
        return row === undefined ? undefined : toMark(row)
      }),
    coverage: (chainId) =>
      database.use(
        "FollowStore.coverage",
        () =>
          new Map(
            s.coverage
              .all(chainId)
              .map((r) => [r.bot_id, { botId: r.bot_id, from: r.from_block, through: r.through }] as const)
          )
      ),
    marks: (chainId, from) => database.use("FollowStore.marks", () => s.marks.all(chainId, from).map(toMark)),
    advance: (chainId, expected, step) =>
      database.transaction("FollowStore.advance", () => {
        if (!same(s.cursor.get(chainId), expected)) return { outcome: "moved" as const, stored: [] }
        for (const m of step.blocks) s.mark.run(chainId, m.number, m.hash, m.parentHash)
        const stored = new Set<string>()
        for (const a of step.alerts) {
          const changes = s.alert.run(
            a.id,
            a.keyId,
            a.botId,
            a.chainId,
            a.blockNumber,
            a.blockHash,
            a.blockTime,
            a.rule,
            a.expression,
            encodeTransactions(a.transactions),
            encodeEvidence(a.evidence),
            a.created,
            a.suppressed ?? null
          ).changes
          if (changes > 0) stored.add(a.id)
        }
        for (const d of step.deliveries) {
          if (!stored.has(d.correlationId)) continue
          s.delivery(d)
        }
        for (const c of step.coverage ?? []) s.cover.run(chainId, c.botId, c.from, c.through)
        const last = step.blocks.at(-1)
        if (last !== undefined) {
          s.setCursor.run(chainId, last.number, last.hash, last.parentHash)
          s.forgetBelow.run(chainId, last.number - step.keep)
        }
        return { outcome: "advanced" as const, stored: [...stored] }
      }),
    recent: (botId, since) => database.use("FollowStore.recent", () => s.recent.all(botId, since).map(toAlert)),
    retracted: (chainId) => database.use("FollowStore.retracted", () => s.retracted.get(chainId) ?? 0),
    orphaned: (chainId, number) =>
      database.use("FollowStore.orphaned", () => s.orphaned.all(chainId, number).map(toAlert)),
    rewind: (chainId, expected, step) =>
      database.transaction("FollowStore.rewind", () => {
        if (!same(s.cursor.get(chainId), expected)) return "moved" as const
        s.forgetAbove.run(chainId, step.ancestor.number)
        const retracted = new Set<string>()
        for (const id of step.retract) if (s.retract.run(step.at, id).changes > 0) retracted.add(id)
        for (const d of step.deliveries) {
          if (!retracted.has(d.correlationId.replace(/:retraction$/, ""))) continue
          s.delivery(d)
        }
        s.setCursor.run(chainId, step.ancestor.number, step.ancestor.hash, step.ancestor.parentHash)
        return "advanced" as const
      }),
    reset: (chainId, to, step) =>
      database.transaction("FollowStore.reset", () => {
        s.forgetAll.run(chainId)
        s.mark.run(chainId, to.number, to.hash, to.parentHash)
        s.setCursor.run(chainId, to.number, to.hash, to.parentHash)
        const changed = new Set<string>()
        for (const id of step.retract) if (s.retractOf.run(step.at, id, chainId).changes > 0) changed.add(id)
        for (const id of step.unverify) if (s.unverify.run(step.at, id, chainId).changes > 0) changed.add(id)
        for (const d of step.deliveries) {
          if (!changed.has(d.correlationId.replace(/:(retraction|unverified)$/, ""))) continue
          s.delivery(d)
        }
      }),
    alert: (keyId, botId, id) =>
      database.use("FollowStore.alert", () => {
        const row = s.alertById.get(keyId, botId, id)
        return row === undefined ? undefined : toAlert(row)
      }),
    alerts: (keyId, botId, query) =>
      database.use("FollowStore.alerts", () =>
        s.alerts
          .all(keyId, botId, query.before ?? null, query.before ?? null, query.state ?? null, query.limit)
          .map(toAlert)
      )
  }
  return store
})

/** A layer providing FollowStore and its alerts over the SqliteDatabase in context. */
export const layer: Layer.Layer<FollowStore.FollowStore | FollowStore.AlertLog, never, SqliteDatabase> =
  FollowStore.layerOf(make.pipe(Effect.orDie))
