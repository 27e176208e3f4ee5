/** Handlers of the system group: `/health` makes a real round trip to storage; `/metrics` renders the counters. */
import { StorageProbe, Version } from "@vigil/core"
import { Clock, Effect, type Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { VigilApi } from "./Api.ts"
import { HttpMetrics } from "./HttpMetrics.ts"

/** The system group's handlers; needs the storage probe. */
export const layer: Layer.Layer<
  HttpApiGroup.Service<"vigil", "system">,
  never,
  StorageProbe.StorageProbe | HttpMetrics
> = HttpApiBuilder.group(
  VigilApi,
  "system",
  Effect.fnUntraced(function* (handlers) {
    const probe = yield* StorageProbe.StorageProbe
    const metrics = yield* HttpMetrics
    const startedAt = yield* Clock.currentTimeMillis
    return handlers
      .handle("metrics", () =>
        Effect.map(metrics.render, (text) =>
          HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
        )
      )
      .handle("health", () =>
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
