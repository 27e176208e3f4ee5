/** `vigil serve`: the reference HTTP server on the embedded SQLite storage. */
import { NodeDigest, NodeMac } from "@vigil/adapter-delivery"
import { limits } from "@vigil/adapter-http/Limits"
import { Engine, NetworkGuard, WebhookDispatcher } from "@vigil/core"
import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { Outbound, Refresh, Settings } from "@vigil/engine"
import { Cause, Config, ConfigProvider, Duration, Effect, Layer, Option, Predicate, Schedule, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure } from "./CommandFailed.ts"
import * as Store from "./Store.ts"

/** Default database file, relative to the working directory. */
export const defaultDatabase = "./.vigil/vigil.db"

/**
 * `--db PATH|URL`, else `VIGIL_DB`, else `./.vigil/vigil.db`; shared by every command that opens the database
 * (see {@link Store}).
 */
export const databaseFlag = Flag.String("db").pipe(
  Flag.withDescription(
    "SQLite database file (created with its folder on first use), or a postgres:// URL (env VIGIL_DB; default ./.vigil/vigil.db)"
  ),
  Flag.withFallbackConfig(Config.String("VIGIL_DB").pipe(Config.withDefault(defaultDatabase)))
)

const host = Flag.String("host").pipe(
  Flag.withDescription("Address to listen on (env VIGIL_HOST; default 127.0.0.1, this machine only)"),
  Flag.withFallbackConfig(Config.String("VIGIL_HOST").pipe(Config.withDefault("127.0.0.1")))
)

const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))

const port = Flag.Int("port").pipe(
  Flag.withSchema(Port),
  Flag.withDescription("TCP port to listen on, 0-65535, 0 picks a free one (env VIGIL_PORT; default 8080)"),
  Flag.withFallbackConfig(Config.schema(Port, "VIGIL_PORT").pipe(Config.withDefault(8080)))
)

/** An integer flag within `range`, falling back to the environment variable `env`, then to `fallback`. */
const bounded = (
  name: string,
  env: string,
  range: { readonly minimum: number; readonly maximum: number },
  fallback: number,
  description: string
) => {
  const schema = Schema.Int.check(Schema.isBetween(range))
  return Flag.Int(name).pipe(
    Flag.withSchema(schema),
    Flag.withDescription(`${description} (${range.minimum}-${range.maximum}; env ${env}; default ${fallback})`),
    Flag.withFallbackConfig(Config.schema(schema, env).pipe(Config.withDefault(fallback)))
  )
}

export const chainsFile = Flag.String("chains").pipe(
  Flag.withDescription(
    'JSON file of chains followed: {"chains":[{"chainId","rpcUrl","wsUrl"?,"confirmations"?}]}; VIGIL_RPC_URL_<chainId> and the like override it (env VIGIL_CHAINS_FILE)'
  ),
  Flag.withFallbackConfig(Config.String("VIGIL_CHAINS_FILE")),
  Flag.optional
)

const maxBodyBytes = bounded(
  "max-body-bytes",
  "VIGIL_MAX_BODY_BYTES",
  limits.maxBodyBytes,
  limits.maxBodyBytes.default,
  "Largest request body accepted, in bytes; larger ones get 413"
)
const headersTimeout = bounded(
  "headers-timeout-ms",
  "VIGIL_HEADERS_TIMEOUT_MS",
  limits.headersTimeoutMillis,
  limits.headersTimeoutMillis.default,
  "A client that has not sent its request headers within this many ms is disconnected"
)
const requestTimeout = bounded(
  "request-timeout-ms",
  "VIGIL_REQUEST_TIMEOUT_MS",
  limits.requestTimeoutMillis,
  limits.requestTimeoutMillis.default,
  "A request not received in full within this many ms is answered 408"
)
// No fixed default: the server derives it from the process's open-file limit when it starts (not on every command).
const connectionsSchema = Schema.Int.check(Schema.isBetween(limits.maxConnections))
const maxConnections = Flag.Int("max-connections").pipe(
  Flag.withSchema(connectionsSchema),
  Flag.withDescription(
    `Open connections at most; more are refused (${limits.maxConnections.minimum}-${limits.maxConnections.maximum}; default: the open-file limit less 256, at most 16384)`
  ),
  Flag.withFallbackConfig(Config.schema(connectionsSchema, "VIGIL_MAX_CONNECTIONS")),
  Flag.optional
)

