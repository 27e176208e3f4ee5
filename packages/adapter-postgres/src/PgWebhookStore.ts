/**
 * WebhookStore on PostgreSQL: destinations and their outbox, shared by every instance. A claim locks the
 * candidates it reads (`FOR UPDATE SKIP LOCKED`), so two instances claiming at once take different deliveries and
 * never the same one; it leases the ones {@link WebhookStore.fairPick}'s rule chooses (the rule in SQL, in
 * `vigil_claim`: a claim is one statement) until `leaseUntil`, and the rest are free again when it ends. The
 * per-key and per-destination in-flight caps count the leases every instance holds (each lease names its
 * instance). A key's registrations take its advisory lock, so its cap holds across instances.
 */
import { randomUUID } from "node:crypto"
import { StoredJson, StoreError, WebhookStore } from "@vigil/core"
import { Effect, type Layer, Result, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { batcher, PgDatabase, serialised } from "./PgDatabase.ts"

/** A row of `webhooks`, as selected and as `vigil_claim` sends it (JSON, in its `w`). */
const WebhookRow = Schema.Struct({
  id: Schema.String,
  key_id: Schema.String,
  url: Schema.String,
  secret: Schema.String,
  created: Schema.String,
  delivery_count: Schema.Number,
  last_delivery: Schema.NullOr(Schema.String),
  disabled_at: Schema.NullOr(Schema.String),
  channel: Schema.NullOr(Schema.String)
})
type WebhookRow = typeof WebhookRow.Type

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

/** A row as a destination; a channel column that does not decode is `Corrupt`. */
const toWebhook = (r: WebhookRow): Result.Result<WebhookStore.Webhook, StoreError.StoreError> =>
  r.channel === null
    ? Result.succeed(webhookOf(r))
    : Result.map(readChannel(r.channel, `destination ${r.id}`), (channel) => webhookOf(r, channel))

const webhookOf = (r: WebhookRow, channel?: WebhookStore.Channel): WebhookStore.Webhook => ({
  id: r.id,
  keyId: r.key_id,
  url: r.url,
  secret: r.secret,
  created: r.created,
  deliveryCount: r.delivery_count,
  ...(r.last_delivery === null ? {} : { lastDelivery: r.last_delivery }),
  ...(r.disabled_at === null ? {} : { disabledAt: r.disabled_at }),
  ...(channel === undefined ? {} : { channel })
})

/** A stored delivery, its due time told on the instance's clock (stored: on the database's, `skew` ahead). */
const toDelivery = (r: DeliveryRow, skew: number): WebhookStore.Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  keyId: r.key_id,
  correlationId: r.correlation_id,
  body: r.body,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at - skew,
  status: r.status,
  ...(r.last_error === null ? {} : { lastError: r.last_error })
})

/**
 * What `vigil_claim` answers (as JSON): the leased, in the order picked, each its row as leased (its attempt counted,
 * due when its lease runs out), its body, and its destination's row (in its `w`).
 */
const decodeClaim = Schema.decodeUnknownEffect(
  Schema.fromJsonString(
    Schema.Array(
      Schema.Struct({
        id: Schema.String,
        webhook_id: Schema.String,
        key_id: Schema.String,
        correlation_id: Schema.String,
        body: Schema.String,
        attempts: Schema.Number,
        next_attempt_at: Schema.Number,
        status: Schema.Literals(["pending", "delivered", "dead"]),
        last_error: Schema.NullOr(Schema.String),
        w: WebhookRow
      })
    )
  )
)

/** A cap as a PostgreSQL `int`: none (Infinity) is the largest one. */
const int4 = (n: number) => Math.max(0, Math.min(2_147_483_647, Math.floor(n)))

/** True for notification channels, false for intelligence webhooks: the value of `channel IS NOT NULL`. */
const scoped = (scope: WebhookStore.Scope = "webhooks") => scope === "channels"

