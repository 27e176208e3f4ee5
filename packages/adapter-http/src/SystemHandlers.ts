/**
 * Handlers of the system group: `/health` (readiness) reads, writes and reports the verification of storage;
 * it also reports each followed chain. `/health/live` answers while the process runs; `/metrics` renders the
 * counters.
 */
import { Calibration, Follower, Instant, Screening, StorageProbe, Version } from "@vigil/core"
import { Clock, Effect, type Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { VigilApi } from "./Api.ts"
import { HttpMetrics } from "./HttpMetrics.ts"

/** The system group's handlers; needs the storage probe. */
export const layer: Layer.Layer<
  HttpApiGroup.Service<"vigil", "system">,
  never,
  StorageProbe.StorageProbe | HttpMetrics | Follower.Follower | Screening.Screening
> = HttpApiBuilder.group(
  VigilApi,
  "system",
  Effect.fnUntraced(function* (handlers) {
    const probe = yield* StorageProbe.StorageProbe
    const metrics = yield* HttpMetrics
    const follower = yield* Follower.Follower
    const screening = yield* Screening.Screening
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
          // Waiting out another process's write lock (an ingest, a second server) is contention, not a fault of the
          // store: the request was answered 503 Busy with Retry-After, and this instance stays in its balancer.
          if (failure !== undefined && failure.reason !== "Busy") {
            return yield* Effect.fail({
              status: "degraded" as const,
              version: Version.version,
              reason: failure.reason,
              message: `${failure.operation} failed at ${failure.at}: ${failure.message}`
            })
          }
          const now = yield* Clock.currentTimeMillis
          const states = yield* follower.status
          const halted = states.find((c) => c.state === "halted")
          if (halted !== undefined) {
            return yield* Effect.fail({
              status: "degraded" as const,
              version: Version.version,
              reason: "FollowHalted",
              message: `chain ${halted.chainId}: ${halted.lastError ?? "halted"}`
            })
          }
          const follow = states.map((c) => ({
            chainId: c.chainId,
            state: c.state,
            ...(c.holder === undefined ? {} : { holder: c.holder }),
            ...(c.holderUntil === undefined ? {} : { holderUntil: c.holderUntil }),
            bots: c.bots,
            heads: c.heads,
            ...(c.headsError === undefined ? {} : { headsError: c.headsError }),
            ...(c.head === undefined ? {} : { head: c.head }),
            ...(c.cursor === undefined ? {} : { cursor: c.cursor }),
            ...(c.lag === undefined ? {} : { lag: c.lag }),
            ...(c.lastError === undefined ? {} : { lastError: c.lastError }),
            ...(c.stalledSince === undefined ? {} : { stalledSince: c.stalledSince }),
            ...(c.skipped === undefined ? {} : { skipped: c.skipped }),
            ...(c.lastProgress === undefined ? {} : { lastProgress: c.lastProgress })
          }))
          const today = Instant.day(now)
          const model = Calibration.modelOn(yield* screening.models, today)
          const ageDays = (day: string) => Math.round((Date.parse(today) - Date.parse(day)) / 86_400_000)
          const lists = [...(yield* screening.lists)]
            .sort((a, b) => Number(b.authority === "official") - Number(a.authority === "official"))
            .map((l) => ({
              list: l.list,
              authority: l.authority,
              as_of: l.asOf,
              age_days: ageDays(l.asOf),
              ...(l.refused === undefined ? {} : { note: `${l.refused.at}: ${l.refused.message}` })
            }))
          return {
            status: "ok" as const,
            version: Version.version,
            storage: { kind: storage.kind, schema_version: storage.schemaVersion, write: storage.write },
            uptime_seconds: Math.round((now - startedAt) / 1000),
            instance: follower.instance,
            ...(model === undefined
              ? {}
              : {
                  calibration: {
                    model: model.version,
                    as_of: model.asOf,
                    fitted_at: model.fittedAt,
                    age_days: ageDays(model.asOf)
                  }
                }),
            lists,
            ...(follow.length === 0 ? {} : { follow })
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
