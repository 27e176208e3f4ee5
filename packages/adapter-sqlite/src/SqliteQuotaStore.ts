/**
 * QuotaStore on SQLite. Charges made in the same turn of the event loop are applied together in one
 * immediate transaction (group commit): each is still decided all-or-nothing, in arrival order, against
 * the counts the earlier ones left, each window is written once per batch, and none is answered before the
 * transaction has committed.
 */
import { type QuotaStore as Port, QuotaStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

interface ChargeRequest {
  readonly cost: number
  readonly windows: ReadonlyArray<Port.QuotaWindow>
}

/** Builds the store over the shared database, preparing its statements once. */
const make = Effect.gen(function* () {
  const database = yield* SqliteDatabase
  const statements = yield* database.use("QuotaStore.prepare", (db) => ({
    read: db.prepare<[string, number], { used: number }>(
      "SELECT used FROM quota_windows WHERE key = ? AND window_start = ?"
    ),
    add: db.prepare<[string, number, number, number]>(
      `INSERT INTO quota_windows (key, window_start, window_end, used) VALUES (?, ?, ?, ?)
       ON CONFLICT (key, window_start) DO UPDATE SET used = used + excluded.used`
    ),
    prune: db.prepare<[number]>("DELETE FROM quota_windows WHERE window_end <= ?")
  }))
  const used = (w: Port.QuotaWindow) => statements.read.get(w.key, w.start)?.used ?? 0
  const current = (windows: ReadonlyArray<Port.QuotaWindow>) => windows.map(used)

  /**
   * Decides a batch of charges in arrival order against counts kept in memory for the batch (each window read
   * once), then writes each window it changed once: the same outcome as charging one by one, with far fewer
   * statements when many requests of one key arrive together.
   */
  const chargeBatch = (batch: ReadonlyArray<ChargeRequest>) => {
    const counts = new Map<string, { readonly window: Port.QuotaWindow; used: number; added: number }>()
    const counter = (w: Port.QuotaWindow) => {
      const id = `${w.start}\u0000${w.key}`
      let c = counts.get(id)
      if (c === undefined) {
        c = { window: w, used: used(w), added: 0 }
        counts.set(id, c)
      }
      return c
    }
    const outcomes = batch.map(({ cost, windows }) => {
      const cs = windows.map(counter)
      const outcome = QuotaStore.decide(
        cost,
        windows,
        cs.map((c) => c.used)
      )
      if (outcome.granted) {
        windows.forEach((w, i) => {
          const add = w.cost ?? cost
          cs[i]!.used += add
          cs[i]!.added += add
        })
      }
      return outcome
    })
    for (const { window: w, added } of counts.values()) {
      if (added !== 0) statements.add.run(w.key, w.start, w.start + w.millis, added)
    }
    return outcomes
  }

  const charge = database.groupCommit("QuotaStore.charge", (_, batch: ReadonlyArray<ChargeRequest>) =>
    chargeBatch(batch)
  )

  return QuotaStore.QuotaStore.of({
    charge: (cost, windows) => charge({ cost, windows }),
    usage: (windows) => database.use("QuotaStore.usage", () => QuotaStore.decide(0, windows, current(windows)).windows),
    prune: (before) => database.transaction("QuotaStore.prune", () => statements.prune.run(before).changes)
  })
})

/** A layer providing QuotaStore over the SqliteDatabase in context. */
export const layer: Layer.Layer<QuotaStore.QuotaStore, never, SqliteDatabase> = Layer.effect(QuotaStore.QuotaStore)(
  make.pipe(Effect.orDie)
)
