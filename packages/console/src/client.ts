/**
 * Every call the console makes: the public API, typed by the OpenAPI document the server publishes, with the key
 * the analyst signed in with (kept in sessionStorage only, so it is gone with the tab).
 */
import createClient from "openapi-fetch"
import type { components, paths } from "./api"

export type Schemas = components["schemas"]
export type IntelResult = Schemas["V3IntelResult"]
export type Signal = IntelResult["signals"][number]
export type BatchItem = Schemas["V3BatchResult"]["results"][number]
export type RuleCheck = Schemas["RuleCheckAnswer"]
export type Bot = Schemas["Bot"]
export type ChannelRequest = Schemas["ChannelRequest"]
export type Alert = Schemas["Alert"]
export type AbiValue = Schemas["AbiValue"]
export type Contract = Schemas["Contract"]
export type Channel = Schemas["Channel"]

/** The most addresses one batch request takes (the API's limit). */
export const batchLimit = 25

const storageKey = "vigil.console.key"

/** The key signed in with, if any. */
export const storedKey = (): string | undefined => sessionStorage.getItem(storageKey) ?? undefined
export const signIn = (key: string) => sessionStorage.setItem(storageKey, key)
export const signOut = () => sessionStorage.removeItem(storageKey)

/**
 * `fetch`, asked again when the key's per-second rate is spent (429): the console makes short bursts (a page's
 * reads, checks as you type), so it waits the `retry-after` the server gives (at most 2 s), up to three times.
 */
const patientFetch = async (request: Request): Promise<Response> => {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(request.clone())
    if (response.status !== 429 || attempt === 3) return response
    const seconds = Number(response.headers.get("retry-after") ?? "1")
    await new Promise((resolve) => setTimeout(resolve, Math.min(2, Number.isFinite(seconds) ? seconds : 1) * 1000))
  }
}

