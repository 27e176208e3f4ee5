/**
 * WebhookTransport on node:https. The SSRF guard runs inside the socket's own name lookup, so the address
 * checked is the address connected to (no window for DNS to change in between); redirects are not followed.
 * With `loopbackHttp` (development on one machine), plain HTTP goes to loopback addresses only, on node:http.
 * Statuses are classified by `WebhookTransport.classifyStatus`; a timeout, a network or TLS failure and an
 * address the guard refuses are all worth a retry (DNS and certificates change), with the reason in the detail.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { Agent as PlainAgent, request as plainRequest } from "node:http"
import { Agent, request } from "node:https"
import { isIP } from "node:net"
import { createSecureContext, rootCertificates } from "node:tls"
import { BoundedMemo, NetworkGuard, WebhookTransport } from "@vigil/core"
import { Data, Effect, Layer } from "effect"

/** Transport options. */
export interface Options {
  /** Hosts exempt from the public-address rule (tests, private deployments). */
  readonly allowHosts: ReadonlyArray<string>
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  readonly ca?: string
  /** Sockets kept open to one host; default 32 (as many as a key may have sends in flight by default). */
  readonly socketsPerHost?: number
  /** Plain HTTP to loopback addresses accepted (development on one machine). Default false. */
  readonly loopbackHttp?: boolean
}

/** The guard's refusal, handed to Node's lookup callback (which takes an Error) and recognised after it. */
class Blocked extends Data.TaggedError("Blocked")<{ readonly message: string }> {
  readonly code = "VIGIL_BLOCKED"
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | Array<LookupAddress>,
  family?: number
) => void

/** `forbidden` says why an address may not be connected to (undefined: it may). */
const guardedLookup =
  (forbidden: (hostname: string, address: string) => string | undefined) =>
  (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, [])
      for (const a of addresses) {
        const why = forbidden(hostname, a.address)
        if (why !== undefined)
          return callback(new Blocked({ message: `${hostname} resolves to ${a.address}, ${why}` }), [])
      }
      if (options.all) return callback(null, addresses)
      const first = addresses[0]
      return first === undefined
        ? callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), [])
        : callback(null, first.address, first.family)
    })
  }

const tlsCodes = /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|ERR_CERT)/

/** Where a URL sends a request, or why it may not: what every delivery to the URL repeats, worked out once. */
type Target =
  | { readonly refused: string }
  | { readonly hostname: string; readonly port: number; readonly path: string; readonly plain: boolean }

/** The guard's verdict on `url` before any lookup (scheme, credentials, a literal address), and its parts. */
const target = (options: Options, url: string): Target => {
  const checked = NetworkGuard.checkUrl(url, options.loopbackHttp === true)
  if ("reason" in checked) return { refused: checked.reason }
  const literal = isIP(checked.host) !== 0
  if (!checked.plain && literal && !NetworkGuard.allowed(options.allowHosts, checked.host)) {
    const why = NetworkGuard.forbiddenAddress(checked.host)
    if (why !== undefined) return { refused: `${checked.host} is ${why}` }
  }
  const parsed = new URL(checked.url)
  return {
    hostname: checked.host,
    port: parsed.port === "" ? (checked.plain ? 80 : 443) : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
    plain: checked.plain
  }
}

/** The transport layer. */
export const layer = (options: Options): Layer.Layer<WebhookTransport.WebhookTransport> =>
  Layer.effect(WebhookTransport.WebhookTransport)(
    Effect.acquireRelease(
      Effect.sync(() => ({
        agent: new Agent({
          keepAlive: true,
          maxSockets: options.socketsPerHost ?? 32,
          // A prebuilt context, not a `ca` list: the agent keys its socket pool by its options, and a list of
          // every root certificate would be concatenated into that key on every request.
          ...(options.ca === undefined
            ? {}
            : { secureContext: createSecureContext({ ca: [...rootCertificates, options.ca] }) })
        }),
        plainAgent: new PlainAgent({ keepAlive: true, maxSockets: options.socketsPerHost ?? 32 })
      })),
      ({ agent, plainAgent }) =>
        Effect.sync(() => {
          agent.destroy()
          plainAgent.destroy()
        })
    ).pipe(
      Effect.map(({ agent, plainAgent }) => {
        const lookup = guardedLookup((hostname, address) =>
          NetworkGuard.allowed(options.allowHosts, hostname) ? undefined : NetworkGuard.forbiddenAddress(address)
        )
        // Plain HTTP reaches loopback and nothing else, whatever a name resolves to.
        const loopbackOnly = guardedLookup((_, address) =>
          NetworkGuard.isLoopback(address) ? undefined : "not a loopback address"
        )
        // Destinations are few and every delivery to one repeats its URL: its verdict and parts are kept.
        const targets = BoundedMemo.make<string, Target>(1_024)
        return WebhookTransport.WebhookTransport.of({
          send: (outbound) =>
            Effect.callback<WebhookTransport.Outcome>((resume) => {
              const fail = (reason: "Timeout" | "Blocked" | "Network" | "Tls", message: string) =>
                resume(Effect.succeed({ _tag: "Retry", detail: `${reason}: ${message}` }))
              const to = targets.through(outbound.url, () => target(options, outbound.url))
              if ("refused" in to) return void fail("Blocked", to.refused)
              let settled = false
              const common = {
                hostname: to.hostname,
                port: to.port,
                path: to.path,
                method: "POST",
                headers: { ...outbound.headers, "content-length": Buffer.byteLength(outbound.body) }
              }
              const req = to.plain
                ? plainRequest({ ...common, protocol: "http:", agent: plainAgent, lookup: loopbackOnly as never })
                : request({ ...common, protocol: "https:", agent, lookup: lookup as never })
              const timer = setTimeout(() => {
                settled = true
                req.destroy()
                fail("Timeout", `no answer within ${outbound.timeoutMillis} ms`)
              }, outbound.timeoutMillis)
              req.on("response", (res) => {
                res.resume()
                res.on("end", () => {
                  if (settled) return
                  settled = true
                  clearTimeout(timer)
                  resume(Effect.succeed(WebhookTransport.classifyStatus(res.statusCode ?? 0)))
                })
                res.on("error", () => undefined)
              })
              req.on("error", (error: NodeJS.ErrnoException) => {
                if (settled) return
                settled = true
                clearTimeout(timer)
                if (error instanceof Blocked) fail("Blocked", error.message)
                else if (tlsCodes.test(error.code ?? "")) fail("Tls", `${error.code}: ${error.message}`)
                else fail("Network", error.code ? `${error.code}: ${error.message}` : error.message)
              })
              req.end(outbound.body)
              return Effect.sync(() => {
                settled = true
                clearTimeout(timer)
                req.destroy()
              })
            })
        })
      })
    )
  )
