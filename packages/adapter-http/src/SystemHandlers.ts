/** Handlers of the system group: `/health` makes a real round trip to storage. */
import { StorageProbe, Version } from "@vigil/core"
import { Clock, Effect, type Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { VigilApi } from "./Api.ts"

/** The system group's handlers; needs the storage probe. */
export const layer: Layer.Layer<
  HttpApiGroup.Service<"vigil", "system">,
  never,
  StorageProbe.StorageProbe
> = HttpApiBuilder.group(
  VigilApi,
  "system",
  Effect.fnUntraced(function* (handlers) {
    const probe = yield* StorageProbe.StorageProbe
    const startedAt = yield* Clock.currentTimeMillis
    return handlers.handle("health", () =>
      Effect.gen(function* () {
        const storage = yield* probe.check
        const now = yield* Clock.currentTimeMillis
        return {
          status: "ok" as const,
          version: Version.version,
          storage: { kind: storage.kind, schema_version: storage.schemaVersion },
          uptime_seconds: Math.round((now - startedAt) / 1000)
        }
      }).pipe(
        Effect.catchTag("StoreError", (error) =>
          Effect.fail({
            status: "unavailable" as const,
            version: Version.version,
            reason: error.reason,
            message: error.message
          })
        )
      )
    )
  })
)