const webhookColumns =
  "id, key_id, url, secret, created, delivery_count::int AS delivery_count, last_delivery, disabled_at, channel"
const deliveryColumns =
  "id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at::float8 AS next_attempt_at, status, last_error"

/**
 * Stores deliveries (those whose destination is gone or disabled by then are left out) inside the caller's
 * transaction: the ids stored. The outbox's one writer, also for a follower's step. Due times are stored on the
 * database's clock (the instance's plus its measured skew), as every time of the outbox is.
 */
const insertIds =
  ({ sql, skewMillis }: PgDatabase["Service"]) =>
  (deliveries: ReadonlyArray<WebhookStore.Delivery>): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
    deliveries.length === 0
      ? Effect.succeed([])
      : Effect.map(
          sql<{ readonly id: string }>`
            INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at, status)
            SELECT t.id, t.webhook_id, t.key_id, t.correlation_id, t.body, t.attempts, t.next_attempt_at, 'pending'
            FROM unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.webhookId)}::text[],
                        ${deliveries.map((d) => d.keyId)}::text[], ${deliveries.map((d) => d.correlationId)}::text[],
                        ${deliveries.map((d) => d.body)}::text[], ${deliveries.map((d) => d.attempts)}::int[],
                        ${deliveries.map((d) => d.nextAttemptAt + skewMillis)}::bigint[])
                 AS t(id, webhook_id, key_id, correlation_id, body, attempts, next_attempt_at)
            WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = t.webhook_id AND w.disabled_at IS NULL)
            RETURNING id`,
          (rows) => rows.map((r) => r.id)
        )

/** As {@link insertIds}: how many were stored. */
export const inserter = (database: PgDatabase["Service"]) => {
  const insert = insertIds(database)
  return (deliveries: ReadonlyArray<WebhookStore.Delivery>): Effect.Effect<number, SqlError.SqlError> =>
    Effect.map(insert(deliveries), (ids) => ids.length)
}

