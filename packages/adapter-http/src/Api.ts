/** The HTTP contract of the reference server, shared by the server, its clients and the OpenAPI document. */
import { type ApiKeyStore, Intel, Version } from "@vigil/core"
import { Context, Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import { FlavourOfGroup } from "./Responses.ts"
import * as S from "./Schemas.ts"

/** What the edge itself can answer on any route: a body over the limit, a bug. */
const edgeErrors = (errors: typeof S.V3Errors) => [errors.PayloadTooLarge, errors.InternalError] as const

/** What a route that reads a JSON body can also answer: it is not JSON. */
const bodyErrors = (errors: typeof S.V3Errors) => [...edgeErrors(errors), errors.UnsupportedMediaType] as const

/** The errors of a charged screening route. */
const intelErrors = (errors: typeof S.V3Errors) =>
  [errors.ValidationError, errors.TooManyRequests, errors.ServiceUnavailable] as const

/** Body of `GET /health` when the server can serve: storage read, written and verified, no recent failure. */
export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  storage: Schema.Struct({
    kind: Schema.String,
    schema_version: Schema.Int,
    write: Schema.Literals(["ok", "busy"]).annotate({
      description: "The write probe went through, or another writer holds the lock (writes wait for it)."
    })
  }),
  uptime_seconds: Schema.Finite,
  instance: Schema.String.annotate({
    description:
      "This instance's name as a holder of chains' leases (VIGIL_INSTANCE; by default host:pid): instances on one database follow each chain once, and each says here who follows what"
  }),
  calibration: Schema.optionalKey(
    Schema.Struct({
      model: Schema.Int,
      as_of: Schema.String,
      fitted_at: Schema.String,
      age_days: Schema.Int.annotate({ description: "Days from the day of its lists to today (UTC)." })
    }).annotate({
      description:
        "The newest calibration model (enable_agentic grades with the newest model of the screened day or before): how old the lists it was fitted on are. Absent when none is stored."
    })
  ),
  lists: Schema.Array(
    Schema.Struct({
      list: Schema.String,
      authority: Intel.Authority,
      as_of: Schema.String.annotate({ description: "The date of the list's current version." }),
      age_days: Schema.Int.annotate({ description: "Days from that date to today (UTC)." }),
      note: Schema.optionalKey(
        Schema.String.annotate({
          description:
            "The last refresh or ingest of the list that failed or was refused, and why, until a version is committed after it; the list in force keeps serving."
        })
      )
    })
  ).annotate({ description: "Every stored list, official ones first: how old each is." }),
  follow: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        chainId: Schema.Int,
        state: Schema.Literals(["starting", "following", "catching up", "backing off", "halted", "standby"]).annotate({
          description:
            "standby: another instance holds the chain's lease and follows it (holder); this one takes the chain over if that lease runs out (holderUntil)"
        }),
        holder: Schema.optionalKey(
          Schema.String.annotate({ description: "The instance that follows the chain (this one unless standby)" })
        ),
        holderUntil: Schema.optionalKey(
          Schema.String.annotate({ description: "When the holder's lease runs out unless renewed (ISO 8601)" })
        ),
        heads: Schema.Literals(["polling", "subscribed"]).annotate({
          description:
            "subscribed: the node announces new heads over its websocket (VIGIL_RPC_WS_URL_<chainId>) and each starts a step at once; polling goes on beside it"
        }),
        headsError: Schema.optionalKey(
          Schema.String.annotate({ description: "Why the configured new-heads subscription is not working (retried)" })
        ),
        bots: Schema.Int.annotate({ description: "Active bots of the chain" }),
        head: Schema.optionalKey(Schema.Int),
        cursor: Schema.optionalKey(Schema.Int.annotate({ description: "The last block processed" })),
        lag: Schema.optionalKey(Schema.Int.annotate({ description: "Blocks between the head and the cursor" })),
        lastError: Schema.optionalKey(
          Schema.String.annotate({
            description:
              "Why the follower is not moving: its last step failed (backing off), or the node lacks what it needs (a block it announced, a head below the blocks processed)"
          })
        ),
        stalledSince: Schema.optionalKey(
          Schema.String.annotate({ description: "Since when the follower has not moved for that reason (ISO 8601)" })
        ),
        skipped: Schema.optionalKey(
          Schema.Array(Schema.String).annotate({ description: "Active bots not run, and why" })
        ),
        lastProgress: Schema.optionalKey(Schema.String)
      })
    ).annotate({
      description:
        "Each chain with an active bot: followed here, or in standby while another instance on the same database follows it. Trouble with a chain's node is reported here (and in /metrics), not as unreadiness: the API still serves. A halted chain (reorganised deeper than the hashes kept) makes /health 503 until it is re-anchored (vigil follow reset)."
    })
  )
}).annotate({ identifier: "Health" })

