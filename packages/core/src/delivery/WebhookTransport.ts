/**
 * Port: one outbound request of a signed delivery, answered with what it means for the delivery (delivered,
 * gone, try again, never), so the delivery loop needs no knowledge of HTTP statuses or network errors.
 */
import { Context, type Effect } from "effect"

/** One outbound request. */
export interface Outbound {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMillis: number
}

/** What an attempt means for its delivery; `detail` says what happened, for the log and the stored error. */
export type Outcome =
  /** The receiver took it. */
  | { readonly _tag: "Delivered"; readonly detail: string }
  /** The receiver says it will never take anything again (HTTP 410): the webhook is disabled. */
  | { readonly _tag: "Gone"; readonly detail: string }
  /** Worth another attempt later (an error status, a timeout, a network or TLS failure, a refused address). */
  | { readonly _tag: "Retry"; readonly detail: string }
  /** This delivery can never succeed as it is: it is dead-lettered at once. */
  | { readonly _tag: "Permanent"; readonly detail: string }

/**
 * The meaning of an HTTP status for a webhook delivery: 2xx delivered, 410 gone, anything else (3xx included:
 * redirects are not followed) retried.
 */
export const classifyStatus = (status: number): Outcome =>
  status >= 200 && status < 300
    ? { _tag: "Delivered", detail: `HTTP ${status}` }
    : status === 410
      ? { _tag: "Gone", detail: `HTTP ${status}` }
      : { _tag: "Retry", detail: `HTTP ${status}` }

/** Sends deliveries. Redirects are never followed. */
export class WebhookTransport extends Context.Service<
  WebhookTransport,
  { readonly send: (request: Outbound) => Effect.Effect<Outcome> }
>()("@vigil/core/WebhookTransport") {}
