/**
 * QuotaStore on PostgreSQL, exact across instances. The charges an instance receives while its previous batch is
 * in the database are decided together in one statement (the `vigil_charge` function, one round trip): the
 * windows they touch are created if missing and locked (`SELECT … FOR UPDATE`, in key order so two instances
 * never deadlock), each charge is decided all-or-nothing in arrival order against the counts the earlier ones
 * left (as `QuotaStore.decide`), and each window changed is written once. Another instance charging the same
 * windows waits for the lock and decides against the committed counts. Each batch is its own transaction, which
 * commits without waiting for the write-ahead log's flush (migration 21; docs/operating.md): it must hold nothing
 * but the charges.
 */
import { type QuotaStore as Port, QuotaStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { batcher, PgDatabase } from "./PgDatabase.ts"

interface ChargeRequest {
  readonly cost: number
  readonly windows: ReadonlyArray<Port.QuotaWindow>
}

/** A window's identity in a batch. */
const idOf = (w: Port.QuotaWindow) => `${w.start}\u0000${w.key}`

const make = Effect.gen(function* () {
  const { sql, run } = yield* PgDatabase

  /** The charges of one batch, decided together in one statement (`vigil_charge`, migration 12). */
  const chargeBatch = (batch: ReadonlyArray<ChargeRequest>) =>
    Effect.gen(function* () {
      const rows = batch.flatMap(({ cost, windows }, charge) =>
        windows.map((w) => ({ charge, cost: w.cost ?? cost, w }))
      )
      if (rows.length === 0) return batch.map(({ cost, windows }) => QuotaStore.decide(cost, windows, []))
      const decided = yield* run(
        "QuotaStore.charge",
        sql<{ readonly used: string; readonly granted: boolean }>`
          SELECT used::text AS used, granted FROM vigil_charge(
            ${rows.map((r) => r.charge)}::int[], ${rows.map((r) => r.cost)}::bigint[],
            ${rows.map((r) => r.w.key)}::text[], ${rows.map((r) => r.w.start)}::bigint[],
            ${rows.map((r) => r.w.start + r.w.millis)}::bigint[], ${rows.map((r) => r.w.limit)}::float8[])`
      )
      // Each charge's rows come back in order, with the window's count after its decision.
      let next = 0
      return batch.map(({ windows }): Port.QuotaCharge => {
        const mine = decided.slice(next, next + windows.length)
        next += windows.length
        return {
          granted: mine.every((d) => d.granted),
          windows: windows.map((w, i) => ({
            key: w.key,
            used: Number(mine[i]!.used),
            limit: w.limit,
            resetAt: w.start + w.millis
          }))
        }
      })
    })

  const charge = batcher(chargeBatch)

  return QuotaStore.QuotaStore.of({
    charge: (cost, windows) => charge({ cost, windows }),
    usage: (windows) =>
      run(
        "QuotaStore.usage",
        Effect.gen(function* () {
          if (windows.length === 0) return []
          const rows = yield* sql<{ readonly key: string; readonly window_start: string; readonly used: string }>`
            SELECT q.key, q.window_start::text AS window_start, q.used::text AS used
            FROM quota_windows q JOIN unnest(${windows.map((w) => w.key)}::text[], ${windows.map((w) => w.start)}::bigint[]) AS t(k, s)
              ON q.key = t.k AND q.window_start = t.s`
          const used = new Map(rows.map((r) => [`${r.window_start}\u0000${r.key}`, Number(r.used)]))
          return QuotaStore.decide(
            0,
            windows,
            windows.map((w) => used.get(idOf(w)) ?? 0)
          ).windows
        })
      ),
    prune: (before) =>
      run(
        "QuotaStore.prune",
        Effect.map(
          sql<{ readonly n: string }>`WITH gone AS (DELETE FROM quota_windows WHERE window_end <= ${before} RETURNING 1)
                                      SELECT count(*)::text AS n FROM gone`,
          (rows) => Number(rows[0]?.n ?? 0)
        )
      )
  })
})

/** A layer providing QuotaStore over the PgDatabase in context. */
export const layer: Layer.Layer<QuotaStore.QuotaStore, never, PgDatabase> = Layer.effect(QuotaStore.QuotaStore)(make)
