/**
 * QuotaStore on SQLite. Charges made in the same turn of the event loop are applied together in one
 * immediate transaction (group commit): each is still decided all-or-nothing, in arrival order, against
 * the counts the earlier ones left, and none is answered before the transaction has committed.
 */
import { type QuotaStore as Port, QuotaStore } from "@vigil/core"
import { Effect, Layer } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

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
  const current = (windows: ReadonlyArray<Port.QuotaWindow>) =>
    windows.map((w) => statements.read.get(w.key, w.start)?.used ?? 0)

  const chargeOne = (cost: number, windows: ReadonlyArray<Port.QuotaWindow>) => {
    const outcome = QuotaStore.decide(cost, windows, current(windows))
    if (outcome.granted) {
      for (const w of windows) {
        const add = w.cost ?? cost
        if (add !== 0) statements.add.run(w.key, w.start, w.start + w.millis, add)
      }
    }
    return outcome
  }

  const charge = database.groupCommit(
    "QuotaStore.charge",
    (_, request: { readonly cost: number; readonly windows: ReadonlyArray<Port.QuotaWindow> }) =>
      chargeOne(request.cost, request.windows)
  )

  return QuotaStore.QuotaStore.of({
    charge: (cost, windows) => charge({ cost, windows }),
    usage: (windows) => database.use("QuotaStore.usage", () => QuotaStore.decide(0, windows, current(windows)).windows),
    prune: (before) => database.use("QuotaStore.prune", () => statements.prune.run(before).changes)
  })
})

/** A layer providing QuotaStore over the SqliteDatabase in context. */
export const layer: Layer.Layer<QuotaStore.QuotaStore, never, SqliteDatabase> = Layer.effect(QuotaStore.QuotaStore)(
  make.pipe(Effect.orDie)
)
