/** StorageProbe for in-memory storage: always reachable, keeps no schema version. */
import { StorageProbe } from "@vigil/core"
import { Effect, Layer } from "effect"

/** A layer whose probe always answers `{ kind: "memory", schemaVersion: 0 }`. */
export const layer: Layer.Layer<StorageProbe.StorageProbe> = Layer.succeed(StorageProbe.StorageProbe)({
  check: Effect.succeed({ kind: "memory", schemaVersion: 0 })
})
