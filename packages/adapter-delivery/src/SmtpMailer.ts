/**
 * Mailer on SMTP with nodemailer (a well-kept client: STARTTLS when the relay offers it, authentication, pooling
 * and the protocol's corner cases, which are not worth writing again). The relay is the operator's, given as a
 * URL (`smtp://user:pass@host:587`, `smtps://…:465`). A 5xx answer is permanent; a 4xx answer, a timeout or a
 * network failure is worth another attempt. nodemailer is loaded when a relay is configured, not at every start.
 */
import { Mailer, type WebhookTransport } from "@vigil/core"
import { Effect, Layer } from "effect"

/** The relay. */
export interface Options {
  /** `smtp://[user:pass@]host[:port]` or `smtps://…`. */
  readonly url: string
  /** The sender, e.g. `Vigil <alerts@example.com>`. */
  readonly from: string
}

/** What an SMTP failure means for a delivery. */
const classify = (error: unknown): WebhookTransport.Outcome => {
  const e = error as { responseCode?: number; code?: string; message?: string }
  const detail = `SMTP ${e.responseCode ?? e.code ?? "error"}: ${e.message ?? String(error)}`
  return typeof e.responseCode === "number" && e.responseCode >= 500
    ? { _tag: "Permanent", detail }
    : { _tag: "Retry", detail }
}

/** The mailer layer over one relay. */
export const layer = (options: Options): Layer.Layer<Mailer.Mailer> =>
  Layer.effect(Mailer.Mailer)(
    Effect.acquireRelease(
      Effect.promise(() => import("nodemailer")).pipe(
        Effect.map(({ createTransport }) =>
          createTransport(
            {
              url: options.url,
              // Timeouts of the connection, the relay's greeting and every socket operation: an attempt stays bounded.
              connectionTimeout: 10_000,
              greetingTimeout: 10_000,
              socketTimeout: 20_000
            },
            { from: options.from }
          )
        )
      ),
      (transport) => Effect.sync(() => transport.close())
    ).pipe(
      Effect.map((transport) =>
        Mailer.Mailer.of({
          configured: true,
          send: (mail) =>
            Effect.tryPromise({
              try: () =>
                transport.sendMail({
                  to: [...mail.to],
                  subject: mail.subject,
                  text: mail.text,
                  messageId: `<${mail.id}@vigil>`,
                  headers: { "X-Vigil-Delivery": mail.id }
                }),
              catch: classify
            }).pipe(
              Effect.map((info): WebhookTransport.Outcome =>
                info.accepted.length === 0
                  ? { _tag: "Permanent", detail: `SMTP: every recipient refused (${info.rejected.join(", ")})` }
                  : {
                      _tag: "Delivered",
                      detail: `SMTP ${info.response}${info.rejected.length > 0 ? `; refused ${info.rejected.join(", ")}` : ""}`
                    }
              ),
              Effect.timeoutOrElse({
                duration: mail.timeoutMillis * 3,
                orElse: () =>
                  Effect.fail<WebhookTransport.Outcome>({
                    _tag: "Retry",
                    detail: `SMTP timeout: no answer within ${mail.timeoutMillis * 3} ms`
                  })
              }),
              Effect.catch(Effect.succeed)
            )
        })
      )
    )
  )
