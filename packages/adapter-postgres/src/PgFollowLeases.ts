/**
 * FollowLeases on PostgreSQL: a row per chain, taken or renewed by one conditional upsert on the database's clock
 * (`now()`), so instances whose clocks disagree still agree on when a lease ran out.
 */
import { FollowLeases } from "@vigil/core"
import { Effect, Layer } from "effect"
import { PgDatabase } from "./PgDatabase.ts"

interface LeaseRow {
  readonly chain_id: number
  readonly holder: string
  readonly term: number
  readonly expires_at: string
}

const toLease = (r: LeaseRow): FollowLeases.Lease => ({
  chainId: r.chain_id,
  holder: r.holder,
  term: r.term,
  expiresAt: r.expires_at
})

/** The columns as the port reads them: numbers as numbers, the instant as ISO 8601 in UTC with milliseconds. */
const columns = `chain_id::float8 AS chain_id, holder, term::float8 AS term,
  to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at`

export const layer: Layer.Layer<FollowLeases.FollowLeases, never, PgDatabase> = Layer.effect(FollowLeases.FollowLeases)(
  Effect.gen(function* () {
    const { sql, run } = yield* PgDatabase
    return FollowLeases.FollowLeases.of({
      // Free, run out, or this holder's: taken (the term raised when the holder changes) or renewed; else no row.
      hold: (chainId, holder, ttlMillis) =>
        Effect.map(
          run(
            "FollowLeases.hold",
            sql<LeaseRow>`
              INSERT INTO follow_leases AS l (chain_id, holder, term, expires_at)
              VALUES (${chainId}, ${holder}, 1, now() + make_interval(secs => ${ttlMillis / 1000}))
              ON CONFLICT (chain_id) DO UPDATE SET
                term = CASE WHEN l.holder = excluded.holder THEN l.term ELSE l.term + 1 END,
                holder = excluded.holder,
                expires_at = excluded.expires_at
              WHERE l.holder = excluded.holder OR l.expires_at <= now()
              RETURNING ${sql.literal(columns)}`
          ),
          (rows) => (rows[0] === undefined ? undefined : toLease(rows[0]))
        ),
      release: (chainId, holder) =>
        Effect.asVoid(
          run(
            "FollowLeases.release",
            sql`UPDATE follow_leases SET expires_at = now() - interval '1 millisecond'
                WHERE chain_id = ${chainId} AND holder = ${holder}`
          )
        ),
      leases: () =>
        Effect.map(
          run(
            "FollowLeases.leases",
            sql<LeaseRow>`SELECT ${sql.literal(columns)} FROM follow_leases ORDER BY chain_id`
          ),
          (rows) => rows.map(toLease)
        )
    })
  })
)
