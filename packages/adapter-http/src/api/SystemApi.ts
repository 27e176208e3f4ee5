/** Operational endpoints: liveness, readiness and metrics, with the bodies of /health. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Intel } from "@vigil/core"
import * as S from "../Schemas.ts"
import { edgeErrors } from "./Common.ts"

/** Body of `GET /health` when the server can serve: storage read, written and verified, no recent failure. */
export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  storage: Schema.Struct({
    kind: Schema.String,
    schema_version: Schema.Int,
    write: Schema.Literals(["ok", "busy"]).annotate({
      description: "The write probe went through, or another writer holds the lock (writes wait for it)."
    })
  }),
  uptime_seconds: Schema.Finite,
  instance: Schema.String.annotate({
    description:
      "This instance's name as a holder of chains' leases (VIGIL_INSTANCE; by default host:pid): instances on one database follow each chain once, and each says here who follows what"
  }),
  calibration: Schema.optionalKey(
    Schema.Struct({
      model: Schema.Int,
      as_of: Schema.String,
      fitted_at: Schema.String,
      age_days: Schema.Int.annotate({ description: "Days from the day of its lists to today (UTC)." })
    }).annotate({
      description:
        "The newest calibration model (enable_agentic grades with the newest model of the screened day or before): how old the lists it was fitted on are. Absent when none is stored."
    })
  ),
  lists: Schema.Array(
    Schema.Struct({
      list: Schema.String,
      authority: Intel.Authority,
      as_of: Schema.String.annotate({ description: "The date of the list's current version." }),
      age_days: Schema.Int.annotate({ description: "Days from that date to today (UTC)." }),
      note: Schema.optionalKey(
        Schema.String.annotate({
          description:
            "The last refresh or ingest of the list that failed or was refused, and why, until a version is committed after it; the list in force keeps serving."
        })
      )
    })
  ).annotate({ description: "Every stored list, official ones first: how old each is." }),
  follow: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        chainId: Schema.Int,
        state: Schema.Literals(["starting", "following", "catching up", "backing off", "halted", "standby"]).annotate({
          description:
            "standby: another instance holds the chain's lease and follows it (holder); this one takes the chain over if that lease runs out (holderUntil)"
        }),
        holder: Schema.optionalKey(
          Schema.String.annotate({ description: "The instance that follows the chain (this one unless standby)" })
        ),
        holderUntil: Schema.optionalKey(
          Schema.String.annotate({ description: "When the holder's lease runs out unless renewed (ISO 8601)" })
        ),
        heads: Schema.Literals(["polling", "subscribed"]).annotate({
          description:
            "subscribed: the node announces new heads over its websocket (VIGIL_RPC_WS_URL_<chainId>) and each starts a step at once; polling goes on beside it"
        }),
        headsError: Schema.optionalKey(
          Schema.String.annotate({ description: "Why the configured new-heads subscription is not working (retried)" })
        ),
        bots: Schema.Int.annotate({ description: "Active bots of the chain" }),
        head: Schema.optionalKey(Schema.Int),
        cursor: Schema.optionalKey(Schema.Int.annotate({ description: "The last block processed" })),
        lag: Schema.optionalKey(Schema.Int.annotate({ description: "Blocks between the head and the cursor" })),
        lastError: Schema.optionalKey(
          Schema.String.annotate({
            description:
              "Why the follower is not moving: its last step failed (backing off), or the node lacks what it needs (a block it announced, a head below the blocks processed)"
          })
        ),
        stalledSince: Schema.optionalKey(
          Schema.String.annotate({ description: "Since when the follower has not moved for that reason (ISO 8601)" })
        ),
        skipped: Schema.optionalKey(
          Schema.Array(Schema.String).annotate({ description: "Active bots not run, and why" })
        ),
        lastProgress: Schema.optionalKey(Schema.String)
      })
    ).annotate({
      description:
        "Each chain with an active bot: followed here, or in standby while another instance on the same database follows it. Trouble with a chain's node is reported here (and in /metrics), not as unreadiness: the API still serves. A halted chain (reorganised deeper than the hashes kept) makes /health 503 until it is re-anchored (vigil follow reset)."
    })
  )
}).annotate({ identifier: "Health" })

/** Body of `GET /health` (status 503) when the server cannot serve, or cannot be trusted to. */
export const HealthUnavailable = Schema.Struct({
  status: Schema.Literals(["unavailable", "degraded"]).annotate({
    description:
      "unavailable: storage cannot be read or written. degraded: it answers, but verification found damage, a request met a storage failure in the last 30 s (waiting out another process's write lock, Busy, is contention and does not count), or a chain's follower is halted (reason FollowHalted)."
  }),
  version: Schema.String,
  reason: Schema.String,
  message: Schema.String,
  problems: Schema.optionalKey(Schema.Array(Schema.String))
}).pipe(HttpApiSchema.status(503), Schema.annotate({ identifier: "HealthUnavailable" }))

/** Body of `GET /health/live`: the process runs and answers. */
export const Liveness = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  uptime_seconds: Schema.Finite
}).annotate({ identifier: "Liveness" })

/** Operational endpoints: liveness, readiness and metrics. */
export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(
    HttpApiEndpoint.get("health", "/health", {
      success: Health,
      error: [HealthUnavailable, ...edgeErrors(S.V3Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Readiness",
        description:
          "200 when the server can serve: storage answers a real read and a real write, its verification at start found nothing wrong, and no request met a storage failure in the last 30 s (a request that waited out another process's write lock got 503 Busy; that is contention, not a failure of the store). 503 otherwise, saying why."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("live", "/health/live", {
      success: Liveness,
      error: edgeErrors(S.V3Errors)
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Liveness",
        description: "200 while the process runs and answers requests, whatever the state of storage."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4" })),
      error: edgeErrors(S.V3Errors)
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Prometheus metrics",
        description:
          "Requests by route and status, a latency histogram, quota rejections by limit, result-cache hits and misses."
      })
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "system", description: "Liveness and readiness, and metrics for Prometheus." })
  ) {}
