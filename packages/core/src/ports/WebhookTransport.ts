/** Port: one HTTPS POST of a signed delivery, with its outcome classified for the retry policy. */
import { Context, type Effect, Schema } from "effect"

/** A request that got no HTTP status: timed out, refused by the SSRF guard, or failed on the network or TLS. */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  reason: Schema.Literals(["Timeout", "Blocked", "Network", "Tls"]),
  message: Schema.String
}) {}

/** One outbound request. */
export interface Outbound {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMillis: number
}

/** Sends deliveries. Redirects are never followed (a 3xx is an answer like any other). */
export class WebhookTransport extends Context.Service<
  WebhookTransport,
  { readonly send: (request: Outbound) => Effect.Effect<{ readonly status: number }, TransportError> }
>()("@vigil/core/WebhookTransport") {}
