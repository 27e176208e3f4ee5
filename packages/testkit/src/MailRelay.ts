/** A mail relay on loopback (smtp-server) that keeps every message it is given: email channels' receiver in tests. */
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/** A running relay: its `smtp://` URL, the messages it kept, and how to stop it. */
export interface MailRelay {
  readonly url: string
  readonly mails: Array<Mail>
  /** Resolves once the messages kept satisfy `predicate` (checked as each arrives); fails after `ms`. */
  readonly until: (predicate: (mails: ReadonlyArray<Mail>) => boolean, ms?: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** A message as the relay was given it: its envelope and its raw text. */
export interface Mail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** Starts a relay on 127.0.0.1 on a free port, without TLS or authentication. */
export const start = (): Promise<MailRelay> =>
  new Promise((resolve) => {
    const mails: Array<Mail> = []
    const waiting = new Set<() => void>()
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData(stream, session, callback) {
        let raw = ""
        stream.setEncoding("utf8")
        stream.on("data", (c: string) => (raw += c))
        stream.on("end", () => {
          mails.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw
          })
          for (const check of waiting) check()
          callback()
        })
      }
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
        mails,
        until: (predicate, ms = 15_000) =>
          new Promise((done, fail) => {
            if (predicate(mails)) return done()
            const timer = setTimeout(() => {
              waiting.delete(check)
              fail(new Error(`mail relay: condition not met within ${ms} ms; got ${mails.length} messages`))
            }, ms)
            const check = () => {
              if (!predicate(mails)) return
              clearTimeout(timer)
              waiting.delete(check)
              done()
            }
            waiting.add(check)
          }),
        close: () => new Promise((done) => server.close(() => done()))
      })
    )
  })
