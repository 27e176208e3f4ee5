/** Test helper: the real server on 127.0.0.1:<free port> over a real SQLite file, with keys and lists to set up. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type GatedServer, VigilServer } from "@vigil/adapter-http"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { ApiKeys, Engine, type Exposure, type Follower, type Intel, Ingestion } from "@vigil/core"
import { Outbound } from "@vigil/engine"
import { Clock, Context, Effect, Layer, Logger, Stream } from "effect"
import { HttpServer } from "effect/http"

/** The server, the core services and the SQLite adapter on a fresh database file, all gone with the scope. */
export const layer = (
  options: {
    readonly maxBodyBytes?: number
    readonly connections?: Partial<GatedServer.Limits>
    readonly hotRoutes?: boolean
    readonly webhooks?: Engine.WebhookSettings
    readonly outbound?: Outbound.Options
    readonly follow?: Partial<Follower.Settings>
    readonly exposure?: Partial<Exposure.Settings>
    readonly consoleDir?: string
    /** How long a write waits for another connection's lock (default the database's). */
    readonly busyTimeoutMillis?: number
    /**
     * Where the server's log lines go (`<level>: <message>`) instead of the test's output: for a test that
     * provokes warnings, which it then asserts, so that a warning printed in a test log means something.
     */
    readonly logs?: Array<string>
  } = {}
) => {
  const server = Layer.unwrap(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "vigil-http-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(
      Effect.map((dir) =>
        VigilServer.layer({
          host: "127.0.0.1",
          port: 0,
          ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
          ...(options.connections === undefined ? {} : { connections: options.connections }),
          ...(options.hotRoutes === undefined ? {} : { hotRoutes: options.hotRoutes }),
          ...(options.consoleDir === undefined ? {} : { consoleDir: options.consoleDir })
        }).pipe(
          Layer.provideMerge(
            Engine.layer({
              ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
              ...(options.follow === undefined ? {} : { follow: options.follow }),
              ...(options.exposure === undefined ? {} : { exposure: options.exposure })
            }).pipe(Layer.provide(Outbound.layer(options.outbound)))
          ),
          Layer.provideMerge(
            SqliteAdapter.layer({
              filename: join(dir, "vigil.db"),
              ...(options.busyTimeoutMillis === undefined ? {} : { busyTimeoutMillis: options.busyTimeoutMillis })
            })
          )
        )
      )
    )
  )
  const logs = options.logs
  if (logs === undefined) return server
  const collect = Logger.make(({ logLevel, message }) => {
    logs.push(`${logLevel}: ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
  })
  return server.pipe(Layer.provide(Logger.layer([collect])))
}

/** The server's base URL. */
export const baseUrl = Effect.map(Effect.service(HttpServer.HttpServer), (server) =>
  HttpServer.formatAddress(server.address)
)

/** A response, read whole. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: any
}

/** One real HTTP request to the server. `json` sets the body and its content type. */
export const call = (
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string; readonly json?: unknown } = {}
) =>
  Effect.flatMap(baseUrl, (url) =>
    Effect.promise(async (): Promise<Reply> => {
      const body = options.json !== undefined ? JSON.stringify(options.json) : options.body
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
          ...options.headers
        },
        ...(body === undefined ? {} : { body })
      })
      const text = await response.text()
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, headers: response.headers, text, json }
    })
  )

/** `POST /api/v3/intel` with a bearer key. */
export const v3 = (key: string, body: unknown) =>
  call("POST", "/api/v3/intel", { headers: { authorization: `Bearer ${key}` }, json: body })

/** `GET /api/v2/intel?address=` with an x-api-key. */
export const v2 = (key: string, address: string) =>
  call("GET", `/api/v2/intel?address=${encodeURIComponent(address)}`, { headers: { "x-api-key": key } })

/** Issues a key and returns it in plain text. */
export const issue = (request: ApiKeys.IssueRequest) =>
  Effect.flatMap(Effect.service(ApiKeys.ApiKeys), (keys) =>
    // Tests make their calls back to back: a key's rate is what a test says, else high enough not to matter.
    keys.issue({ qps: 1_000, ...request })
  ).pipe(Effect.map((i) => i.key))

/**
 * Ingests `addresses` as one snapshot of the address list `list` with `category`, dated `asOf`; the list is
 * declared official unless `options.authority` says otherwise.
 */
export const ingest = (
  list: string,
  category: Intel.Category,
  addresses: ReadonlyArray<string>,
  asOf: string,
  options: { readonly allowShrink?: boolean; readonly authority?: Intel.Authority } = {}
) =>
  Ingestion.Ingest.run(
    {
      kind: "address-list",
      list,
      source: "TEST",
      mode: "snapshot",
      origin: "test",
      asOf,
      authority: "official",
      defaultAuthority: "curated",
      ...options
    },
    Ingestion.AddressList.make({ list, category }),
    Stream.make(new TextEncoder().encode(addresses.join("\n") + "\n"))
  )

/** Moves the clock of {@link withSteppedClock} forward. */
class SteppedClock extends Context.Service<
  SteppedClock,
  { readonly skip: (millis: number) => Effect.Effect<void>; readonly align: Effect.Effect<void> }
>()("@vigil/adapter-http/test/SteppedClock") {}

/**
 * Runs `body` (and the server it provides) on a clock that follows real time but that the test moves forward
 * with {@link skip} and {@link alignToSecond}: a per-second window is crossed or started, not waited for.
 * Sleeps stay real, so the server's own timers are untouched.
 */
export const withSteppedClock = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.service(Clock.Clock), (live) => {
    let offset = 1_020 - (live.currentTimeMillisUnsafe() % 1_000)
    const nanos = () => BigInt(offset) * 1_000_000n
    const clock: Clock.Clock = {
      currentTimeMillisUnsafe: () => live.currentTimeMillisUnsafe() + offset,
      currentTimeMillis: Effect.sync(() => live.currentTimeMillisUnsafe() + offset),
      currentTimeNanosUnsafe: () => live.currentTimeNanosUnsafe() + nanos(),
      currentTimeNanos: Effect.sync(() => live.currentTimeNanosUnsafe() + nanos()),
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe() + nanos(),
      monotonicTimeNanos: Effect.sync(() => live.monotonicTimeNanosUnsafe() + nanos()),
      sleep: (duration) => live.sleep(duration)
    }
    const stepper = SteppedClock.of({
      skip: (millis) => Effect.sync(() => void (offset += millis)),
      align: Effect.sync(() => void (offset += 1_020 - ((live.currentTimeMillisUnsafe() + offset) % 1_000)))
    })
    return body.pipe(
      Effect.provideService(SteppedClock, stepper),
      Effect.provideService(Clock.Clock, clock)
    ) as Effect.Effect<A, E, Exclude<R, SteppedClock>>
  })

/** Moves the stepped clock forward by `millis`. */
export const skip = (millis: number) => Effect.flatMap(Effect.service(SteppedClock), (c) => c.skip(millis))

/** Moves the stepped clock to 20 ms after the next second boundary, so what follows shares one second's window. */
export const alignToSecond = Effect.flatMap(Effect.service(SteppedClock), (c) => c.align)
