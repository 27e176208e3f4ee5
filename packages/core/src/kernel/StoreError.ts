/** The one error every storage port fails with: a reason a caller can act on, never a driver's own type. */
import { Schema } from "effect"

/**
 * Why a storage operation failed.
 * - `Busy`: the store is locked by another writer; retrying soon may succeed.
 * - `Conflict`: a uniqueness or integrity rule refused the write.
 * - `Corrupt`: the stored data or file is not what the store expects.
 * - `Unavailable`: the store cannot be reached, opened or written (I/O, permissions, disk full, closed).
 * - `Incompatible`: the store was written by a newer schema than this build understands.
 */
export const StoreErrorReason = Schema.Literals(["Busy", "Conflict", "Corrupt", "Unavailable", "Incompatible"])

/** The reason of a {@link StoreError}. */
export type StoreErrorReason = typeof StoreErrorReason.Type

/** A storage port operation failed; `operation` names the port method, `message` says what went wrong. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: StoreErrorReason,
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /** True when the same operation may succeed if tried again shortly. */
  get isRetryable(): boolean {
    return this.reason === "Busy"
  }
}