const Millis = (min: number, max: number) => Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max }))

/** Webhook settings, from the environment only (see the README's configuration table). */
const webhookConfig = Config.all({
  allowHosts: Config.String("VIGIL_WEBHOOK_ALLOW_HOSTS").pipe(
    Config.withDefault(""),
    Config.map((list) =>
      list
        .split(",")
        .map((h) => h.trim())
        .filter((h) => h !== "")
    )
  ),
  caFile: Config.String("VIGIL_WEBHOOK_CA_FILE").pipe(Config.option),
  loopbackHttp: Config.schema(Schema.Literals(["0", "1"]), "VIGIL_WEBHOOK_LOOPBACK_HTTP").pipe(
    Config.withDefault("0"),
    Config.map((v) => v === "1")
  ),
  timeoutMillis: Config.schema(Millis(100, 120_000), "VIGIL_WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  retries: Config.schema(Millis(0, 20), "VIGIL_WEBHOOK_RETRIES").pipe(Config.withDefault(3)),
  backoffMillis: Config.schema(Millis(1, 3_600_000), "VIGIL_WEBHOOK_BACKOFF_MS").pipe(Config.withDefault(1_000)),
  perKey: Config.schema(Millis(1, 256), "VIGIL_WEBHOOK_PER_KEY").pipe(
    Config.withDefault(WebhookDispatcher.defaultSettings.perKey)
  ),
  perDestination: Config.schema(Millis(1, 256), "VIGIL_WEBHOOK_PER_DESTINATION").pipe(
    Config.withDefault(WebhookDispatcher.defaultSettings.perDestination)
  )
})

/** The chains file (`--chains`, `VIGIL_CHAINS_FILE`): each chain's node, and how long to wait for confirmations. */
const ChainsFile = Schema.fromJsonString(
  Schema.Struct({
    chains: Schema.Array(
      Schema.Struct({
        chainId: Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER)),
        rpcUrl: Schema.String,
        wsUrl: Schema.optionalKey(Schema.String),
        confirmations: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000 })))
      })
    )
  })
)

/** A schema issue on one line: `chains[0].rpcUrl: expected string`. */
const oneLine = (message: string) => {
  const [what, where] = message.split(/\n\s*at /)
  const path = (where ?? "")
    .trim()
    .replace(/\["([^"]*)"\]/g, ".$1")
    .replace(/^\./, "")
  const text = (what ?? "").replace(/\s+/g, " ").trim()
  return `${path === "" ? "" : `${path}: `}${text.charAt(0).toLowerCase()}${text.slice(1)}`
}

/** The chains of the chains file, when one is given; a clear line naming the file and the entry otherwise. */
const readChains = (path: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) => new CommandFailed({ message: `cannot read the chains file ${path}: ${(e as Error).message}` })
    })
    const invalid = (detail: string) => new CommandFailed({ message: `invalid chains file ${path}: ${detail}` })
    const { chains } = yield* Schema.decodeUnknownEffect(ChainsFile)(text, { onExcessProperty: "error" }).pipe(
      Effect.mapError((e) => invalid(oneLine(e.message)))
    )
    for (const [i, c] of chains.entries()) {
      if (chains.findIndex((d) => d.chainId === c.chainId) !== i)
        return yield* invalid(`chains[${i}].chainId: chain ${c.chainId} is listed twice`)
      if (!isUrl(c.rpcUrl, ["http:", "https:"]))
        return yield* invalid(`chains[${i}].rpcUrl: ${c.rpcUrl} is not an http(s) URL`)
      if (c.wsUrl !== undefined && !isUrl(c.wsUrl, ["ws:", "wss:"]))
        return yield* invalid(`chains[${i}].wsUrl: ${c.wsUrl} is not a ws(s) URL`)
    }
    return chains
  })

const { isUrl } = Settings

/**
 * The folder of the console's build (the `@vigil/console` package's `dist/`), or undefined when it has not been
 * built: the server then runs without `/console/`.
 */
const consoleBuild = (isBuilt: (dir: string) => boolean): string | undefined => {
  try {
    const dir = dirname(fileURLToPath(import.meta.resolve("@vigil/console/dist/index.html")))
    return isBuilt(dir) ? dir : undefined
  } catch {
    return undefined
  }
}