/** A client of this server (same origin), for one key. */
export const clientFor = (key: string) => {
  const client = createClient<paths>({ baseUrl: location.origin, fetch: patientFetch })
  return {
    screen: (address: string, options: { readonly asOf?: string; readonly includeDetails?: boolean }) =>
      client.POST("/api/v3/intel", {
        headers: { authorization: `Bearer ${key}` },
        body: {
          address,
          options: {
            include_details: options.includeDetails ?? true,
            ...(options.asOf === undefined || options.asOf === "" ? {} : { as_of: options.asOf })
          }
        }
      }),
    batch: (addresses: ReadonlyArray<string>, options: { readonly asOf?: string }) =>
      client.POST("/api/v3/intel/batch", {
        headers: { authorization: `Bearer ${key}` },
        body: {
          addresses: [...addresses],
          options: {
            batch_size: 10,
            ...(options.asOf === undefined || options.asOf === "" ? {} : { as_of: options.asOf })
          }
        }
      }),
    lists: () => client.GET("/v1/lists", { headers: { "x-api-key": key } }),
    bots: () => client.GET("/v1/bots", { headers: { "x-api-key": key } }),
    setActive: (botId: string, active: boolean) =>
      client.PUT("/v1/bots/{botId}", {
        headers: { "x-api-key": key },
        params: { path: { botId } },
        body: { active }
      }),
    registerContract: (contract: {
      readonly chainId: number
      readonly contractAddress: string
      readonly label: string
      readonly abi?: string
    }) =>
      client.POST("/v1/contracts", {
        headers: { "x-api-key": key },
        body: {
          chainId: contract.chainId,
          contractAddress: contract.contractAddress,
          label: contract.label,
          ...(contract.abi === undefined || contract.abi.trim() === "" ? {} : { ABI: contract.abi })
        }
      }),
    channels: () => client.GET("/v1/notifications", { headers: { "x-api-key": key } }),
    createChannel: (channel: ChannelRequest) =>
      client.POST("/v1/notifications", { headers: { "x-api-key": key }, body: channel }),
    testChannel: (channelId: string) =>
      client.POST("/v1/notifications/{channelId}/test", {
        headers: { "x-api-key": key },
        params: { path: { channelId } }
      }),
    createBot: (bot: {
      readonly botName: string
      readonly chainId: number
      readonly severity: "Critical" | "High" | "Medium" | "Low"
      readonly active: boolean
      readonly expressions: ReadonlyArray<string>
      readonly notifications: ReadonlyArray<string>
    }) =>
      client.POST("/v1/bots", {
        headers: { "x-api-key": key },
        body: {
          botName: bot.botName,
          chainId: bot.chainId,
          severity: bot.severity,
          active: bot.active,
          watchRule: { expressions: [...bot.expressions] },
          notifications: [...bot.notifications]
        }
      }),
    updateBot: (
      botId: string,
      bot: {
        readonly botName: string
        readonly severity: "Critical" | "High" | "Medium" | "Low"
        readonly expressions: ReadonlyArray<string>
        readonly notifications: ReadonlyArray<string>
      }
    ) =>
      client.PUT("/v1/bots/{botId}", {
        headers: { "x-api-key": key },
        params: { path: { botId } },
        body: {
          botName: bot.botName,
          severity: bot.severity,
          watchRule: { expressions: [...bot.expressions] },
          notifications: [...bot.notifications]
        }
      }),
    alerts: (botId: string) =>
      client.GET("/v1/bots/{botId}/alerts", {
        headers: { "x-api-key": key },
        params: { path: { botId }, query: { limit: 50 } }
      }),
    redeliver: (botId: string, alertId: string) =>
      client.POST("/v1/bots/{botId}/alerts/{alertId}/redeliver", {
        headers: { "x-api-key": key },
        params: { path: { botId, alertId } }
      }),
    /** The key's contracts, of one chain or (without `chainId`) of every chain. */
    contracts: (chainId?: number) =>
      client.GET("/v1/contracts", {
        headers: { "x-api-key": key },
        params: { query: chainId === undefined ? {} : { chainId } }
      }),
    deleteContract: (contractId: string, force = false) =>
      client.DELETE("/v1/contracts/{contractId}", {
        headers: { "x-api-key": key },
        params: { path: { contractId }, query: force ? { force: "true" } : {} }
      }),
    deleteChannel: (channelId: string) =>
      client.DELETE("/v1/notifications/{channelId}", {
        headers: { "x-api-key": key },
        params: { path: { channelId } }
      }),
    deleteBot: (botId: string) =>
      client.DELETE("/v1/bots/{botId}", { headers: { "x-api-key": key }, params: { path: { botId } } }),
    /** Checks `expressions` on the chain as a bot would take them; with the settings of `bot` when it is edited. */
    checkRule: (chainId: number, expressions: ReadonlyArray<string>, bot?: Bot) =>
      client.POST("/v1/rules/check", {
        headers: { "x-api-key": key },
        body: {
          chainId,
          expressions: [...expressions],
          ...(bot === undefined
            ? {}
            : {
                watchRuleType: bot.watchRule.watchRuleType,
                options: {
                  ...(bot.options.literalDefs === undefined ? {} : { literalDefs: bot.options.literalDefs }),
                  ...(bot.options.ruleScope === undefined ? {} : { ruleScope: bot.options.ruleScope })
                }
              })
        }
      }),
    status: () => client.GET("/api/v2/status", { headers: { "x-api-key": key } })
  }
}

/** How each refusal starts, in words: what the analyst can do about it, not an HTTP code. */
const lead: Readonly<Record<number, string>> = {
  400: "Not accepted",
  401: "This key is not accepted",
  403: "Not allowed for this key",
  404: "Not found",
  408: "The request took too long",
  409: "Not possible now",
  413: "Too large",
  422: "Could not be done",
  429: "Too many requests; wait a moment",
  502: "The chain's node did not answer",
  503: "The server is busy; try again shortly",
  504: "The server took too long"
}

/**
 * The message of an error answer in words, whatever its flavour: what went wrong and, where the server said, what
 * was tried (a contract registered without an ABI) and what to do.
 */
export const errorMessage = (error: unknown, status: number): string => {
  const start = lead[status] ?? (status >= 500 ? "The server could not answer" : "Refused")
  const body = typeof error === "object" && error !== null ? (error as Record<string, unknown>) : {}
  const message = typeof body.message === "string" ? body.message : undefined
  const details =
    typeof body.details === "object" && body.details !== null ? (body.details as Record<string, unknown>) : {}
  const tried = Array.isArray(details.tried) ? details.tried.filter((t): t is string => typeof t === "string") : []
  if (tried.length > 0)
    return `No ABI was found for this contract. Tried: ${tried.join("; ")}. Paste its ABI (JSON) to register it, or check the address and chain id.`
  return message === undefined ? `${start}.` : `${start}: ${message}`
}
