/**
 * The answers of the webhook routes (spec §2.7, §4.5–4.6, §7), declared once as Schemas, and how the stored
 * webhooks become them. Times are ISO 8601 UTC instants; a webhook never delivered to has `lastDelivery: null`.
 */
import { Schema } from "effect"
import { Instant } from "../kernel/index.ts"
import type { Registered } from "./Webhooks.ts"
import type { Webhook, WebhookStats } from "./WebhookStore.ts"

const Timestamp = Instant.Timestamp

const WebhookId = Schema.String.annotate({
  description: "wh_<epoch ms>_<9 lowercase alphanumerics>",
  examples: ["wh_1640995200000_abc123def"]
})

/** Registration (201): the only answer that shows the signing secret. */
export const RegisteredResponse = Schema.Struct({
  success: Schema.Literal(true),
  webhook: Schema.Struct({
    id: WebhookId,
    url: Schema.String,
    created: Timestamp,
    secret: Schema.String.annotate({
      description: "Standard Webhooks secret (whsec_…) that signs every delivery; shown only here"
    })
  }),
  message: Schema.Literal("Webhook registered successfully"),
  timestamp: Timestamp
})

/** The key's webhooks. */
export const ListResponse = Schema.Struct({
  success: Schema.Literal(true),
  webhooks: Schema.Array(
    Schema.Struct({
      id: WebhookId,
      url: Schema.String,
      created: Timestamp,
      deliveryCount: Schema.Int,
      lastDelivery: Schema.NullOr(Timestamp),
      disabled: Schema.Boolean
    })
  ),
  count: Schema.Int,
  timestamp: Timestamp
})

/** Delivery statistics per webhook; `failed` counts dead-lettered deliveries. */
export const StatsResponse = Schema.Struct({
  success: Schema.Literal(true),
  stats: Schema.Struct({
    total: Schema.Int,
    totalDeliveries: Schema.Int,
    webhooks: Schema.Array(
      Schema.Struct({
        id: WebhookId,
        url: Schema.String,
        deliveryCount: Schema.Int,
        lastDelivery: Schema.NullOr(Timestamp),
        pending: Schema.Int,
        failed: Schema.Int,
        disabled: Schema.Boolean
      })
    )
  }),
  timestamp: Timestamp
})

/** Deletion. */
export const DeletedResponse = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.Literal("Webhook deleted successfully"),
  timestamp: Timestamp
})

/** Asynchronous intelligence accepted (202): the deliveries are stored; results follow on the webhooks. */
export const AcceptedResponse = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.String,
  correlation_id: Schema.String,
  timestamp: Timestamp
})

/** Every failure of a webhook route (spec §7): the spec's text in `error`, what was wrong in `details`. */
export const FailureResponse = Schema.Struct({
  success: Schema.Literal(false),
  error: Schema.String,
  details: Schema.optionalKey(
    Schema.Struct({
      reason: Schema.optionalKey(Schema.String.annotate({ description: "Which rule the URL breaks (400)" })),
      max: Schema.optionalKey(Schema.Int.annotate({ description: "How many webhooks the key may have (409)" }))
    }).annotate({ identifier: "WebhookFailureDetails", description: "What was wrong, for programs" })
  ),
  timestamp: Timestamp
})

export const registered = (webhook: Registered, timestamp: string): typeof RegisteredResponse.Type => ({
  success: true,
  webhook,
  message: "Webhook registered successfully",
  timestamp
})

export const list = (webhooks: ReadonlyArray<Webhook>, timestamp: string): typeof ListResponse.Type => ({
  success: true,
  webhooks: webhooks.map((w) => ({
    id: w.id,
    url: w.url,
    created: w.created,
    deliveryCount: w.deliveryCount,
    lastDelivery: w.lastDelivery ?? null,
    disabled: w.disabledAt !== undefined
  })),
  count: webhooks.length,
  timestamp
})

export const stats = (stats: ReadonlyArray<WebhookStats>, timestamp: string): typeof StatsResponse.Type => ({
  success: true,
  stats: {
    total: stats.length,
    totalDeliveries: stats.reduce((n, s) => n + s.deliveryCount, 0),
    webhooks: stats.map((s) => ({
      id: s.id,
      url: s.url,
      deliveryCount: s.deliveryCount,
      lastDelivery: s.lastDelivery ?? null,
      pending: s.pending,
      failed: s.failed,
      disabled: s.disabled
    }))
  },
  timestamp
})

export const deleted = (timestamp: string): typeof DeletedResponse.Type => ({
  success: true,
  message: "Webhook deleted successfully",
  timestamp
})
