/** The HTTP contract of the reference server, shared by the server, its clients and the OpenAPI document. */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"

/** Body of `GET /health` when the server and its storage answer. */
export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  storage: Schema.Struct({ kind: Schema.String, schema_version: Schema.Int }),
  uptime_seconds: Schema.Finite
}).annotate({ identifier: "Health" })

/** Body of `GET /health` (status 503) when storage does not answer. */
export const HealthUnavailable = Schema.Struct({
  status: Schema.Literal("unavailable"),
  version: Schema.String,
  reason: Schema.String,
  message: Schema.String
}).pipe(HttpApiSchema.status(503), Schema.annotate({ identifier: "HealthUnavailable" }))

/** Operational endpoints: liveness and readiness. */
export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", { success: Health, error: HealthUnavailable }).annotateMerge(
    OpenApi.annotations({
      summary: "Health and readiness",
      description: "200 when the server is serving and its storage answers a real query; 503 otherwise."
    })
  )
) {}

/** The whole reference API. */
export class VigilApi extends HttpApi.make("vigil")
  .add(SystemGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Vigil",
      description: "Blockchain address risk screening and smart-contract monitoring"
    })
  ) {}
