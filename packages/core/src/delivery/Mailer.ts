/**
 * Port: sends one email through the operator's mail relay, answered with what it means for the delivery, as
 * `WebhookTransport` answers for a request. Recipients are the user's; the relay is the operator's.
 */
import { Context, Effect, Layer } from "effect"
import type { Outcome } from "./WebhookTransport.ts"

/** One message. */
export interface Mail {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  /** Stable across attempts (sent as the Message-ID's local part), so a repeated attempt can be recognised. */
  readonly id: string
  readonly timeoutMillis: number
}

/** Sends email. */
export class Mailer extends Context.Service<
  Mailer,
  {
    /** Whether a relay is configured: without one, email channels cannot be created. */
    readonly configured: boolean
    readonly send: (mail: Mail) => Effect.Effect<Outcome>
  }
>()("@vigil/core/Mailer") {
  /** No relay: nothing can be sent (a queued email is dead-lettered with that reason). */
  static readonly none: Layer.Layer<Mailer> = Layer.succeed(Mailer)({
    configured: false,
    send: () => Effect.succeed({ _tag: "Permanent", detail: "no mail relay is configured on this server" })
  })
}