/** Body of `GET /health` (status 503) when the server cannot serve, or cannot be trusted to. */
export const HealthUnavailable = Schema.Struct({
  status: Schema.Literals(["unavailable", "degraded"]).annotate({
    description:
      "unavailable: storage cannot be read or written. degraded: it answers, but verification found damage, a request met a storage failure in the last 30 s (waiting out another process's write lock, Busy, is contention and does not count), or a chain's follower is halted (reason FollowHalted)."
  }),
  version: Schema.String,
  reason: Schema.String,
  message: Schema.String,
  problems: Schema.optionalKey(Schema.Array(Schema.String))
}).pipe(HttpApiSchema.status(503), Schema.annotate({ identifier: "HealthUnavailable" }))

/** Body of `GET /health/live`: the process runs and answers. */
export const Liveness = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  uptime_seconds: Schema.Finite
}).annotate({ identifier: "Liveness" })

/** Operational endpoints: liveness, readiness and metrics. */
export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(
    HttpApiEndpoint.get("health", "/health", {
      success: Health,
      error: [HealthUnavailable, ...edgeErrors(S.V3Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Readiness",
        description:
          "200 when the server can serve: storage answers a real read and a real write, its verification at start found nothing wrong, and no request met a storage failure in the last 30 s (a request that waited out another process's write lock got 503 Busy; that is contention, not a failure of the store). 503 otherwise, saying why."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("live", "/health/live", {
      success: Liveness,
      error: edgeErrors(S.V3Errors)
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Liveness",
        description: "200 while the process runs and answers requests, whatever the state of storage."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4" })),
      error: edgeErrors(S.V3Errors)
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Prometheus metrics",
        description:
          "Requests by route and status, a latency histogram, quota rejections by limit, result-cache hits and misses."
      })
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "system", description: "Liveness and readiness, and metrics for Prometheus." })
  ) {}

/** The API key of the current request, once authenticated. */
export class CurrentClient extends Context.Service<CurrentClient, ApiKeyStore.ApiKeyRecord>()(
  "@vigil/adapter-http/CurrentClient"
) {}

/** v3 authentication: `Authorization: Bearer <API_KEY>` (an `x-api-key` header is accepted too). */
export class BearerAuth extends HttpApiMiddleware.Service<BearerAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/BearerAuth",
  { security: { bearer: HttpApiSecurity.bearer }, error: [S.V3Errors.Unauthorized, S.V3Errors.ServiceUnavailable] }
) {}

/** v2 authentication: `x-api-key: <API_KEY>` (an `Authorization: Bearer` header is accepted too). */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/ApiKeyAuth",
  {
    security: { apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }) },
    error: [S.V2Errors.Unauthorized, S.V2Errors.ServiceUnavailable]
  }
) {}

/**
 * Monitoring (`/v1`) authentication: `x-api-key` (an `Authorization: Bearer` header is accepted too), and each
 * request charged to the key's per-second rate (`qps`; no address volume): 429 past it.
 */
export class KeyRateAuth extends HttpApiMiddleware.Service<KeyRateAuth, { provides: CurrentClient }>()(
  "@vigil/adapter-http/KeyRateAuth",
  {
    security: { apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }) },
    error: [S.V2Errors.Unauthorized, S.V2Errors.TooManyRequests, S.V2Errors.ServiceUnavailable]
  }
) {}

