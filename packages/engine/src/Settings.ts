/**
 * The settings a host reads from its environment, as one Effect `Config`: where ABIs come from, the mail relay and
 * the Telegram Bot API, how chains are followed and their nodes read, how on-chain activity and counterparty
 * exposure are read. Read through the ConfigProvider in context (the process's environment by default), so a host
 * or a test can give its own. A bad value fails with {@link InvalidSetting}, one line naming the variable.
 *
 * The variables that carry a chain id in their name (`VIGIL_RPC_URL_<chainId>`, `VIGIL_RPC_WS_URL_<chainId>`,
 * `VIGIL_CONFIRMATIONS_<chainId>`) cannot be listed by a Config (any chain id may be named): {@link perChain} reads
 * them from the environment's names, with the same checks and the same one-line failures.
 */
import { Exposure } from "@vigil/core"
import { Config, Data, Effect, Option, Schema } from "effect"

/** A setting that cannot be used: what is wrong, naming the variable. */
export class InvalidSetting extends Data.TaggedError("InvalidSetting")<{ readonly message: string }> {}

/** Whether `text` is a URL of one of `protocols`. */
export const isUrl = (text: string, protocols: ReadonlyArray<string>) =>
  URL.canParse(text) && protocols.includes(new URL(text).protocol)

/** A string checked by `check`, which names what is wrong (the failure is that text alone). */
const checked = (check: (text: string) => string | undefined) =>
  Schema.String.check(Schema.makeFilter((text: string) => check(text) ?? true))

/** What is wrong with `text` as `name`'s whole number from `min` to `max`, or undefined when nothing is. */
const notWhole = (name: string, min: number, max: number) => (text: string) =>
  /^[0-9]+$/.test(text) && Number(text) >= min && Number(text) <= max
    ? undefined
    : `invalid ${name}: ${text} is not a whole number from ${min} to ${max}`

/** `name`, a whole number from `min` to `max`; absent: none. */
export const whole = (name: string, min: number, max: number): Config.Config<Option.Option<number>> =>
  Config.schema(checked(notWhole(name, min, max)), name).pipe(Config.map(Number), Config.option)

/** `name`, an http(s) URL; empty when `empty` allows it (a service turned off); absent: none. */
const httpUrl = (name: string, options: { readonly empty: boolean }): Config.Config<Option.Option<string>> =>
  Config.schema(
    checked((text) =>
      (options.empty && text === "") || isUrl(text, ["http:", "https:"])
        ? undefined
        : `invalid ${name}: ${text} is not an http(s) URL`
    ),
    name
  ).pipe(Config.option)

/** `name`, any text; absent or empty: none. */
const text = (name: string): Config.Config<Option.Option<string>> =>
  Config.String(name).pipe(Config.option, Config.map(Option.filter((value) => value !== "")))

/** `name`, an amount in whole units (e.g. `0.1`); absent: none. */
const amount = (name: string): Config.Config<Option.Option<string>> =>
  Config.schema(
    checked((value) =>
      Exposure.amountPattern.test(value)
        ? undefined
        : `invalid ${name}: ${value} is not an amount in whole units (e.g. 0.1)`
    ),
    name
  ).pipe(Config.option)

/** A variable no longer read: refused, so a setting is never silently ignored. */
const retired = (name: string, instead: string): Config.Config<void> =>
  Config.schema(
    checked(() => `${name} is no longer read: ${instead}`),
    name
  ).pipe(
    Config.option,
    Config.map(() => {})
  )

/** How counterparty exposure is read. */
const exposureConfig = Config.all({
  budgetMillis: whole("VIGIL_EXPOSURE_BUDGET_MS", 50, 30_000),
  blocks: whole("VIGIL_EXPOSURE_BLOCKS", 1, 10_000_000),
  dustNative: amount("VIGIL_EXPOSURE_DUST_NATIVE"),
  dustToken: amount("VIGIL_EXPOSURE_DUST_TOKEN"),
  dustShare: retired(
    "VIGIL_EXPOSURE_DUST_SHARE",
    "the dust floor is an amount (VIGIL_EXPOSURE_DUST_NATIVE, VIGIL_EXPOSURE_DUST_TOKEN)"
  )
})

