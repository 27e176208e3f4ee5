/** StorageProbe for in-memory storage: always reachable and writable, keeps no schema version, nothing to verify. */
import { Instant, StorageProbe } from "@vigil/core"
import { Effect, Layer } from "effect"

/** A layer whose probe always answers ready: `{ kind: "memory", schemaVersion: 0, write: "ok" }`. */
export const layer: Layer.Layer<StorageProbe.StorageProbe> = Layer.effect(StorageProbe.StorageProbe)(
  Effect.map(Instant.now, (checkedAt) => ({
    check: Effect.succeed({
      kind: "memory",
      schemaVersion: 0,
      write: "ok" as const,
      integrity: { status: "ok" as const, problems: [], checkedAt }
    })
  }))
)