/** v3 intelligence (spec §4.1, §4.2). */
export class V3Group extends HttpApiGroup.make("v3")
  .add(
    HttpApiEndpoint.post("intel", "/api/v3/intel", {
      payload: S.V3Request,
      success: HttpApiSchema.WithHeaders(S.V3Result, S.cachedHeaders),
      error: [...intelErrors(S.V3Errors), ...bodyErrors(S.V3Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Screen one address",
        description:
          "Risk score, band, flags, entity, labels, signals with evidence and a recommendation. Costs 1 address of the key's quota. Results scoring 60 or more are cached for 10 minutes; any change of the lists empties the cache."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("batch", "/api/v3/intel/batch", {
      payload: S.BatchRequest,
      success: HttpApiSchema.WithHeaders(S.BatchResult, S.chargedHeaders),
      error: [...intelErrors(S.V3Errors), ...bodyErrors(S.V3Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Screen 1 to 25 addresses",
        description:
          "Results in input order; an invalid address is a failed item counted in summary.failed. Costs one request of the per-second rate and one address of the daily and monthly quotas per address."
      })
    )
  )
  .middleware(BearerAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "v3 intelligence",
      description: "Risk score, band, flags, entity, labels and signals of one address or a batch. Bearer key."
    })
  ) {}

/** v2 intelligence (spec §4.3). */
export class V2Group extends HttpApiGroup.make("v2")
  .add(
    HttpApiEndpoint.get("intel", "/api/v2/intel", {
      query: S.V2Query,
      success: HttpApiSchema.WithHeaders(S.V2Result, S.cachedHeaders),
      error: [...intelErrors(S.V2Errors), ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Screen one address (v2)",
        description: "The v2 envelope and bands. Costs 1 address. Complete results are cached for 24 hours."
      })
    )
  )
  .middleware(ApiKeyAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "v2 intelligence",
      description: "The v2 envelope of one address's screening. `x-api-key`."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** v2 webhooks and asynchronous intelligence (spec §4.5, §4.6). */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("register", "/api/v2/webhooks", {
      payload: S.WebhookRequest,
      success: S.WebhookRegistered.pipe(HttpApiSchema.status(201)),
      error: [S.InvalidWebhookUrl, S.WebhookConflict, S.V2Errors.ServiceUnavailable, ...bodyErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Register a webhook",
          description:
            "At most 5 per key; HTTPS only, and the host must resolve to public addresses (checked again at every delivery). The answer carries the signing secret, once."
        })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v2/webhooks", {
      success: S.WebhookList,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(OpenApi.annotations({ summary: "List the key's webhooks" }))
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.get("stats", "/api/v2/webhooks/stats", {
      success: S.WebhookStats,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Delivery statistics",
          description: "Delivered, pending and dead-lettered (failed) deliveries per webhook."
        })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.delete("remove", "/api/v2/webhooks/:webhookId", {
      params: { webhookId: Schema.String },
      success: S.WebhookDeleted,
      error: [S.WebhookNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({ summary: "Delete a webhook", description: "Its undelivered deliveries are dropped." })
      )
      .middleware(KeyRateAuth)
  )
  .add(
    HttpApiEndpoint.post("intel", "/api/v2/intel/webhook", {
      payload: S.AsyncIntelRequest,
      success: HttpApiSchema.WithHeaders(S.AsyncAccepted.pipe(HttpApiSchema.status(202)), S.chargedHeaders),
      error: [S.WebhookConflict, ...intelErrors(S.V2Errors), ...bodyErrors(S.V2Errors)]
    })
      .annotateMerge(
        OpenApi.annotations({
          summary: "Screen one address asynchronously",
          description:
            "Answers 202 once one delivery per active webhook is stored; each is signed (Standard Webhooks) and delivered at least once with retries. Costs 1 address."
        })
      )
      .middleware(ApiKeyAuth)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "v2 webhooks",
      description:
        "Webhooks of a key and asynchronous screening delivered to them, signed. `x-api-key`. Managing webhooks is charged to the key's per-second rate (qps; 429 past it), screening to its quotas as well."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** v2 status (spec §4.4): reads the key itself, so an invalid or expired key still gets an answer. */
export class StatusGroup extends HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.get("status", "/api/v2/status", {
      success: S.StatusResult,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Key status, limits and usage",
        description:
          "Send the key in `x-api-key` (or `Authorization: Bearer`). Always 200: `status` is authenticated, invalid or expired. Not charged."
      })
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "status", description: "The state, limits and usage of the presented key." })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** Checking watch rules before a bot carries them (not in the spec; `vigil rules check` over HTTP). */
export class RulesGroup extends HttpApiGroup.make("rules")
  .add(
    HttpApiEndpoint.post("check", "/v1/rules/check", {
      payload: S.RuleCheckRequest,
      success: S.RuleCheckAnswer,
      error: [S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...bodyErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Check a watch rule",
        description:
          "Against the key's contracts on the chain, exactly as creating a bot would (one rule, the expressions AND-ed, its transactions joined). Always 200 for a well-formed body: `ok` says whether it checks, with its normal form, or each problem at its expression and offset with the names probably meant. Stores nothing; one request of the key's rate."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: rules",
      description: "Watch rules checked as you write them. `x-api-key` or `Authorization: Bearer`."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** The lists screening consults (not in the spec). Either key header; failures in the v2 shape. */
export class ListsGroup extends HttpApiGroup.make("lists")
  .add(
    HttpApiEndpoint.get("list", "/v1/lists", {
      success: S.ListsAnswer,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The lists screening consults",
        description:
          "Every stored list by name, with its versions, dates, authority, counts and verification state. Any key may read them; it costs one request of the key's per-second rate, no quota."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "lists",
      description: "The intelligence lists behind every answer. `x-api-key` or `Authorization: Bearer`."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** Monitoring: contracts (spec §2.9, §4.7). Either key header; failures in the v2 shape. */
export class ContractsGroup extends HttpApiGroup.make("contracts")
  .add(
    HttpApiEndpoint.post("register", "/v1/contracts", {
      payload: S.ContractRequest,
      success: S.ContractAnswer.pipe(HttpApiSchema.status(201)),
      error: [
        S.V2Errors.ValidationError,
        S.ContractLabelTaken,
        S.KeyLimitReached,
        S.AbiNotFound,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Register a contract",
        description:
          "With its ABI, or without one: a verified ABI is then fetched (Sourcify, then an Etherscan-compatible explorer), and an EIP-1967 proxy (its implementation slot read through the chain's node) gets its implementation's ABI, which the answer says. 422 when no ABI is found anywhere, naming what was tried."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/contracts", {
      query: S.ContractListQuery,
      success: S.ContractList,
      error: [S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "List the key's contracts", description: "Oldest first." }))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/contracts/:contractId", {
      params: { contractId: Schema.String },
      success: S.ContractAnswer,
      error: [S.ContractNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Read a contract" }))
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/contracts/:contractId", {
      params: { contractId: Schema.String },
      query: S.ContractRemoveQuery,
      success: S.ContractRemoved,
      error: [
        S.ContractNotFound,
        S.ContractInUse,
        S.V2Errors.ValidationError,
        S.V2Errors.ServiceUnavailable,
        ...edgeErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a contract",
        description:
          "Refused with 409 while bots of the key use it (their rules would no longer check), naming them; with force=true it is deleted and the answer lists the bots it broke."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: contracts",
      description:
        "Contracts watched by bots, by label, with their ABIs. `x-api-key` or `Authorization: Bearer`; another key's contract is a 404."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** Monitoring: bots (spec §2.8, §4.7). Either key header; failures in the v2 shape. */
export class BotsGroup extends HttpApiGroup.make("bots")
  .add(
    HttpApiEndpoint.post("create", "/v1/bots", {
      payload: S.BotCreate,
      success: S.BotAnswer.pipe(HttpApiSchema.status(201)),
      error: [
        S.V2Errors.ValidationError,
        S.KeyLimitReached,
        S.ChainUnavailable,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a bot",
        description:
          "botName, chainId and watchRule.expressions are required; defaults: active true, severity Medium, watchRuleType advanced, no notifications, topLevelTxBlockRange 100. The expressions are one rule, AND-ed (txN is the same transaction in each); each is checked against the key's contracts on the chain: a 400 carries each problem with its expression, character offset, message and candidates (details.problems). An active bot watches from the block after the chain node's head as it answers (watchingFrom): every transaction mined after the answer; a node that does not answer is a 502 and nothing is stored; with no node configured for the chain the bot is stored without watchingFrom and warnings say it is not followed."
      })
    )
  )
  .add(
    HttpApiEndpoint.put("update", "/v1/bots/:botId", {
      params: { botId: Schema.String },
      payload: S.BotUpdate,
      success: S.BotAnswer,
      error: [
        S.V2Errors.ValidationError,
        S.BotNotFound,
        S.BotConflict,
        S.ChainUnavailable,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Update a bot",
        description:
          "Any subset of the fields; chainId may be repeated but not changed. The rules are checked again against the contracts as they are now, and the revision rises by one. Switching a bot on or changing what decides its matches (watchRule, literalDefs, ruleScope, topLevelTxBlockRange) sets watchingFrom to the block after the node's head, as on create; other changes (names, severity, notifications, notification limits) keep it."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("historicalBlocks", "/v1/bots/:botId/historical-blocks", {
      params: { botId: Schema.String },
      payload: S.HistoricalBlocksRequest,
      success: S.HistoricalBlocksAnswer,
      error: [
        S.V2Errors.ValidationError,
        S.BotNotFound,
        S.ChainUnavailable,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Submit blocks for historical analysis",
        description:
          "Reads the blocks from the chain's node (with call traces when a rule needs internal frames) and keeps them for the bot; idempotent. A block the node does not have is reported per block (status missing), not fatal. At most 1,000 blocks per request."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("historicalProgress", "/v1/bots/:botId/historical-blocks", {
      params: { botId: Schema.String },
      success: S.HistoricalProgress,
      error: [S.BotNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Blocks submitted so far",
        description:
          "How many blocks the bot has been given and their span, and, while a submission runs on this server, how many of its blocks are read and stored (they are stored 100 at a time, so a long request's progress shows here and a failure keeps what was done)."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("historicalQuery", "/v1/bots/:botId/execute-historical-query", {
      params: { botId: Schema.String },
      payload: S.HistoricalQueryRequest,
      success: S.HistoricalQueryAnswer,
      error: [
        S.V2Errors.ValidationError,
        S.BotNotFound,
        S.HistoryNotReady,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Run the bot's rules over its submitted blocks",
        description:
          "Decodes the blocks with the key's ABIs as they are now and returns every match (bound transactions, rule, evidence with decoded arguments) and patterns (counts per rule and per matched event or function, block span). 409 before any block was submitted, or when a rule needs call traces the stored blocks lack."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("alerts", "/v1/bots/:botId/alerts", {
      params: { botId: Schema.String },
      query: S.AlertQuery,
      success: S.AlertList,
      error: [S.V2Errors.ValidationError, S.BotNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "The bot's alerts",
        description:
          "Newest first, paged (limit, before), active or retracted ones only when asked; each with its evidence, its retraction (when its block left the chain) and the delivery state of each notification."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("redeliverAlert", "/v1/bots/:botId/alerts/:alertId/redeliver", {
      params: { botId: Schema.String, alertId: Schema.String },
      success: S.AlertRedelivered.pipe(HttpApiSchema.status(202)),
      error: [S.BotNotFound, S.AlertNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send an alert's dead letters again",
        description:
          "The alert's notices (and its retraction's) that a channel refused through every retry are queued again, each with its first delivery id (receivers that deduplicate drop what they already had) and the full retry schedule. Channels disabled by a 410 Gone get nothing; the whole channel's dead letters are `POST /v1/notifications/:channelId/redeliver`."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bots", {
      query: S.BotListQuery,
      success: S.BotList,
      error: [S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "List the key's bots", description: "Oldest first." }))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/bots/:botId", {
      params: { botId: Schema.String },
      success: S.BotAnswer,
      error: [S.BotNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Read a bot" }))
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/bots/:botId", {
      params: { botId: Schema.String },
      success: S.BotDeleted,
      error: [S.BotNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Delete a bot" }))
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: bots",
      description:
        "Bots watch a chain's transactions with rule expressions. `x-api-key` or `Authorization: Bearer`; another key's bot is a 404."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** Monitoring: notification channels (spec §2.8's `notifications`). Either key header; failures in the v2 shape. */
export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.post("create", "/v1/notifications", {
      payload: S.ChannelRequest,
      success: S.ChannelAnswer.pipe(HttpApiSchema.status(201)),
      error: [S.V2Errors.ValidationError, S.ChannelConflict, S.V2Errors.ServiceUnavailable, ...bodyErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a notification channel",
        description:
          "webhook {url} (Standard Webhooks signed; the secret is in this answer only), slack and discord {url} (incoming-webhook URLs), telegram {botToken, chatId}, email {to} (through the server's mail relay). Every URL must be HTTPS to a public host (or one on the server's allow-list). An optional template makes the message from the alert's fields. At most 20 channels per key (409 beyond)."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/notifications", {
      success: S.ChannelList,
      error: [S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({ summary: "List the key's channels", description: "Oldest first, with delivery counts." })
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/notifications/:channelId", {
      params: { channelId: Schema.String },
      success: S.ChannelAnswer,
      error: [S.ChannelNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Read a channel and the state of its deliveries" }))
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/notifications/:channelId", {
      params: { channelId: Schema.String },
      success: S.ChannelDeleted,
      error: [S.ChannelNotFound, S.ChannelConflict, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a channel",
        description:
          "Refused with 409 while bots of the key send to it, naming them; its undelivered messages are dropped."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/notifications/:channelId/test", {
      params: { channelId: Schema.String },
      success: S.ChannelTestQueued.pipe(HttpApiSchema.status(202)),
      error: [S.ChannelNotFound, S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send a test message",
        description:
          "Queues a test message through the same outbox as alerts (retries, dead letters); the channel's deliveries show how it went."
      })
    )
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/v1/notifications/:channelId/redeliver", {
      params: { channelId: Schema.String },
      success: S.ChannelRedelivered.pipe(HttpApiSchema.status(202)),
      error: [S.ChannelNotFound, S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Send the channel's dead letters again",
        description:
          "Alerts, retractions and test messages the receiver refused through every retry are queued again, each with its first delivery id (receivers that deduplicate drop what they already had) and the full retry schedule: how an operator recovers the alerts of a receiver outage. 400 for a channel disabled by a 410 Gone."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: notification channels",
      description: "Where bots' alerts go. `x-api-key` or `Authorization: Bearer`; another key's channel is a 404."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}

/** The Standard Webhooks headers every delivery carries (spec §6), in the document's `webhooks`. */
const signatureHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The delivery's id (msg_…), the same on every retry: receivers deduplicate by it",
    schema: { type: "string" }
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "Unix seconds when this attempt was signed; refuse one too far from your clock",
    schema: { type: "string", pattern: "^[0-9]+$" }
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "v1,<base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` keyed by the secret after its whsec_ prefix, base64-decoded>",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}$" }
  }
]

/** A webhook of the document: what Vigil POSTs to a receiver, and what each answer makes of the delivery. */
const outboundHook = (operationId: string, summary: string, description: string, schema: string) => ({
  post: {
    operationId,
    summary,
    description,
    parameters: signatureHeaders,
    requestBody: {
      required: true,
      content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } }
    },
    responses: {
      "2XX": { description: "Delivered: nothing more is sent for this delivery" },
      "410": { description: "Gone: the destination is disabled, nothing more is sent to it" },
      default: {
        description:
          "Anything else (or no answer within the delivery timeout) is retried with backoff, then dead-lettered"
      }
    }
  }
})

/** The 408 Node's server itself answers to a request not received in full in time (VIGIL_REQUEST_TIMEOUT_MS). */
const requestTimeout = {
  description:
    "The request was not received in full within the server's request timeout (VIGIL_REQUEST_TIMEOUT_MS, default 30 s): no body, and the connection is closed"
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** What the transform reads and writes of an operation of the generated document. */
interface DocOperation {
  readonly parameters?: ReadonlyArray<{ readonly in: string; readonly name: string; readonly schema?: unknown }>
  readonly responses?: Record<string, unknown>
}

/**
 * What the generator does not say by itself: query numbers as the integers the routes take (a query is text on
 * the wire, so the generator writes the encoded side), the 408 of the server's request timeout on every route, and
 * the `webhooks` Vigil sends, so a receiver can generate its types.
 */
const completeDocument = (spec: Record<string, unknown>): Record<string, unknown> => {
  const integers = new Map<string, Record<string, unknown>>()
  HttpApi.reflect(VigilApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => {
      if (endpoint.query === undefined) return
      const typed = Schema.toJsonSchemaDocument(Schema.toType(endpoint.query)).schema as {
        properties?: Record<string, Record<string, unknown>>
      }
      for (const [name, property] of Object.entries(typed.properties ?? {}))
        if (property.type === "integer")
          integers.set(`${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")} ${name}`, property)
    }
  })
  const paths: Record<string, Record<string, DocOperation>> = {}
  for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, DocOperation>>)) {
    const operations: Record<string, DocOperation> = {}
    for (const [method, operation] of Object.entries(item)) {
      if (!methods.includes(method)) {
        operations[method] = operation
        continue
      }
      operations[method] = {
        ...operation,
        ...(operation.parameters === undefined
          ? {}
          : {
              parameters: operation.parameters.map((p) =>
                p.in === "query" && integers.has(`${method} ${path} ${p.name}`)
                  ? { ...p, schema: integers.get(`${method} ${path} ${p.name}`) }
                  : p
              )
            }),
        responses: { ...operation.responses, "408": requestTimeout }
      }
    }
    paths[path] = operations
  }
  return {
    ...spec,
    paths,
    webhooks: {
      intelligence: outboundHook(
        "webhook.intelligence",
        "An asynchronous screening's result, to each webhook of the key (/api/v2/webhooks)",
        "Sent once per webhook for every POST /api/v2/webhooks/intel, after the screening; retried with backoff until a 2xx (at most 5 webhooks per key).",
        "IntelligenceDelivery"
      ),
      channelMessage: outboundHook(
        "webhook.channelMessage",
        "An alert, its retraction or unverified notice, or a test, to a `webhook` notification channel",
        "Sent for each alert of a bot that notifies the channel; a retraction (its block left the chain) and an unverified notice carry the alert's id in correlation_id and data.id. Slack, Discord, Telegram and email channels receive their service's own format instead.",
        "ChannelWebhookMessage"
      )
    }
  }
}

/** The whole reference API. */
export class VigilApi extends HttpApi.make("vigil")
  .add(SystemGroup)
  .add(V3Group)
  .add(V2Group)
  .add(StatusGroup)
  .add(ListsGroup)
  .add(RulesGroup)
  .add(WebhooksGroup)
  .add(ContractsGroup)
  .add(BotsGroup)
  .add(NotificationsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Vigil",
      version: Version.version,
      description: "Blockchain address risk screening and smart-contract monitoring",
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
      // Relative: the document is served by the server it describes, wherever that listens.
      servers: [{ url: "/", description: "The server that serves this document" }],
      transform: completeDocument
    })
  )
  .annotate(HttpApi.AdditionalSchemas, [S.IntelligenceDelivery, S.ChannelWebhookMessage]) {}
