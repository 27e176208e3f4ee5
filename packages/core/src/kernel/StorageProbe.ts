/** Port: tells whether the storage behind the other ports can serve, for health checks. */
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/** A storage failure a port met, as health reports it. */
export interface StorageFailure {
  readonly operation: string
  readonly reason: StoreError["reason"]
  readonly message: string
  /** ISO instant. */
  readonly at: string
}

/** What the store's own verification found: nothing wrong, or what is (a damaged page, a list's records altered). */
export interface Integrity {
  readonly status: "ok" | "failed"
  readonly problems: ReadonlyArray<string>
  /** ISO instant of the verification. */
  readonly checkedAt: string
}

/** What a probe reports about the store it checked. */
export interface StorageStatus {
  /** The kind of store, e.g. `sqlite` or `memory`. */
  readonly kind: string
  /** Schema version the store is at (0 when the store keeps none). */
  readonly schemaVersion: number
  /** The write probe: it went through, or another writer holds the lock (writes wait for it; not a fault). */
  readonly write: "ok" | "busy"
  readonly integrity: Integrity
  /** The last failure any port met within the last `recentMillis`, if any. */
  readonly recentFailure?: StorageFailure
}

/** How long a storage failure met by any port keeps the store from being reported ready. */
export const recentMillis = 30_000

/**
 * True when `status` says the store can serve: nothing failed verification and no port failed recently (waiting
 * out another process's write lock, `Busy`, is contention, not a failure of the store).
 */
export const ready = (status: StorageStatus): boolean =>
  status.integrity.status === "ok" && (status.recentFailure === undefined || status.recentFailure.reason === "Busy")

/**
 * Checks that storage can serve: a real read and a real write (a failure of either is the StoreError), the
 * store's verification, and the last failure any port met.
 */
export class StorageProbe extends Context.Service<
  StorageProbe,
  {
    readonly check: Effect.Effect<StorageStatus, StoreError>
  }
>()("@vigil/core/StorageProbe") {}
