/**
 * Handlers of the system group: `/health` (readiness) reads, writes and reports the verification of storage;
 * `/health/live` answers while the process runs; `/metrics` renders the counters.
 */
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
      .handle("live", () =>
        Effect.map(Clock.currentTimeMillis, (now) => ({
          status: "ok" as const,
          version: Version.version,
          uptime_seconds: Math.round((now - startedAt) / 1000)
        }))
      )
      .handle("health", () =>
        Effect.gen(function* () {
          const storage = yield* probe.check
          if (storage.integrity.status === "failed") {
            return yield* Effect.fail({
              status: "degraded" as const,
              version: Version.version,
              reason: "IntegrityFailed",
              message: `verification of the store at ${storage.integrity.checkedAt} found damage: ${storage.integrity.problems[0] ?? "unknown"}; answers it affects are incomplete (run vigil check)`,
              problems: storage.integrity.problems
            })
          }
          const failure = storage.recentFailure
          if (failure !== undefined) {
            return yield* Effect.fail({
              status: "degraded" as const,
              version: Version.version,
              reason: failure.reason,
              message: `${failure.operation} failed at ${failure.at}: ${failure.message}`
            })
          }
          const now = yield* Clock.currentTimeMillis
          return {
            status: "ok" as const,
            version: Version.version,
            storage: { kind: storage.kind, schema_version: storage.schemaVersion, write: storage.write },
            uptime_seconds: Math.round((now - startedAt) / 1000)
          }
        }).pipe(
          Effect.catchTag("StoreError", (error) =>
            Effect.fail({
              status: "unavailable" as const,
              version: Version.version,
              reason: error.reason,
              message: `${error.operation}: ${error.message}`
            })
          )
        )
      )
  })
)
