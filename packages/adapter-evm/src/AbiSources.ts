/**
 * The verified-source services ABIs are fetched from, over HTTPS (or HTTP for a local mirror): Sourcify's v2 API
 * and Etherscan-compatible explorer APIs. Their URLs and keys are the operator's configuration, so the webhook
 * SSRF guard does not apply to them. Each answer is validated as an ABI before it is trusted.
 */
import { Abi, AbiSource } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"

type AbiSourceError = AbiSource.AbiSourceError
const AbiSourceError = AbiSource.AbiSourceError

/** Options of the services. */
export interface Options {
  /** Sourcify's server. Default `https://sourcify.dev/server`; empty: not used. */
  readonly sourcifyUrl?: string
  /** An Etherscan-compatible API (v2, with `chainid`). Default `https://api.etherscan.io/v2/api`; empty: not used. */
  readonly etherscanUrl?: string
  readonly etherscanApiKey?: string
  /** Per request. Default 15,000. */
  readonly timeoutMillis?: number
}

const Json = Schema.fromJsonString(Schema.Unknown)
const decodeJson = Schema.decodeUnknownEffect(Json)
const decodeAbi = Schema.decodeUnknownEffect(Abi.Abi)

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** A GET answered: status and body text, failures classified for `source`. */
const get = (source: string, url: string, timeoutMillis: number) =>
  Effect.gen(function* () {
    const fail = (reason: AbiSource.AbiSourceError["reason"], message: string) =>
      new AbiSourceError({ reason, source, message })
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(url, {
          headers: { accept: "application/json" },
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMillis)])
        }),
      catch: (e) =>
        e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")
          ? fail("Timeout", `no answer within ${timeoutMillis} ms`)
          : fail("Unavailable", `cannot be reached (${causeOf(e)})`)
    })
    const text = yield* Effect.tryPromise({
      try: () => response.text(),
      catch: (e) => fail("Unavailable", `the answer was cut off (${causeOf(e)})`)
    })
    if (response.status === 429) return yield* fail("RateLimited", "answered HTTP 429 (too many requests)")
    if (response.status >= 500) return yield* fail("Unavailable", `answered HTTP ${response.status}`)
    return { status: response.status, text }
  })

/** An ABI as the service gave it (an array, or a JSON string of one), validated. */
const abiOf = (source: string, raw: unknown) =>
  Effect.gen(function* () {
    const value = typeof raw === "string" ? yield* Effect.orElseSucceed(decodeJson(raw), () => raw) : raw
    return yield* Effect.mapError(
      decodeAbi(value),
      (e) =>
        new AbiSourceError({
          reason: "Invalid",
          source,
          message: `its ABI is not a valid ABI: ${e.message.split("\n")[0]}`
        })
    )
  })

/** Sourcify v2: `GET /v2/contract/{chainId}/{address}?fields=abi`; 200 with `abi`, 404 when not verified. */
export const sourcify = (baseUrl: string, timeoutMillis = 15_000): AbiSource.Source => ({
  name: "sourcify",
  lookup: (chainId, address) =>
    Effect.gen(function* () {
      const url = `${baseUrl.replace(/\/+$/, "")}/v2/contract/${chainId}/${address}?fields=abi`
      const { status, text } = yield* get("sourcify", url, timeoutMillis)
      if (status === 404) return { _tag: "NotVerified", detail: "not verified" } as const
      const invalid = (message: string) => new AbiSourceError({ reason: "Invalid", source: "sourcify", message })
      if (status !== 200) return yield* invalid(`answered HTTP ${status}`)
      const body = yield* Effect.mapError(decodeJson(text), () => invalid("its answer is not JSON"))
      if (!isObject(body) || !("abi" in body)) return yield* invalid("its answer has no abi")
      return { _tag: "Verified", abi: yield* abiOf("sourcify", body.abi) } as const
    })
})

/**
 * An Etherscan-compatible API: `?chainid=&module=contract&action=getabi&address=&apikey=`. Always HTTP 200:
 * `status` "1" with the ABI as a JSON string in `result`, or "0" with a text (not verified, a rate limit, a bad
 * key); some explorers answer `result: null`.
 */
export const etherscan = (baseUrl: string, apiKey: string | undefined, timeoutMillis = 15_000): AbiSource.Source => ({
  name: "etherscan",
  lookup: (chainId, address) =>
    Effect.gen(function* () {
      const url = new URL(baseUrl)
      url.searchParams.set("chainid", String(chainId))
      url.searchParams.set("module", "contract")
      url.searchParams.set("action", "getabi")
      url.searchParams.set("address", address)
      if (apiKey !== undefined && apiKey !== "") url.searchParams.set("apikey", apiKey)
      const { status, text } = yield* get("etherscan", url.href, timeoutMillis)
      const invalid = (message: string) => new AbiSourceError({ reason: "Invalid", source: "etherscan", message })
      if (status !== 200) return yield* invalid(`answered HTTP ${status}`)
      const body = yield* Effect.mapError(decodeJson(text), () => invalid("its answer is not JSON"))
      if (!isObject(body)) return yield* invalid("its answer is not an object")
      const result = body.result
      if (String(body.status) === "1" && result !== null && result !== undefined)
        return { _tag: "Verified", abi: yield* abiOf("etherscan", result) } as const
      const detail = typeof result === "string" && result !== "" ? result : String(body.message ?? "no ABI")
      if (/rate limit|too many/i.test(detail))
        return yield* new AbiSourceError({ reason: "RateLimited", source: "etherscan", message: detail })
      if (/api ?key/i.test(detail)) return yield* invalid(detail)
      return { _tag: "NotVerified", detail } as const
    })
})

const causeOf = (e: unknown): string => {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e
  return cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(cause)
}

/** The services of `options`, Sourcify first. */
export const make = (options: Options = {}): AbiSource.AbiSource["Service"] => {
  const timeout = options.timeoutMillis ?? 15_000
  const sourcifyUrl = options.sourcifyUrl ?? "https://sourcify.dev/server"
  const etherscanUrl = options.etherscanUrl ?? "https://api.etherscan.io/v2/api"
  return {
    sources: [
      ...(sourcifyUrl === "" ? [] : [sourcify(sourcifyUrl, timeout)]),
      ...(etherscanUrl === "" ? [] : [etherscan(etherscanUrl, options.etherscanApiKey, timeout)])
    ]
  }
}

/** The services as a layer. */
export const layer = (options: Options = {}): Layer.Layer<AbiSource.AbiSource> =>
  Layer.succeed(AbiSource.AbiSource)(make(options))
