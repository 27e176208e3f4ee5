/**
 * FollowLeases on SQLite: a row per chain, read and decided in one immediate transaction, on the clock of the
 * machine every process sharing the file runs on.
 */
import { FollowLeases, type StoreError } from "@vigil/core"
import { Clock, Effect, Layer } from "effect"
import { SqliteDatabase } from "./SqliteDatabase.ts"

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

export const layer: Layer.Layer<FollowLeases.FollowLeases, StoreError.StoreError, SqliteDatabase> = Layer.effect(
  FollowLeases.FollowLeases
)(
  Effect.gen(function* () {
    const database = yield* SqliteDatabase
    const s = yield* database.use("FollowLeases.prepare", (db) => ({
      get: db.prepare<[number], LeaseRow>("SELECT * FROM follow_leases WHERE chain_id = ?"),
      put: db.prepare<[number, string, number, string]>(
        `INSERT INTO follow_leases (chain_id, holder, term, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (chain_id) DO UPDATE SET holder = excluded.holder, term = excluded.term,
           expires_at = excluded.expires_at`
      ),
      all: db.prepare<[], LeaseRow>("SELECT * FROM follow_leases ORDER BY chain_id")
    }))
    const write = (lease: FollowLeases.Lease) => s.put.run(lease.chainId, lease.holder, lease.term, lease.expiresAt)
    return FollowLeases.FollowLeases.of({
      hold: (chainId, holder, ttlMillis) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          database.transaction("FollowLeases.hold", () => {
            const row = s.get.get(chainId)
            const lease = FollowLeases.decide(
              row === undefined ? undefined : toLease(row),
              chainId,
              holder,
              now,
              ttlMillis
            )
            if (lease !== undefined) write(lease)
            return lease
          })
        ),
      release: (chainId, holder) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          database.transaction("FollowLeases.release", () => {
            const row = s.get.get(chainId)
            if (row !== undefined && row.holder === holder) write(FollowLeases.released(toLease(row), now))
          })
        ),
      leases: () => database.use("FollowLeases.leases", () => s.all.all().map(toLease))
    })
  })
)
