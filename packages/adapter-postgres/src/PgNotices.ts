/**
 * What an instance hears of the changes other processes announce (`LISTEN`/`NOTIFY`), for caches of what the
 * database says. A writer announces its change on a channel in the same transaction (`announce`), so the notice
 * goes out at its commit, to every instance and to a CLI command's process alike; every listener then forgets
 * what it had read. Notices sent while a listener is disconnected are lost, so a cache holds nothing while its
 * listener is down, and trusts what it holds for a bounded time even while it is up.
 */
import { Cause, Clock, Effect, Queue } from "effect"
import type { SqlError } from "effect/sql"
import { onRealClock, PgDatabase } from "./PgDatabase.ts"

/** How long a remembered reading is trusted while notices are heard: the bound on a notice that never came. */
const trustMillis = 1_000

/** A listener's state, read by a cache before it trusts or keeps a reading. */
export interface Heard {
  /** Moves with every notice for this schema, and whenever listening starts or stops (and after a change here). */
  readonly count: () => number
  /** Whether notices are heard now: while not, nothing may be remembered. */
  readonly listening: () => boolean
  /** The statement a changing transaction runs: its notice goes out at the commit. */
  readonly announce: Effect.Effect<void, SqlError.SqlError>
  /** Forgets at once what this process remembered: run when a change made here has ended, committed or not. */
  readonly forget: () => void
}

/**
 * Listens on `channel` for the rest of the scope, subscribing again after a pause when the connection drops and
 * reporting a failure once (`what` names what is not heard).
 */
export const listen = (channel: string, what: string) =>
  Effect.gen(function* () {
    const { sql, schema } = yield* PgDatabase
    let count = 0
    let listening = false
    /** Whether the last subscription failed: a server that stays away is reported once, not at every retry. */
    let failing = false
    const subscription = Effect.scoped(
      Effect.gen(function* () {
        const notices = yield* sql.listen(channel)
        listening = true
        failing = false
        count++
        while (true) {
          const notice = yield* Queue.take(notices)
          if (notice.payload === schema) count++
        }
      })
    ).pipe(
      Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        if (failing) return Effect.void
        failing = true
        return Effect.logWarning(`${what}; resubscribing`, cause)
      }),
      Effect.ensuring(
        Effect.sync(() => {
          listening = false
          count++
        })
      ),
      Effect.andThen(Effect.sleep(trustMillis)),
      Effect.forever,
      onRealClock
    )
    yield* Effect.forkScoped(subscription)
    return {
      count: () => count,
      listening: () => listening,
      announce: Effect.asVoid(sql`SELECT pg_notify(${channel}, ${schema})`),
      forget: () => {
        count++
      }
    } satisfies Heard
  })

/**
 * `read`, remembered while notices are heard: its reading is given again for `trustMillis` at most, and only while
 * no notice (nor a change made here) came since it was read; while not listening every call reads afresh. While
 * listening, the calls that come during a reading (no notice since it began) wait for it rather than each reading
 * again: when a reading runs out under load, one statement renews it, not one per request waiting.
 */
export const remembered = <A, E, R>(heard: Heard, read: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let kept: { readonly value: A; readonly heard: number; readonly atMillis: number } | undefined
  /** The reading under way while listening, and the notices heard when it began. */
  let reading: { readonly heard: number; readonly value: Effect.Effect<A, E, R> } | undefined
  return Effect.flatMap(onRealClock(Clock.currentTimeMillis), (now) => {
    const listening = heard.listening()
    if (listening && kept?.heard === heard.count() && now - kept.atMillis < trustMillis)
      return Effect.succeed(kept.value)
    const before = heard.count()
    if (listening && reading?.heard === before) return reading.value
    // Kept if no notice came while it was read; else it is not trusted, nor does it displace a later reading.
    const once = Effect.tap(read, (value) =>
      Effect.sync(() => {
        if (heard.listening() && heard.count() === before) kept = { value, heard: before, atMillis: now }
      })
    )
    if (!listening) return once
    return Effect.flatMap(Effect.cached(once), (shared) => {
      const mine = { heard: before, value: shared }
      reading = mine
      return Effect.ensuring(
        shared,
        Effect.sync(() => {
          if (reading === mine) reading = undefined
        })
      )
    })
  })
}
