/**
 * The environment's settings read as one Config: each value in the shape its layer takes, absent ones left to the
 * defaults, and every bad value refused in one line naming its variable; the variables named by chain likewise.
 */
import { assert, describe, it } from "@effect/vitest"
import { Exposure } from "@vigil/core"
import { Settings } from "@vigil/engine"
import { ConfigProvider, Effect } from "effect"

/** The settings of `env`, empty values kept (as `vigil serve` reads them). */
const read = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.result(
      Effect.provideService(
        Settings.load,
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env, preserveEmptyStrings: true })
      )
    )
  )
const settings = (env: Record<string, string>) => {
  const result = read(env)
  if (result._tag === "Failure") throw new Error(result.failure.message)
  return result.success
}
const refusal = (env: Record<string, string>) => {
  const result = read(env)
  if (result._tag === "Success") throw new Error(`accepted: ${JSON.stringify(env)}`)
  return result.failure.message
}

describe("the environment's settings", () => {
  it("reads each setting into its layer's shape, and leaves out what is not set", () => {
    assert.deepStrictEqual(settings({}), { abiSources: {}, follow: {}, rpc: {}, activity: {}, exposure: {} })
    const all = settings({
      VIGIL_SOURCIFY_URL: "",
      VIGIL_ETHERSCAN_URL: "https://explorer.example/api",
      VIGIL_ETHERSCAN_API_KEY: "k",
      VIGIL_SMTP_URL: "smtp://relay.example:25",
      VIGIL_SMTP_FROM: " Vigil <alerts@example.com> ",
      VIGIL_TELEGRAM_API_URL: "http://127.0.0.1:9000",
      VIGIL_FOLLOW_POLL_MS: "250",
      VIGIL_FOLLOW_BATCH: "20",
      VIGIL_CONFIRMATIONS: "3",
      VIGIL_FOLLOW_LEASE_MS: "5000",
      VIGIL_INSTANCE: "east-1",
      VIGIL_RPC_BATCH: "5",
      VIGIL_RPC_IN_FLIGHT: "2",
      VIGIL_ACTIVITY_BUDGET_MS: "400",
      VIGIL_EXPOSURE_BUDGET_MS: "900",
      VIGIL_EXPOSURE_BLOCKS: "5000",
      VIGIL_EXPOSURE_DUST_TOKEN: "0.5"
    })
    assert.deepStrictEqual(all, {
      // Empty turns a service off: kept as empty, not taken for unset.
      abiSources: { sourcifyUrl: "", etherscanUrl: "https://explorer.example/api", etherscanApiKey: "k" },
      smtp: { url: "smtp://relay.example:25", from: "Vigil <alerts@example.com>" },
      telegramApiUrl: "http://127.0.0.1:9000",
      follow: { pollMillis: 250, batch: 20, defaultConfirmations: 3, leaseMillis: 5_000, instance: "east-1" },
      rpc: { blocksPerBatch: 5, inFlight: 2 },
      activity: { budgetMillis: 400 },
      exposure: { budgetMillis: 900, blocks: 5_000, dustFloor: { ...Exposure.defaultSettings.dustFloor, token: "0.5" } }
    })
  })

  it("refuses every bad value in one line naming its variable", () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{ VIGIL_FOLLOW_POLL_MS: "5" }, "invalid VIGIL_FOLLOW_POLL_MS: 5 is not a whole number from 10 to 600000"],
      [{ VIGIL_RPC_BATCH: "1.5" }, "invalid VIGIL_RPC_BATCH: 1.5 is not a whole number from 1 to 100"],
      [{ VIGIL_CONFIRMATIONS: "" }, "invalid VIGIL_CONFIRMATIONS:  is not a whole number from 0 to 1000"],
      [{ VIGIL_EXPOSURE_BLOCKS: "0" }, "invalid VIGIL_EXPOSURE_BLOCKS: 0 is not a whole number from 1 to 10000000"],
      [
        { VIGIL_EXPOSURE_DUST_NATIVE: "1e-3" },
        "invalid VIGIL_EXPOSURE_DUST_NATIVE: 1e-3 is not an amount in whole units (e.g. 0.1)"
      ],
      [
        { VIGIL_EXPOSURE_DUST_SHARE: "0.01" },
        "VIGIL_EXPOSURE_DUST_SHARE is no longer read: the dust floor is an amount (VIGIL_EXPOSURE_DUST_NATIVE, VIGIL_EXPOSURE_DUST_TOKEN)"
      ],
      [{ VIGIL_SOURCIFY_URL: "ftp://mirror" }, "invalid VIGIL_SOURCIFY_URL: ftp://mirror is not an http(s) URL"],
      [{ VIGIL_TELEGRAM_API_URL: "telegram" }, "invalid VIGIL_TELEGRAM_API_URL: telegram is not an http(s) URL"],
      [
        { VIGIL_SMTP_URL: "http://relay" },
        "invalid VIGIL_SMTP_URL: expected smtp://[user:pass@]host[:port] or smtps://…"
      ],
      [
        { VIGIL_SMTP_URL: "smtp://relay" },
        "invalid VIGIL_SMTP_FROM: VIGIL_SMTP_URL needs a sender address, e.g. Vigil <alerts@example.com>"
      ],
      [{ VIGIL_INSTANCE: "two words" }, "invalid VIGIL_INSTANCE: expected 1 to 100 printable characters without spaces"]
    ]
    for (const [env, expected] of cases) assert.strictEqual(refusal(env), expected, JSON.stringify(env))
  })

  it("reads the variables named by chain, refusing a suffix that is not a chain id and a bad value", () => {
    const named = Effect.runSync(
      Settings.perChain({
        VIGIL_RPC_URL_1: "http://127.0.0.1:8545",
        VIGIL_RPC_WS_URL_1: "ws://127.0.0.1:8546",
        VIGIL_CONFIRMATIONS_137: "12",
        PATH: "/bin"
      })
    )
    assert.deepStrictEqual(named, {
      rpcUrls: new Map([[1, "http://127.0.0.1:8545"]]),
      rpcWsUrls: new Map([[1, "ws://127.0.0.1:8546"]]),
      confirmations: new Map([[137, 12]])
    })
    const refused = (env: Record<string, string>) => Effect.runSync(Effect.flip(Settings.perChain(env))).message
    assert.strictEqual(
      refused({ VIGIL_RPC_URL_MAINNET: "http://127.0.0.1:8545" }),
      "invalid VIGIL_RPC_URL_MAINNET: the suffix must be a chain id (a whole number)"
    )
    assert.strictEqual(
      refused({ VIGIL_RPC_WS_URL_1: "http://127.0.0.1:8545" }),
      "invalid VIGIL_RPC_WS_URL_1: http://127.0.0.1:8545 is not a ws(s) URL"
    )
    assert.strictEqual(
      refused({ VIGIL_CONFIRMATIONS_1: "many" }),
      "invalid VIGIL_CONFIRMATIONS_1: many is not a whole number from 0 to 1000"
    )
  })
})
