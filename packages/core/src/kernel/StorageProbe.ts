/** Port: tells whether the storage behind the other ports answers, for health checks. */
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/** What a probe reports about the store it checked. */
export interface StorageStatus {
  /** The kind of store, e.g. `sqlite` or `memory`. */
  readonly kind: string
  /** Schema version the store is at (0 when the store keeps none). */
  readonly schemaVersion: number
}

/** Checks that storage is reachable by making a real round trip to it. */
export class StorageProbe extends Context.Service<
  StorageProbe,
  {
    readonly check: Effect.Effect<StorageStatus, StoreError>
  }
>()("@vigil/core/StorageProbe") {}
