/**
 * WebhookStore on SQLite: webhooks and their outbox in the same file, every change in an immediate transaction
 * (deliveries stored in one event-loop turn share one; a claim stores the settlements handed to it in its own).
 */
import { StoredJson, WebhookStore } from "@vigil/core"
import { Effect, type Layer, Schema } from "effect"
import { SqliteDatabase, type SqliteHandle } from "./SqliteDatabase.ts"

interface WebhookRow {
  readonly id: string
  readonly key_id: string
  readonly url: string
  readonly secret: string
  readonly created: string
  readonly delivery_count: number
  readonly last_delivery: string | null
  readonly disabled_at: string | null
  readonly channel: string | null
}

interface DeliveryRow {
  readonly id: string
  readonly webhook_id: string
  readonly key_id: string
  readonly correlation_id: string
  readonly body: string
  readonly attempts: number
  readonly next_attempt_at: number
  readonly status: "pending" | "delivered" | "dead"
  readonly last_error: string | null
}

const readChannel = StoredJson.reader(WebhookStore.ChannelJson, "WebhookStore", "channel")
const encodeChannel = Schema.encodeSync(WebhookStore.ChannelJson)

const toWebhook = (r: WebhookRow): WebhookStore.Webhook => ({
  id: r.id,
  keyId: r.key_id,
  url: r.url,
  secret: r.secret,
  created: r.created,
  deliveryCount: r.delivery_count,
  ...(r.last_delivery === null ? {} : { lastDelivery: r.last_delivery }),
  ...(r.disabled_at === null ? {} : { disabledAt: r.disabled_at }),
  ...(r.channel === null ? {} : { channel: StoredJson.orThrow(readChannel(r.channel, `destination ${r.id}`)) })
})

/**
 * A key's destinations of a scope with their pending and failed counts and last outcome: the error of the latest
 * delivery that failed or went through (none when it went through), found by the index of such deliveries by
 * destination (migration 26), newest first, so what it reads does not grow with the deliveries made.
 */
export const statsQuery = `SELECT w.*,
  (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
  (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'dead') AS failed,
  (SELECT CASE WHEN d.status = 'delivered' THEN NULL ELSE d.last_error END FROM webhook_deliveries d
    WHERE d.webhook_id = w.id AND (d.last_error IS NOT NULL OR d.status = 'delivered')
    ORDER BY d.rowid DESC LIMIT 1) AS last_error
FROM webhooks w WHERE w.key_id = ? AND (w.channel IS NOT NULL) = ? ORDER BY w.created, w.rowid`

/** `1` for notification channels, `0` for intelligence webhooks: the value of `channel IS NOT NULL`. */
const scoped = (scope: WebhookStore.Scope = "webhooks") => (scope === "channels" ? 1 : 0)

const toDelivery = (r: DeliveryRow): WebhookStore.Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  keyId: r.key_id,
  correlationId: r.correlation_id,
  body: r.body,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  status: r.status,
  ...(r.last_error === null ? {} : { lastError: r.last_error })
})

/**
 * Stores deliveries in the outbox inside the caller's transaction (those whose destination is gone or disabled are
 * left out): how many were stored. The outbox's one writer, also for a follower's step, whose alerts, deliveries
 * and cursor move in one transaction.
 */
export const inserter = (db: SqliteHandle) => {
  const insert = db.prepare<[string, string, string, string, string, number, number, string]>(
    `INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, status)
     SELECT ?, ?, ?, ?, ?, ?, ?, 'pending'
     WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND disabled_at IS NULL)`
  )
  return (d: WebhookStore.Delivery): number =>
    insert.run(d.id, d.webhookId, d.keyId, d.correlationId, d.body, d.attempts, d.nextAttemptAt, d.webhookId).changes
}

