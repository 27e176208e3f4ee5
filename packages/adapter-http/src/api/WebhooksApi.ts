/** The `webhooks` group of the API, composed with the others in `Api.ts`. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { ApiKeyAuth, bodyErrors, edgeErrors, intelErrors, KeyRateAuth } from "./Common.ts"

/** v2 webhooks and asynchronous intelligence (spec §4.5, §4.6). */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("register", "/api/v2/webhooks", {
      payload: S.WebhookRequest,
      success: S.WebhookRegistered.pipe(HttpApiSchema.status(201)),
      error: [S.InvalidWebhookUrl, S.WebhookConflict, S.V2Errors.ServiceUnavailable, ...bodyErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Register a webhook",
          description:
            "At most 5 per key; HTTPS only, and the host must resolve to public addresses (checked again at every delivery). The answer carries the signing secret, once."
        })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v2/webhooks", {
      success: S.WebhookList,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(OpenApi.annotations({ summary: "List the key's webhooks" }))
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.get("stats", "/api/v2/webhooks/stats", {
      success: S.WebhookStats,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Delivery statistics",
          description: "Delivered, pending and dead-lettered (failed) deliveries per webhook."
        })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.delete("remove", "/api/v2/webhooks/:webhookId", {
      params: { webhookId: Schema.String },
      success: S.WebhookDeleted,
      error: [S.WebhookNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({ summary: "Delete a webhook", description: "Its undelivered deliveries are dropped." })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.post("intel", "/api/v2/intel/webhook", {
      payload: S.AsyncIntelRequest,
      success: HttpApiSchema.WithHeaders(S.AsyncAccepted.pipe(HttpApiSchema.status(202)), S.chargedHeaders),
      error: [S.WebhookConflict, ...intelErrors(S.V2Errors), ...bodyErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Screen one address asynchronously",
          description:
            "Answers 202 once one delivery per active webhook is stored; each is signed (Standard Webhooks) and delivered at least once with retries. Costs 1 address."
        })
      )
      .middleware(ApiKeyAuth)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "v2 webhooks",
      description:
        "Webhooks of a key and asynchronous screening delivered to them, signed. `x-api-key`. Managing webhooks is charged to the key's per-second rate (qps; 429 past it), screening to its quotas as well."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}