const make = Effect.gen(function* () {
  const database = yield* PgDatabase
  const { sql, run, transaction, skewMillis: skew } = database
  const insert = insertIds(database)

  /**
   * Requests queueing deliveries at once (each intelligence request with webhooks queues one per destination)
   * store them in one statement and one commit, not one each: each gets how many of its own were stored.
   */
  const enqueueTogether = batcher((batch: ReadonlyArray<ReadonlyArray<WebhookStore.Delivery>>) =>
    Effect.map(run("WebhookStore.enqueue", insert(batch.flat())), (ids) => {
      const stored = new Set(ids)
      return batch.map((deliveries) => deliveries.filter((d) => stored.has(d.id)).length)
    })
  )

  /**
   * The destinations of the keys asked for at once (every intelligence request with webhooks reads its key's), read
   * in one statement: each asker gets its key's in its scope, in the order they were created. A row that does not
   * decode fails only the askers of its key and scope.
   */
  const listTogether = batcher(
    (batch: ReadonlyArray<{ readonly keyId: string; readonly scope: WebhookStore.Scope | undefined }>) =>
      Effect.map(
        run(
          "WebhookStore.list",
          sql<WebhookRow>`SELECT ${sql.literal(webhookColumns)} FROM webhooks
                          WHERE key_id = ANY(${[...new Set(batch.map((b) => b.keyId))]}::text[])
                          ORDER BY created, seq`
        ),
        (rows) =>
          batch.map(({ keyId, scope }) =>
            StoredJson.each(
              rows.filter((r) => r.key_id === keyId && (r.channel !== null) === scoped(scope)),
              toWebhook
            )
          )
      )
  )

  /** This instance, as the holder its leases name. */
  const instance = randomUUID()

  /**
   * Deliveries sent, settled in one statement: each only for the attempt being settled and while still pending (a
   * sender whose lease ran out changes nothing), and each destination's count raised once by how many of its
   * deliveries were settled.
   */
  const deliveredAll = (
    settled: ReadonlyArray<{ readonly id: string; readonly attempt: number; readonly at: string }>
  ) =>
    sql`
      WITH done AS (
        UPDATE webhook_deliveries d SET status = 'delivered'
        FROM unnest(${settled.map((x) => x.id)}::text[], ${settled.map((x) => x.attempt)}::int[],
                    ${settled.map((x) => x.at)}::text[]) AS t(id, attempt, at)
        WHERE d.id = t.id AND d.attempts = t.attempt AND d.status = 'pending'
        RETURNING d.webhook_id, t.at
      ), counted AS (SELECT webhook_id, count(*) AS n, max(at) AS at FROM done GROUP BY webhook_id)
      UPDATE webhooks w SET delivery_count = w.delivery_count + c.n, last_delivery = c.at
      FROM counted c WHERE w.id = c.webhook_id`

  /** One attempt that did not deliver, settled (inside the caller's transaction), if it is still that attempt. */
  const undelivered = ({ id, attempt, settlement }: WebhookStore.Settle) =>
    Effect.gen(function* () {
      switch (settlement._tag) {
        case "Delivered":
          return
        case "Retry":
          yield* sql`UPDATE webhook_deliveries
                     SET next_attempt_at = ${settlement.at + skew}, last_error = ${settlement.error}, leased_by = NULL
                     WHERE id = ${id} AND attempts = ${attempt} AND status = 'pending'`
          return
        case "Dead":
          yield* sql`UPDATE webhook_deliveries SET status = 'dead', last_error = ${settlement.error}
                     WHERE id = ${id} AND attempts = ${attempt} AND status = 'pending'`
          return
        case "Gone": {
          const [row] = yield* sql<{ readonly webhook_id: string }>`
            UPDATE webhook_deliveries SET status = 'dead', last_error = ${settlement.error}
            WHERE id = ${id} AND attempts = ${attempt} AND status = 'pending'
            RETURNING webhook_id`
          if (row === undefined) return
          yield* sql`UPDATE webhooks SET disabled_at = ${settlement.at} WHERE id = ${row.webhook_id}`
          yield* sql`UPDATE webhook_deliveries SET status = 'dead', last_error = ${settlement.error}
                     WHERE webhook_id = ${row.webhook_id} AND status = 'pending'`
        }
      }
    })

  /** Settlements stored inside the caller's transaction: the delivered ones in one statement. */
  const settleAll = (settled: ReadonlyArray<WebhookStore.Settle>) =>
    Effect.gen(function* () {
      const delivered = settled.flatMap(({ id, attempt, settlement }) =>
        settlement._tag === "Delivered" ? [{ id, attempt, at: settlement.at }] : []
      )
      if (delivered.length > 0) yield* deliveredAll(delivered)
      for (const x of settled) if (x.settlement._tag !== "Delivered") yield* undelivered(x)
    })

  /**
   * A whole claim in one statement (`vigil_claim`, migration 16): the delivered ones among `settle` settled, each due
   * destination's `each` oldest due deliveries locked or skipped (another instance's claim holds them), each key's
   * advisory lock taken (in key order, so two claims never wait on each other in a circle) before what the other
   * instances have in flight (leases not run out) is read, per key and per destination, then {@link
   * WebhookStore.fairPick}'s rule over the candidates, counting those and this instance's own, and the leases of the
   * picked written before any lock is let go. A claim of another instance for the same keys commits first, and its
   * leases are counted: the per-key and per-destination caps hold across instances, not per process. Outside a
   * transaction the statement is its own: one round trip.
   */
  const claimWhole = (
    settle: ReadonlyArray<WebhookStore.Settle>,
    request: WebhookStore.ClaimRequest,
    each: number
  ): Effect.Effect<ReadonlyArray<WebhookStore.Claimed>, StoreError.StoreError | SqlError.SqlError> =>
    Effect.gen(function* () {
      const { now, limit, perKey, leaseUntil, inFlight = {}, perDestination = Infinity } = request
      const sent = settle.flatMap(({ id, attempt, settlement }) =>
        settlement._tag === "Delivered" ? [{ id, attempt, at: settlement.at }] : []
      )
      const keys = Object.entries(inFlight.keys ?? {})
      const destinations = Object.entries(inFlight.destinations ?? {})
      // On the database's clock: instances whose clocks disagree still agree on what is due and leased.
      const [read] = yield* sql<{ readonly r: string }>`
        SELECT vigil_claim(${sent.map((x) => x.id)}::text[], ${sent.map((x) => x.attempt)}::int[],
                           ${sent.map((x) => x.at)}::text[], ${now + skew}, ${each}, ${instance}, ${int4(limit)},
                           ${int4(perKey)}, ${int4(perDestination)}, ${keys.map(([k]) => k)}::text[],
                           ${keys.map(([, n]) => n)}::int[], ${destinations.map(([d]) => d)}::text[],
                           ${destinations.map(([, n]) => n)}::int[], ${leaseUntil + skew})::text AS r`
      // What the function answers is this build's own SQL: a shape it does not have is a defect.
      const leased = yield* Effect.mapError(
        decodeClaim(read!.r),
        (e) =>
          new StoreError.StoreError({
            reason: "Corrupt",
            operation: "WebhookStore.claim",
            message: `vigil_claim's answer does not decode: ${e.message}`
          })
      )
      return yield* StoredJson.each(leased, (row) =>
        Result.map(toWebhook(row.w), (webhook) => ({ delivery: toDelivery(row, skew), webhook }))
      )
    })

  const store: WebhookStore.Both = {
    register: (w, max) =>
      transaction(
        "WebhookStore.register",
        Effect.gen(function* () {
          yield* serialised(sql, `webhooks:${w.keyId}`)
          const [count] = yield* sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM webhooks
            WHERE key_id = ${w.keyId} AND (channel IS NOT NULL) = ${scoped(WebhookStore.scopeOf(w))}`
          if ((count?.n ?? 0) >= max) return false
          yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created, channel)
                     VALUES (${w.id}, ${w.keyId}, ${w.url}, ${w.secret}, ${w.created},
                             ${w.channel === undefined ? null : encodeChannel(w.channel)})`
          return true
        })
      ),
    list: (keyId, scope) => Effect.flatten(listTogether({ keyId, scope })),
    remove: (keyId, id, scope) =>
      transaction(
        "WebhookStore.remove",
        Effect.gen(function* () {
          const gone = yield* sql`DELETE FROM webhooks
                                  WHERE key_id = ${keyId} AND id = ${id} AND (channel IS NOT NULL) = ${scoped(scope)}
                                  RETURNING id`
          if (gone.length === 0) return false
          yield* sql`DELETE FROM webhook_deliveries WHERE webhook_id = ${id} AND status = 'pending'`
          return true
        })
      ),
    enqueue: (deliveries) => (deliveries.length === 0 ? Effect.succeed(0) : enqueueTogether(deliveries)),
    claim: (request) => {
      // A destination gives at most `limit` to one claim: reading more of its queue is wasted.
      const { limit, perKey, perDestination = Infinity, settle = [] } = request
      const each = limit <= 0 ? 0 : Math.max(1, Math.min(perDestination, perKey, limit))
      // Settled with the claim when every one was delivered (one statement); else (rare: a retry, a dead letter, a
      // 410) each on its own first, in the same transaction.
      return settle.every((x) => x.settlement._tag === "Delivered")
        ? run("WebhookStore.claim", claimWhole(settle, request, each))
        : transaction("WebhookStore.claim", Effect.andThen(settleAll(settle), claimWhole([], request, each)))
    },
    // Counted in the index of pending deliveries and in that of failed ones (migration 26): what it reads grows
    // with the backlog, not with the deliveries made or the destinations.
    backlog: () =>
      run(
        "WebhookStore.backlog",
        sql<{ readonly type: string; readonly pending: number; readonly dead: number }>`
          SELECT coalesce(w.channel::json->>'type', 'intelligence') AS type,
                 sum(c.pending)::int AS pending, sum(c.dead)::int AS dead
          FROM (
            SELECT webhook_id, count(*) AS pending, 0 AS dead FROM webhook_deliveries
            WHERE status = 'pending' GROUP BY webhook_id
            UNION ALL
            SELECT webhook_id, 0, count(*) FROM webhook_deliveries WHERE status = 'dead' GROUP BY webhook_id
          ) AS c JOIN webhooks w ON w.id = c.webhook_id GROUP BY 1 ORDER BY 1`
      ),
    park: (keyId, ids, reason) =>
      Effect.map(
        run(
          "WebhookStore.park",
          sql`UPDATE webhook_deliveries SET status = 'dead', last_error = ${reason}
              WHERE key_id = ${keyId} AND status = 'pending' AND webhook_id = ANY(${[...ids]}::text[])
              RETURNING id`
        ),
        (rows) => rows.length
      ),
    redeliver: (keyId, id, now, scope) =>
      transaction(
        "WebhookStore.redeliver",
        Effect.gen(function* () {
          const [owned] = yield* sql<{ readonly disabled_at: string | null }>`
            SELECT disabled_at FROM webhooks
            WHERE key_id = ${keyId} AND id = ${id} AND (channel IS NOT NULL) = ${scoped(scope)}`
          if (owned === undefined) return undefined
          if (owned.disabled_at !== null) return 0
          const requeued =
            yield* sql`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${now + skew}
                                      WHERE webhook_id = ${id} AND status = 'dead' RETURNING id`
          return requeued.length
        })
      ),
    redeliverEvents: (keyId, correlationIds, now) =>
      Effect.map(
        run(
          "WebhookStore.redeliverEvents",
          sql`UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${now + skew}
              WHERE key_id = ${keyId} AND status = 'dead' AND correlation_id = ANY(${[...correlationIds]}::text[])
                AND webhook_id IN (SELECT id FROM webhooks WHERE disabled_at IS NULL)
              RETURNING id`
        ),
        (rows) => rows.length
      ),
    deliveriesOf: (ids) =>
      Effect.map(
        run(
          "WebhookStore.deliveriesOf",
          sql<DeliveryRow>`SELECT ${sql.literal(deliveryColumns)} FROM webhook_deliveries
                           WHERE correlation_id = ANY(${[...ids]}::text[]) ORDER BY seq`
        ),
        (rows) => rows.map((r) => toDelivery(r, skew))
      ),
    stats: (keyId, scope) =>
      Effect.map(
        run(
          "WebhookStore.stats",
          sql<WebhookRow & { readonly pending: number; readonly failed: number; readonly last_error: string | null }>`
            SELECT w.id, w.key_id, w.url, w.secret, w.created, w.delivery_count::int AS delivery_count,
              w.last_delivery, w.disabled_at, w.channel,
              (SELECT count(*)::int FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending,
              (SELECT count(*)::int FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'dead') AS failed,
              (SELECT CASE WHEN d.status = 'delivered' THEN NULL ELSE d.last_error END FROM webhook_deliveries d
                WHERE d.webhook_id = w.id AND (d.last_error IS NOT NULL OR d.status = 'delivered')
                ORDER BY d.seq DESC LIMIT 1) AS last_error
            FROM webhooks w WHERE w.key_id = ${keyId} AND (w.channel IS NOT NULL) = ${scoped(scope)}
            ORDER BY w.created, w.seq`
        ),
        (rows) =>
          rows.map((r) => ({
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

/** A layer providing the outbox and its destinations over the PgDatabase in context. */
export const layer: Layer.Layer<WebhookStore.WebhookStore | WebhookStore.Destinations, never, PgDatabase> =
  WebhookStore.layerOf(make)
