/** QuotaStore on SQLite: each charge reads and updates its windows inside one immediate transaction. */
import { QuotaStore } from "@vigil/core"
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
  const current = (windows: ReadonlyArray<QuotaStore.QuotaWindow>) =>
    windows.map((w) => statements.read.get(w.key, w.start)?.used ?? 0)

  return QuotaStore.QuotaStore.of({
    charge: (cost, windows) =>
      database.transaction("QuotaStore.charge", () => {
        const outcome = QuotaStore.decide(cost, windows, current(windows))
        if (outcome.granted) {
          for (const w of windows) {
            const add = w.cost ?? cost
            if (add !== 0) statements.add.run(w.key, w.start, w.start + w.millis, add)
          }
        }
        return outcome
      }),
    usage: (windows) => database.use("QuotaStore.usage", () => QuotaStore.decide(0, windows, current(windows)).windows),
    prune: (before) => database.use("QuotaStore.prune", () => statements.prune.run(before).changes)
  })
})

/** A layer providing QuotaStore over the SqliteDatabase in context. */
export const layer: Layer.Layer<QuotaStore.QuotaStore, never, SqliteDatabase> = Layer.effect(QuotaStore.QuotaStore)(
  make.pipe(Effect.orDie)
)