/** The environment's settings (`Settings.config`), empty values kept: an empty URL turns its service off. */
const environment = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ preserveEmptyStrings: true }))

/** A setting that cannot be used, as the command's one line. */
const invalidSetting = (e: Settings.InvalidSetting) => new CommandFailed({ message: e.message })

/**
 * How counterparty exposure is read: `VIGIL_EXPOSURE_BUDGET_MS`, `VIGIL_EXPOSURE_BLOCKS`, and the dust floor in whole
 * units, `VIGIL_EXPOSURE_DUST_NATIVE` and `VIGIL_EXPOSURE_DUST_TOKEN`.
 */
export const exposureSettings = (): Effect.Effect<Settings.ExposureSettings, CommandFailed> =>
  environment(Effect.mapError(Settings.loadExposure, invalidSetting))

/**
 * The chains' nodes: a `--chains` file's, then `VIGIL_RPC_URL_<chainId>` (HTTP) and `VIGIL_RPC_WS_URL_<chainId>`
 * (new heads), each checked; a websocket without an HTTP URL for its chain is refused.
 */
export const readNodes = Effect.fnUntraced(function* (chainsFile: string | undefined) {
  const chains = chainsFile === undefined ? [] : yield* readChains(chainsFile)
  const named = yield* Effect.mapError(Settings.perChain(), invalidSetting)
  const rpcUrls = new Map<number, string>([...chains.map((c) => [c.chainId, c.rpcUrl] as const), ...named.rpcUrls])
  const rpcWsUrls = new Map<number, string>([
    ...chains.flatMap((c) => (c.wsUrl === undefined ? [] : [[c.chainId, c.wsUrl] as const])),
    ...named.rpcWsUrls
  ])
  for (const chainId of rpcWsUrls.keys())
    if (!rpcUrls.has(chainId))
      return yield* new CommandFailed({
        message: `invalid VIGIL_RPC_WS_URL_${chainId}: chain ${chainId} has no VIGIL_RPC_URL_${chainId} (blocks are read over HTTP)`
      })
  return { rpcUrls, rpcWsUrls, chains, confirmations: named.confirmations }
})

/**
 * Monitoring's outbound settings, from the environment only (`Settings.config`): the verified-source services ABIs
 * are fetched from (`VIGIL_SOURCIFY_URL`, `VIGIL_ETHERSCAN_URL`, empty to turn one off; `VIGIL_ETHERSCAN_API_KEY`),
 * each chain's node (`VIGIL_RPC_URL_<chainId>`, and `VIGIL_RPC_WS_URL_<chainId>` for new heads), the mail relay of
 * email channels (`VIGIL_SMTP_URL`, `VIGIL_SMTP_FROM`), the Telegram Bot API (`VIGIL_TELEGRAM_API_URL`), and
 * following chains (`VIGIL_FOLLOW_POLL_MS`, `VIGIL_FOLLOW_BATCH`, `VIGIL_CONFIRMATIONS`,
 * `VIGIL_CONFIRMATIONS_<chainId>`; with several instances on one database, `VIGIL_INSTANCE` names this one, default
 * `host:pid`, and `VIGIL_FOLLOW_LEASE_MS` is how long a chain's lease lives unrenewed, default three polls and at
 * least 3 s), and how blocks are read from nodes (`VIGIL_RPC_BATCH` blocks a request, `VIGIL_RPC_IN_FLIGHT` requests
 * at once). A chains file gives the nodes and confirmations of many chains at once; a variable naming a chain
 * overrides it.
 */
export const loadMonitoringOptions = Effect.fnUntraced(function* (chainsFile: string | undefined) {
  const settings = yield* environment(Effect.mapError(Settings.load, invalidSetting))
  const { rpcUrls, rpcWsUrls, chains, confirmations } = yield* readNodes(chainsFile)
  const follow = {
    ...settings.follow,
    instance: settings.follow.instance ?? `${hostname()}:${process.pid}`,
    digest: NodeDigest.sha256Hex,
    confirmations: Object.fromEntries([
      ...chains.flatMap((c) => (c.confirmations === undefined ? [] : [[c.chainId, c.confirmations] as const])),
      ...confirmations
    ])
  }
  return {
    outbound: {
      abiSources: settings.abiSources,
      rpcUrls,
      rpcWsUrls,
      rpc: settings.rpc,
      ...(settings.smtp === undefined ? {} : { smtp: settings.smtp })
    },
    follow,
    activity: settings.activity,
    exposure: settings.exposure,
    ...(settings.telegramApiUrl === undefined ? {} : { telegramApiUrl: settings.telegramApiUrl })
  }
})

