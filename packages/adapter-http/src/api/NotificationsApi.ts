/** The `notifications` group of the API, composed with the others in `Api.ts`. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { bodyErrors, edgeErrors, KeyRateAuth } from "./Common.ts"

/** Monitoring: notification channels (spec §2.8's `notifications`). Either key header; failures in the v2 shape. */
export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.post("create", "/v1/notifications", {
      payload: S.ChannelRequest,
      success: S.ChannelAnswer.pipe(HttpApiSchema.status(201)),
      error: [S.V2Errors.ValidationError, S.ChannelConflict, S.V2Errors.ServiceUnavailable, ...bodyErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a notification channel",
        description:
          "webhook {url} (Standard Webhooks signed; the secret is in this answer only), slack and discord {url} (incoming-webhook URLs), telegram {botToken, chatId}, email {to} (through the server's mail relay). Every URL must be HTTPS to a public host (or one on the server's allow-list). An optional template makes the message from the alert's fields. At most 20 channels per key (409 beyond)."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/notifications", {
      success: S.ChannelList,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({ summary: "List the key's channels", description: "Oldest first, with delivery counts." })
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/notifications/:channelId", {
      params: { channelId: Schema.String },
      success: S.ChannelAnswer,
      error: [S.ChannelNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Read a channel and the state of its deliveries" }))
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/notifications/:channelId", {
      params: { channelId: Schema.String },
      success: S.ChannelDeleted,
      error: [S.ChannelNotFound, S.ChannelConflict, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a channel",
        description:
          "Refused with 409 while bots of the key send to it, naming them; its undelivered messages are dropped."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/notifications/:channelId/test", {
      params: { channelId: Schema.String },
      success: S.ChannelTestQueued.pipe(HttpApiSchema.status(202)),
      error: [S.ChannelNotFound, S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send a test message",
        description:
          "Queues a test message through the same outbox as alerts (retries, dead letters); the channel's deliveries show how it went."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/v1/notifications/:channelId/redeliver", {
      params: { channelId: Schema.String },
      success: S.ChannelRedelivered.pipe(HttpApiSchema.status(202)),
      error: [S.ChannelNotFound, S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send the channel's dead letters again",
        description:
          "Alerts, retractions and test messages the receiver refused through every retry are queued again, each with its first delivery id (receivers that deduplicate drop what they already had) and the full retry schedule: how an operator recovers the alerts of a receiver outage. 400 for a channel disabled by a 410 Gone."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: notification channels",
      description: "Where bots' alerts go. `x-api-key` or `Authorization: Bearer`; another key's channel is a 404."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}
