/**
 * A Node HTTP server that never leaves a request unanswered while it starts. Node accepts connections as soon as
 * the port listens, but the router's request handler is attached a moment later; a request that arrives in
 * between is held and handed to the handler once it is attached, and past a bound (or when the server closes
 * first) answered 503 with `Retry-After`.
 */
import { readFileSync } from "node:fs"
import { type IncomingMessage, Server, type ServerResponse } from "node:http"

/** How long a client may take, and how many may be connected at once. */
export interface Limits {
  /** A connection that has not sent a request's headers this long after it began them is closed. */
  readonly headersTimeoutMillis: number
  /** A request not received in full this long after it began is answered 408 and its connection closed. */
  readonly requestTimeoutMillis: number
  /** Connections beyond this many are refused at once, so open descriptors stay below the process's limit. */
  readonly maxConnections: number
}

/**
 * The default connection cap: the process's open-file limit (Linux: `/proc/self/limits`) less room for the
 * database, logs and outbound webhooks, at most 16,384; 1,024 less that room when the limit cannot be read.
 */
export const defaultMaxConnections = (): number => {
  const reserve = 256
  let soft = 1_024 + reserve
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"))
    if (line?.[1] !== undefined) soft = line[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(line[1])
  } catch {
    // not Linux: keep the conservative default
  }
  return Math.max(16, Math.min(16_384, soft - reserve))
}

/** How many requests are held while the server starts; more are answered 503 at once. */
export const maxHeld = 1_024

const starting = JSON.stringify({
  status: "unavailable",
  reason: "Starting",
  message: "the server is starting; retry in a moment"
})

const answerStarting = (res: ServerResponse) => {
  if (res.headersSent || res.destroyed) return
  res.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(starting),
    "retry-after": "1",
    connection: "close"
  })
  res.end(starting)
}

/** The server, with `limits` applied (Node checks the timeouts every quarter of the header timeout, at most 1 s). */
export class GatedServer extends Server {
  #held: Array<readonly [IncomingMessage, ServerResponse]> = []
  constructor(limits: Limits) {
    super({
      headersTimeout: limits.headersTimeoutMillis,
      requestTimeout: limits.requestTimeoutMillis,
      connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(limits.headersTimeoutMillis / 4)))
    })
    this.maxConnections = limits.maxConnections
    this.on("newListener", (event: string) => {
      if (event !== "request" || this.#held.length === 0) return
      // The listener is added right after this event: hand the held requests over on the next turn.
      setImmediate(() => {
        const held = this.#held
        this.#held = []
        for (const [req, res] of held) this.emit("request", req, res)
      })
    })
  }
  /** Stops listening; requests still held (no handler came) are answered 503 so their connections can end. */
  override close(callback?: (error?: Error) => void): this {
    const held = this.#held
    this.#held = []
    for (const [, res] of held) answerStarting(res)
    return super.close(callback)
  }
  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event === "request" && this.listenerCount("request") === 0) {
      const req = args[0] as IncomingMessage
      const res = args[1] as ServerResponse
      if (this.#held.length < maxHeld) this.#held.push([req, res])
      else answerStarting(res)
      return true
    }
    return super.emit(event, ...args)
  }
}
