/**
 * QuotaStore on PostgreSQL, exact across instances. The charges an instance receives in one turn of the event
 * loop are decided together in one transaction: the windows they touch are created if missing and locked
 * (`SELECT … FOR UPDATE`, in key order so two instances never deadlock), each charge is decided all-or-nothing
 * in arrival order against the counts the earlier ones left, and each window changed is written once. Another
 * instance charging the same windows waits for the lock and decides against the committed counts.
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
  const { sql, run, transaction } = yield* PgDatabase

  /** The counts of `windows` (distinct), locked for the rest of the transaction. */
  const lock = (windows: ReadonlyArray<Port.QuotaWindow>) =>
    Effect.gen(function* () {
      const sorted = [...windows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.start - b.start))
      const keys = sorted.map((w) => w.key)
      const starts = sorted.map((w) => w.start)
      const ends = sorted.map((w) => w.start + w.millis)
      yield* sql`INSERT INTO quota_windows (key, window_start, window_end, used)
                 SELECT k, s, e, 0 FROM unnest(${keys}::text[], ${starts}::bigint[], ${ends}::bigint[]) AS t(k, s, e)
                 ON CONFLICT (key, window_start) DO NOTHING`
      const rows = yield* sql<{ readonly key: string; readonly window_start: string; readonly used: string }>`
        SELECT q.key, q.window_start::text AS window_start, q.used::text AS used
        FROM quota_windows q JOIN unnest(${keys}::text[], ${starts}::bigint[]) AS t(k, s)
          ON q.key = t.k AND q.window_start = t.s
        ORDER BY q.key, q.window_start
        FOR UPDATE OF q`
      return new Map(rows.map((r) => [`${r.window_start}\u0000${r.key}`, Number(r.used)]))
    })

  const chargeBatch = (batch: ReadonlyArray<ChargeRequest>) =>
    transaction(
      "QuotaStore.charge",
      Effect.gen(function* () {
        const distinct = new Map<string, Port.QuotaWindow>()
        for (const { windows } of batch) for (const w of windows) distinct.set(idOf(w), w)
        const used = yield* lock([...distinct.values()])
        const added = new Map<string, number>()
        const outcomes = batch.map(({ cost, windows }) => {
          const outcome = QuotaStore.decide(
            cost,
            windows,
            windows.map((w) => used.get(idOf(w)) ?? 0)
          )
          if (outcome.granted)
            for (const w of windows) {
              const id = idOf(w)
              used.set(id, (used.get(id) ?? 0) + (w.cost ?? cost))
              added.set(id, (added.get(id) ?? 0) + (w.cost ?? cost))
            }
          return outcome
        })
        const changed = [...added].filter(([, n]) => n !== 0).map(([id, n]) => ({ w: distinct.get(id)!, n }))
        if (changed.length > 0)
          yield* sql`UPDATE quota_windows q SET used = q.used + t.n
                     FROM unnest(${changed.map((c) => c.w.key)}::text[], ${changed.map((c) => c.w.start)}::bigint[],
                                 ${changed.map((c) => c.n)}::bigint[]) AS t(k, s, n)
                     WHERE q.key = t.k AND q.window_start = t.s`
        return outcomes
      })
    )

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