const loadWebhookOptions = Effect.fnUntraced(function* (chainsFile: string | undefined, host: string) {
  const config = yield* webhookConfig.pipe(
    Effect.mapError(
      (error) => new CommandFailed({ message: `invalid webhook configuration: ${error.message.replace(/\s+/g, " ")}` })
    )
  )
  // Plain HTTP to this machine is for development: granted only to a server nobody else can reach.
  if (config.loopbackHttp && !NetworkGuard.isLoopback(host))
    return yield* new CommandFailed({
      message: `VIGIL_WEBHOOK_LOOPBACK_HTTP=1 needs the server on loopback (--host 127.0.0.1, ::1 or localhost), not ${host}`
    })
  const caFile = Option.getOrUndefined(config.caFile)
  const ca =
    caFile === undefined
      ? undefined
      : yield* Effect.try({
          try: () => readFileSync(caFile, "utf8"),
          catch: (cause) =>
            new CommandFailed({
              message: `cannot read VIGIL_WEBHOOK_CA_FILE ${caFile}: ${Predicate.isError(cause) ? cause.message : String(cause)}`
            })
        })
  const monitoring = yield* loadMonitoringOptions(chainsFile)
  const outbound: Outbound.Options = {
    allowHosts: config.allowHosts,
    ...(config.loopbackHttp ? { loopbackHttp: true } : {}),
    // A key's destinations may share a host: as many sockets to it as the key may have sends in flight.
    socketsPerHost: config.perKey,
    ...(ca === undefined ? {} : { ca }),
    ...monitoring.outbound
  }
  const webhooks: Engine.WebhookSettings = {
    allowHosts: config.allowHosts,
    ...(config.loopbackHttp ? { loopbackHttp: true } : {}),
    delivery: {
      timeoutMillis: config.timeoutMillis,
      retries: config.retries,
      backoffMillis: config.backoffMillis,
      // At least twice a key's share in all, so a key that holds all of its slots leaves room for others.
      concurrency: Math.max(WebhookDispatcher.defaultSettings.concurrency, 2 * config.perKey),
      perKey: config.perKey,
      perDestination: config.perDestination,
      mac: NodeMac.mac,
      ...(monitoring.telegramApiUrl === undefined ? {} : { telegramApiUrl: monitoring.telegramApiUrl })
    }
  }
  return {
    outbound,
    webhooks,
    follow: monitoring.follow,
    activity: monitoring.activity,
    exposure: monitoring.exposure,
    monitoring
  }
})

/** `VIGIL_REFRESH_SDN_URL`: where the SDN Advanced XML is fetched from (default OFAC's own URL). */
const sdnUrlConfig = Config.String("VIGIL_REFRESH_SDN_URL").pipe(Config.option)

/** What a refresh of the official lists reads: the SDN's URL, the chains' nodes and how far behind each head. */
export const refreshSettings = Effect.fnUntraced(function* (
  monitoring: Effect.Success<ReturnType<typeof loadMonitoringOptions>>,
  sdnUrl: Option.Option<string>
) {
  const url = Option.isSome(sdnUrl)
    ? sdnUrl
    : yield* sdnUrlConfig.pipe(Effect.mapError(() => new CommandFailed({ message: "invalid VIGIL_REFRESH_SDN_URL" })))
  if (Option.isSome(url) && !isUrl(url.value, ["http:", "https:"]))
    return yield* new CommandFailed({ message: `invalid SDN URL: ${url.value} is not an http(s) URL` })
  const { follow } = monitoring
  return {
    ...(Option.isSome(url) ? { sdnUrl: url.value } : {}),
    rpcUrls: monitoring.outbound.rpcUrls,
    confirmations: (chainId: number) => follow.confirmations[chainId] ?? follow.defaultConfirmations
  } satisfies Refresh.Settings
})