const smtp = Config.all({
  url: Config.schema(
    checked((value) =>
      value === "" || isUrl(value, ["smtp:", "smtps:"])
        ? undefined
        : "invalid VIGIL_SMTP_URL: expected smtp://[user:pass@]host[:port] or smtps://…"
    ),
    "VIGIL_SMTP_URL"
  ).pipe(Config.option),
  from: Config.String("VIGIL_SMTP_FROM").pipe(Config.option)
})

/** Every setting of the environment with a fixed name. */
export const config = Config.all({
  sourcifyUrl: httpUrl("VIGIL_SOURCIFY_URL", { empty: true }),
  etherscanUrl: httpUrl("VIGIL_ETHERSCAN_URL", { empty: true }),
  etherscanApiKey: text("VIGIL_ETHERSCAN_API_KEY"),
  smtp,
  telegramApiUrl: httpUrl("VIGIL_TELEGRAM_API_URL", { empty: true }),
  follow: Config.all({
    pollMillis: whole("VIGIL_FOLLOW_POLL_MS", 10, 600_000),
    batch: whole("VIGIL_FOLLOW_BATCH", 1, 1_000),
    defaultConfirmations: whole("VIGIL_CONFIRMATIONS", 0, 1_000),
    leaseMillis: whole("VIGIL_FOLLOW_LEASE_MS", 1_000, 600_000),
    instance: Config.schema(
      checked((value) =>
        /^[\x21-\x7e]{1,100}$/.test(value)
          ? undefined
          : "invalid VIGIL_INSTANCE: expected 1 to 100 printable characters without spaces"
      ),
      "VIGIL_INSTANCE"
    ).pipe(Config.option)
  }),
  rpc: Config.all({
    blocksPerBatch: whole("VIGIL_RPC_BATCH", 1, 100),
    inFlight: whole("VIGIL_RPC_IN_FLIGHT", 1, 16)
  }),
  activity: Config.all({ budgetMillis: whole("VIGIL_ACTIVITY_BUDGET_MS", 10, 10_000) }),
  exposure: exposureConfig
})

/** How counterparty exposure is read, as `Exposure.layer` takes it (over its defaults). */
export interface ExposureSettings {
  readonly budgetMillis?: number
  readonly blocks?: number
  readonly dustFloor?: Exposure.DustFloor
}

/** The settings of {@link config}, in the shapes the layers take. */
export interface Settings {
  readonly abiSources: {
    readonly sourcifyUrl?: string
    readonly etherscanUrl?: string
    readonly etherscanApiKey?: string
  }
  readonly smtp?: { readonly url: string; readonly from: string }
  readonly telegramApiUrl?: string
  readonly follow: {
    readonly pollMillis?: number
    readonly batch?: number
    readonly defaultConfirmations?: number
    readonly leaseMillis?: number
    readonly instance?: string
  }
  readonly rpc: { readonly blocksPerBatch?: number; readonly inFlight?: number }
  readonly activity: { readonly budgetMillis?: number }
  readonly exposure: ExposureSettings
}

/** The fields of `record` that are Some, as plain optional fields. */
const present = <R extends Record<string, Option.Option<unknown>>>(
  record: R
): { -readonly [K in keyof R]?: R[K] extends Option.Option<infer A> ? A : never } =>
  Object.fromEntries(Object.entries(record).flatMap(([k, v]) => (Option.isSome(v) ? [[k, v.value]] : []))) as {
    -readonly [K in keyof R]?: R[K] extends Option.Option<infer A> ? A : never
  }