const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const s = yield* database.use("WebhookStore.prepare", (db) => ({
    count: db.prepare<[string, number], { n: number }>(
      "SELECT count(*) AS n FROM webhooks WHERE key_id = ? AND (channel IS NOT NULL) = ?"
    ),
    insert: db.prepare<[string, string, string, string, string, string | null]>(
      "INSERT INTO webhooks (id, key_id, url, secret, created, channel) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    list: db.prepare<[string, number], WebhookRow>(
      "SELECT * FROM webhooks WHERE key_id = ? AND (channel IS NOT NULL) = ? ORDER BY created, rowid"
    ),
    remove: db.prepare<[string, string, number]>(
      "DELETE FROM webhooks WHERE key_id = ? AND id = ? AND (channel IS NOT NULL) = ?"
    ),
    dropPending: db.prepare<[string]>("DELETE FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending'"),
    enqueue: inserter(db),
    // The destinations with anything due, in order of their oldest due delivery: found by skipping from one
    // destination to the next in the index of pending rows, so this costs a few probes per destination, not a read
    // of the backlog.
    dueDestinations: db.prepare<[number], WebhookRow>(
      `WITH RECURSIVE pending(webhook_id) AS (
         SELECT (SELECT min(webhook_id) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
           WHERE status = 'pending')
         UNION ALL
         SELECT (SELECT min(x.webhook_id) FROM webhook_deliveries x INDEXED BY webhook_deliveries_pending
           WHERE x.status = 'pending' AND x.webhook_id > pending.webhook_id)
         FROM pending WHERE pending.webhook_id IS NOT NULL
       ),
       due AS (
         SELECT webhook_id, first FROM (
           SELECT webhook_id, (SELECT min(x.next_attempt_at) FROM webhook_deliveries x
             INDEXED BY webhook_deliveries_pending
             WHERE x.status = 'pending' AND x.webhook_id = pending.webhook_id) AS first
           FROM pending WHERE webhook_id IS NOT NULL
         ) WHERE first <= ?
       )
       SELECT w.* FROM due JOIN webhooks w ON w.id = due.webhook_id AND w.disabled_at IS NULL
       ORDER BY due.first, due.webhook_id`
    ),
    // The oldest due deliveries of each destination in a JSON array, up to a limit each (one probe of the index
    // of pending rows per destination; the rows' bodies are not read).
    dueOf: db.prepare<[string, number, number], { id: string; webhook_id: string; key_id: string }>(
      `SELECT d.id, d.webhook_id, d.key_id FROM json_each(?) j
       JOIN webhook_deliveries d ON d.rowid IN (
         SELECT x.rowid FROM webhook_deliveries x INDEXED BY webhook_deliveries_pending
         WHERE x.webhook_id = j.value AND x.status = 'pending' AND x.next_attempt_at <= ?
         ORDER BY x.next_attempt_at, x.rowid LIMIT ?)
       ORDER BY j.key, d.next_attempt_at, d.rowid`
    ),
    backlog: db.prepare<[], { type: string; pending: number; dead: number }>(
      `SELECT type, sum(pending) AS pending, sum(dead) AS dead FROM (
         SELECT coalesce(json_extract(w.channel, '$.type'), 'intelligence') AS type,
           (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
           (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'dead') AS dead
         FROM webhooks w
       ) WHERE pending + dead > 0 GROUP BY 1 ORDER BY 1`
    ),
    park: db.prepare<[string, string, string]>(
      `UPDATE webhook_deliveries SET status = 'dead', last_error = ?
       WHERE key_id = ? AND status = 'pending' AND webhook_id IN (SELECT value FROM json_each(?))`
    ),
    lease: db.prepare<[number, string], DeliveryRow>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?
       RETURNING id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, status, last_error`
    ),
    byCorrelation: db.prepare<[string], DeliveryRow>(
      "SELECT * FROM webhook_deliveries WHERE correlation_id IN (SELECT value FROM json_each(?)) ORDER BY rowid"
    ),
    // A settlement applies only to the attempt still pending; each answers the delivery's destination when it did.
    delivered: db
      .prepare<[string, number], string>(
        `UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ? AND attempts = ? AND status = 'pending'
         RETURNING webhook_id`
      )
      .pluck(),
    counted: db.prepare<[number, string, string]>(
      "UPDATE webhooks SET delivery_count = delivery_count + ?, last_delivery = ? WHERE id = ?"
    ),
    retry: db
      .prepare<[number, string, string, number], string>(
        `UPDATE webhook_deliveries SET next_attempt_at = ?, last_error = ? WHERE id = ? AND attempts = ? AND status = 'pending'
         RETURNING webhook_id`
      )
      .pluck(),
    dead: db
      .prepare<[string, string, number], string>(
        `UPDATE webhook_deliveries SET status = 'dead', last_error = ? WHERE id = ? AND attempts = ? AND status = 'pending'
         RETURNING webhook_id`
      )
      .pluck(),
    disable: db.prepare<[string, string]>("UPDATE webhooks SET disabled_at = ? WHERE id = ?"),
    owned: db.prepare<[string, string, number], { disabled_at: string | null }>(
      "SELECT disabled_at FROM webhooks WHERE key_id = ? AND id = ? AND (channel IS NOT NULL) = ?"
    ),
    requeue: db.prepare<[number, string]>(
      "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ? WHERE webhook_id = ? AND status = 'dead'"
    ),
    requeueEvents: db.prepare<[number, string, string]>(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?
       WHERE key_id = ? AND status = 'dead' AND correlation_id IN (SELECT value FROM json_each(?))
         AND webhook_id IN (SELECT id FROM webhooks WHERE disabled_at IS NULL)`
    ),
    deadAll: db.prepare<[string, string]>(
      "UPDATE webhook_deliveries SET status = 'dead', last_error = ? WHERE webhook_id = ? AND status = 'pending'"
    ),
    stats: db.prepare<[string, number], WebhookRow & { pending: number; failed: number; last_error: string | null }>(
      statsQuery
    )
  }))

  /**
   * Stores one settlement if the delivery is still pending at the attempt being settled (one statement, which
   * changes nothing otherwise); a delivered one is added to `counts` (its destination's deliveries and latest
   * delivery), which the caller stores once per batch.
   */
  const settleOne = (
    id: string,
    attempt: number,
    settlement: WebhookStore.Settlement,
    counts: Map<string, { n: number; at: string }>
  ) => {
    switch (settlement._tag) {
      case "Delivered": {
        const webhookId = s.delivered.get(id, attempt)
        if (webhookId === undefined) return
        const count = counts.get(webhookId)
        if (count === undefined) counts.set(webhookId, { n: 1, at: settlement.at })
        else {
          count.n++
          if (settlement.at > count.at) count.at = settlement.at
        }
        return
      }
      case "Retry":
        s.retry.get(settlement.at, settlement.error, id, attempt)
        return
      case "Dead":
        s.dead.get(settlement.error, id, attempt)
        return
      case "Gone": {
        const webhookId = s.dead.get(settlement.error, id, attempt)
        if (webhookId === undefined) return
        s.disable.run(settlement.at, webhookId)
        s.deadAll.run(settlement.error, webhookId)
      }
    }
  }

  /**
   * Leases what one claim takes: the destinations with anything due and room (theirs and their key's), their
   * oldest due deliveries (as many as a destination may take), and of those {@link WebhookStore.fairPick}'s choice,
   * each leased and read in one statement (so a claim reads the bodies of the deliveries it leases only).
   */
  const claimOne = (claim: WebhookStore.ClaimRequest): ReadonlyArray<WebhookStore.Claimed> => {
    const { now, limit, perKey, leaseUntil, inFlight = {}, perDestination = Infinity } = claim
    if (limit <= 0) return []
    // A destination gives at most `limit` to one claim: reading more of its queue is wasted.
    const each = Math.max(1, Math.min(perDestination, perKey, limit))
    const destinations = new Map<string, WebhookRow>()
    for (const row of s.dueDestinations.all(now)) {
      const room = Math.min(
        perKey - (inFlight.keys?.[row.key_id] ?? 0),
        perDestination - (inFlight.destinations?.[row.id] ?? 0)
      )
      if (room > 0) destinations.set(row.id, row)
    }
    if (destinations.size === 0) return []
    const candidates = s.dueOf
      .all(JSON.stringify([...destinations.keys()]), now, each)
      .map((r) => ({ delivery: { id: r.id, keyId: r.key_id, webhookId: r.webhook_id } }))
    const webhooks = new Map<string, WebhookStore.Webhook>()
    const claimed: Array<WebhookStore.Claimed> = []
    for (const { delivery } of WebhookStore.fairPick(candidates, limit, perKey, perDestination, inFlight)) {
      const leased = s.lease.get(leaseUntil, delivery.id)
      if (leased === undefined) continue
      let webhook = webhooks.get(delivery.webhookId)
      if (webhook === undefined) {
        webhook = toWebhook(destinations.get(delivery.webhookId)!)
        webhooks.set(delivery.webhookId, webhook)
      }
      claimed.push({ delivery: toDelivery(leased), webhook })
    }
    return claimed
  }

  // Deliveries stored in one turn of the event loop (by concurrent requests) share one transaction; each
  // request's are all stored or, with the others of the turn, none.
  const enqueue = database.groupCommit(
    "WebhookStore.enqueue",
    (_, batch: ReadonlyArray<ReadonlyArray<WebhookStore.Delivery>>) =>
      batch.map((deliveries) => deliveries.reduce((stored, d) => stored + s.enqueue(d), 0))
  )

  /** Stores settlements (inside the caller's transaction), each destination's count raised once. */
  const settleAll = (batch: ReadonlyArray<WebhookStore.Settle>) => {
    const counts = new Map<string, { n: number; at: string }>()
    for (const p of batch) settleOne(p.id, p.attempt, p.settlement, counts)
    for (const [webhookId, { n, at }] of counts) s.counted.run(n, at, webhookId)
  }

  const store: WebhookStore.Both = {
    register: (w, max) =>
      database.transaction("WebhookStore.register", () => {
        if ((s.count.get(w.keyId, scoped(WebhookStore.scopeOf(w)))?.n ?? 0) >= max) return false
        s.insert.run(
          w.id,
          w.keyId,
          w.url,
          w.secret,
          w.created,
          w.channel === undefined ? null : encodeChannel(w.channel)
        )
        return true
      }),
    list: (keyId, scope) => database.use("WebhookStore.list", () => s.list.all(keyId, scoped(scope)).map(toWebhook)),
    remove: (keyId, id, scope) =>
      database.transaction("WebhookStore.remove", () => {
        if (s.remove.run(keyId, id, scoped(scope)).changes === 0) return false
        s.dropPending.run(id)
        return true
      }),
    enqueue: (deliveries) => (deliveries.length === 0 ? Effect.succeed(0) : enqueue(deliveries)),
    claim: (request) =>
      database.transaction("WebhookStore.claim", () => {
        settleAll(request.settle ?? [])
        return claimOne(request)
      }),
    backlog: () => database.use("WebhookStore.backlog", () => s.backlog.all()),
    park: (keyId, ids, reason) =>
      database.transaction("WebhookStore.park", () => s.park.run(reason, keyId, JSON.stringify(ids)).changes),
    redeliver: (keyId, id, now, scope) =>
      database.transaction("WebhookStore.redeliver", () => {
        const owned = s.owned.get(keyId, id, scoped(scope))
        if (owned === undefined) return undefined
        return owned.disabled_at === null ? s.requeue.run(now, id).changes : 0
      }),
    redeliverEvents: (keyId, correlationIds, now) =>
      database.transaction(
        "WebhookStore.redeliverEvents",
        () => s.requeueEvents.run(now, keyId, JSON.stringify(correlationIds)).changes
      ),
    deliveriesOf: (ids) =>
      database.use("WebhookStore.deliveriesOf", () => s.byCorrelation.all(JSON.stringify(ids)).map(toDelivery)),
    stats: (keyId, scope) =>
      database.use("WebhookStore.stats", () =>
        s.stats.all(keyId, scoped(scope)).map((r) => ({
          id: r.id,
          url: r.url,
          deliveryCount: r.delivery_count,
          ...(r.last_delivery === null ? {} : { lastDelivery: r.last_delivery }),
          pending: r.pending,
          failed: r.failed,
          disabled: r.disabled_at !== null,
          ...(r.last_error === null ? {} : { lastError: r.last_error })
        }))
      )
  }
  return store
})

/** A layer providing the outbox and its destinations over the SqliteDatabase in context. */
export const layer: Layer.Layer<WebhookStore.WebhookStore | WebhookStore.Destinations, never, SqliteDatabase> =
  WebhookStore.layerOf(make.pipe(Effect.orDie))