/** `VIGIL_REFRESH_HOURS`: refresh the official lists every so many hours while serving (unset: never). */
const refreshHours = Settings.whole("VIGIL_REFRESH_HOURS", 1, 720).pipe(
  Effect.mapError((e) => new CommandFailed({ message: Settings.oneLine(e) }))
)

/** Refreshes the official lists now and every `hours` after, logging one line per list; never fails. */
const refreshing = (settings: Refresh.Settings, hours: number) =>
  Layer.effectDiscard(
    Effect.forkScoped(
      Refresh.run(settings).pipe(
        Effect.flatMap((reports) =>
          Effect.forEach(reports, (r) => (r.status === "failed" ? Effect.logWarning(r.line) : Effect.logInfo(r.line)), {
            discard: true
          })
        ),
        // Whatever goes wrong in one round, the next one is still made.
        Effect.catchCause((cause) => Effect.logError(`refresh: ${Cause.pretty(cause).split("\n")[0]}`)),
        Effect.repeat(Schedule.spaced(Duration.hours(hours)))
      )
    )
  )

/** `VIGIL_HOT_ROUTES`: `off` sends every request through the HttpApi router (see `HotRoutes`). */
const loadHotRoutes = Config.schema(Schema.Literals(["on", "off"]), "VIGIL_HOT_ROUTES").pipe(
  Config.withDefault("on"),
  Effect.map((value) => value === "on"),
  Effect.mapError(() => new CommandFailed({ message: "invalid VIGIL_HOT_ROUTES: expected on or off" }))
)

/** Serves until SIGINT or SIGTERM, then closes the listener and the database. */
export const command = Command.make(
  "serve",
  { db: databaseFlag, host, port, maxBodyBytes, headersTimeout, requestTimeout, maxConnections, chains: chainsFile },
  ({ db, host, port, maxBodyBytes, headersTimeout, requestTimeout, maxConnections, chains }) =>
    Effect.gen(function* () {
      if (headersTimeout > requestTimeout) {
        return yield* new CommandFailed({
          message: `the headers timeout (${headersTimeout} ms) must not exceed the request timeout (${requestTimeout} ms)`
        })
      }
      const [{ outbound, webhooks, follow, activity, exposure, monitoring }, hotRoutes, hours] = yield* Effect.all([
        loadWebhookOptions(Option.getOrUndefined(chains), host),
        loadHotRoutes,
        refreshHours
      ])
      const refresh = Option.isSome(hours)
        ? refreshing(yield* refreshSettings(monitoring, Option.none()), hours.value)
        : Layer.empty
      // The HTTP server's module is loaded by this command only: every other command starts without it.
      const { Console, VigilServer } = yield* Effect.promise(() => import("@vigil/adapter-http"))
      const consoleDir = consoleBuild(Console.isBuilt)
      return yield* Layer.launch(
        VigilServer.layer({
          host,
          port,
          maxBodyBytes,
          hotRoutes,
          detail: `storage: ${Store.describe(db)}`,
          connections: {
            headersTimeoutMillis: headersTimeout,
            requestTimeoutMillis: requestTimeout,
            ...Option.match(maxConnections, { onNone: () => ({}), onSome: (n) => ({ maxConnections: n }) })
          },
          ...(consoleDir === undefined ? {} : { consoleDir })
        }).pipe(
          Layer.provide(
            Engine.layer({ webhooks, follow, activity, exposure }).pipe(Layer.provide(Outbound.layer(outbound)))
          ),
          Layer.merge(refresh),
          Layer.provideMerge(Store.all(db, true))
        )
      )
    }).pipe(
      Effect.catchTags({
        StoreError: databaseFailure(db),
        ServeError: (error) =>
          Effect.fail(
            new CommandFailed({
              message: `cannot listen on ${host}:${port}: ${
                Predicate.isError(error.cause) ? error.cause.message : String(error.cause)
              }`
            })
          )
      })
    )
).pipe(
  Command.withDescription("Run the HTTP server (on the SQLite file or PostgreSQL database of --db / VIGIL_DB)"),
  Command.withExamples([
    { command: "vigil serve", description: "Serve on 127.0.0.1:8080 with ./.vigil/vigil.db" },
    {
      command: "VIGIL_DB=postgres://vigil@db/vigil vigil serve --host 0.0.0.0",
      description: "One of several instances on PostgreSQL"
    }
  ])
)