/** The first line of a Config failure: the check's own text (naming the variable), or the variable and the issue. */
export const oneLine = (error: Config.ConfigError) =>
  error.message
    .replace(/^SchemaError\(/, "")
    .split("\n")[0]!
    .trim()

/** Reads {@link config} from the ConfigProvider in context. */
export const load: Effect.Effect<Settings, InvalidSetting> = Effect.gen(function* () {
  const read = yield* Effect.mapError(config, (error) => new InvalidSetting({ message: oneLine(error) }))
  let smtpSettings: Settings["smtp"]
  const url = Option.getOrUndefined(read.smtp.url)
  if (url !== undefined && url !== "") {
    const from = Option.getOrUndefined(read.smtp.from)?.trim()
    if (from === undefined || !/^[^@\s]+@[^@\s]+$|<[^@\s<>]+@[^@\s<>]+>$/.test(from))
      return yield* new InvalidSetting({
        message: "invalid VIGIL_SMTP_FROM: VIGIL_SMTP_URL needs a sender address, e.g. Vigil <alerts@example.com>"
      })
    smtpSettings = { url, from }
  }
  const telegram = Option.getOrUndefined(read.telegramApiUrl)
  return {
    abiSources: present({
      sourcifyUrl: read.sourcifyUrl,
      etherscanUrl: read.etherscanUrl,
      etherscanApiKey: read.etherscanApiKey
    }),
    ...(smtpSettings === undefined ? {} : { smtp: smtpSettings }),
    ...(telegram === undefined || telegram === "" ? {} : { telegramApiUrl: telegram }),
    follow: present(read.follow),
    rpc: present(read.rpc),
    activity: present(read.activity),
    exposure: exposureOf(read.exposure)
  }
})

const exposureOf = ({
  budgetMillis,
  blocks,
  dustNative,
  dustToken
}: Config.Success<typeof exposureConfig>): ExposureSettings => {
  const dustFloor =
    Option.isNone(dustNative) && Option.isNone(dustToken)
      ? undefined
      : { ...Exposure.defaultSettings.dustFloor, ...present({ native: dustNative, token: dustToken }) }
  return { ...present({ budgetMillis, blocks }), ...(dustFloor === undefined ? {} : { dustFloor }) }
}

/** Reads the exposure settings alone (what screening from the command line needs). */
export const loadExposure: Effect.Effect<ExposureSettings, InvalidSetting> = Effect.map(
  Effect.mapError(exposureConfig, (error) => new InvalidSetting({ message: oneLine(error) })),
  exposureOf
)

/** The settings named by chain: each chain's node over HTTP and over a websocket, and its confirmations. */
export interface PerChain {
  readonly rpcUrls: ReadonlyMap<number, string>
  readonly rpcWsUrls: ReadonlyMap<number, string>
  readonly confirmations: ReadonlyMap<number, number>
}

const perChainName = /^VIGIL_(RPC_URL|RPC_WS_URL|CONFIRMATIONS)_(.*)$/

/** Reads the variables named by chain from `env` (`process.env` by default). */
export const perChain = (
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<PerChain, InvalidSetting> =>
  Effect.gen(function* () {
    const rpcUrls = new Map<number, string>()
    const rpcWsUrls = new Map<number, string>()
    const confirmations = new Map<number, number>()
    for (const [name, value] of Object.entries(env)) {
      const m = perChainName.exec(name)
      if (m === null || value === undefined) continue
      const chainId = Number(m[2])
      if (!/^[1-9][0-9]*$/.test(m[2]!) || !Number.isSafeInteger(chainId))
        return yield* new InvalidSetting({ message: `invalid ${name}: the suffix must be a chain id (a whole number)` })
      if (m[1] === "RPC_URL") {
        if (!isUrl(value, ["http:", "https:"]))
          return yield* new InvalidSetting({ message: `invalid ${name}: ${value} is not an http(s) URL` })
        rpcUrls.set(chainId, value)
      } else if (m[1] === "RPC_WS_URL") {
        if (!isUrl(value, ["ws:", "wss:"]))
          return yield* new InvalidSetting({ message: `invalid ${name}: ${value} is not a ws(s) URL` })
        rpcWsUrls.set(chainId, value)
      } else {
        const problem = notWhole(name, 0, 1_000)(value)
        if (problem !== undefined) return yield* new InvalidSetting({ message: problem })
        confirmations.set(chainId, Number(value))
      }
    }
    return { rpcUrls, rpcWsUrls, confirmations }
  })
