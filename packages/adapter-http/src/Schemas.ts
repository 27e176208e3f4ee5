/**
 * The request schemas of the routes and the error bodies, which only HTTP has. Every answer's shape is core's
 * (declared once there); here it is only named, given examples and a status for the OpenAPI document.
 */
import {
  Alert as AlertModel,
  Bot as BotModel,
  Bots,
  Channel as ChannelModel,
  Contract as ContractModel,
  Chain,
  Evidence,
  Exposure,
  History,
  Instant,
  IntelIndex,
  IntelResult,
  Status,
  V2,
  WebhookResponses,
  Webhooks
} from "@vigil/core"
import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"

const Address = Schema.String.check(
  Schema.isBetweenLength(26, 128, {
    message: "must be 26 to 128 characters",
    // Addresses are ASCII, so the exact bounds hold (the generic rule halves minLength for surrogate pairs).
    toJsonSchema: () => ({ minLength: 26, maxLength: 128 })
  })
).annotate({
  description: "A blockchain address of one of the 18 supported networks, 26 to 128 characters.",
  examples: ["0x8589427373d6d84e98730d7795d8f6f8731fda16"]
})

const ChainHint = Schema.Union([Chain.Network, Schema.Literal("auto")]).annotate({
  description: "Network the address must be valid on; `auto` (default) detects it from the format."
})

const AsOf = Instant.IsoDate.annotate({
  description:
    "Screen against the lists as they were on this day (YYYY-MM-DD, a real calendar day, not after today); default today."
})

/**
 * An `options` object that refuses what it does not know: a misspelt or unsupported option (`asOf`, `chains`) is
 * a 400 naming it, never silently ignored.
 */
const Options = <const Fields extends Schema.Struct.Fields>(fields: Fields) => {
  const known = Object.keys(fields)
  const Unknown = Schema.String.check(Schema.makeFilter((key: string) => !known.includes(key)))
  const strict = Schema.StructWithRest(Schema.Struct(fields), [
    Schema.Record(Unknown, Schema.Never.annotate({ message: `is not an option (options: ${known.join(", ")})` }))
  ]).annotate({ description: `Screening options; any other key is refused (400). Known: ${known.join(", ")}.` })
  // No other key survives decoding, so the value is exactly the struct's: typed as such, without the index
  // signature the refusing rest adds to the type.
  return strict as unknown as Schema.Codec<Schema.Struct.Type<Fields>, Schema.Struct.Encoded<Fields>>
}

/** An amount in whole units of a coin or token, as the dust floor takes it. */
const Amount = Schema.String.check(
  Schema.isPattern(Exposure.amountPattern, { message: 'must be an amount in whole units, e.g. "0.1"' })
)

/** `options.exposure`: read the address's recent transfers and screen its counterparties. */
const ExposureOption = Schema.Union([
  Schema.Boolean,
  Schema.Struct({
    dust_floor: Schema.optionalKey(
      Schema.Struct({
        native: Schema.optionalKey(Amount),
        token: Schema.optionalKey(Amount),
        tokens: Schema.optionalKey(
          Schema.Record(
            Schema.String.check(
              Schema.isPattern(/^0x[0-9a-f]{40}$/, {
                message: "must be a token contract, 0x and 40 lowercase hex digits"
              })
            ),
            Amount
          )
        )
      }).annotate({
        description:
          "This request's dust floor in whole units (over the server's: VIGIL_EXPOSURE_DUST_NATIVE, VIGIL_EXPOSURE_DUST_TOKEN): `native` for the chain's coin, `token` for any token, `tokens` per token contract. An incoming transfer below it from a listed counterparty is reported as possibly unsolicited, not scored."
      })
    )
  })
]).annotate({
  description:
    "Read the address's recent token and native transfers on the networks with a configured node, screen every counterparty, and add exposure_* signals for listed ones (metadata.exposure says what was read). `true`, or an object to set this request's dust floor. Default false."
})

/** Whether `options.exposure` asks for exposure, and this request's settings of it. */
export const exposureRequest = (option: typeof ExposureOption.Type | undefined): Exposure.Request | undefined =>
  option === undefined || option === false
    ? undefined
    : option === true || option.dust_floor === undefined
      ? {}
      : { dustFloor: option.dust_floor }

/** Body of `POST /api/v3/intel`. */
export const V3Request = Schema.Struct({
  address: Address,
  options: Schema.optionalKey(
    Options({
      include_details: Schema.optionalKey(Schema.Boolean),
      chain: Schema.optionalKey(ChainHint),
      enable_agentic: Schema.optionalKey(Schema.Boolean),
      as_of: Schema.optionalKey(AsOf),
      exposure: Schema.optionalKey(ExposureOption)
    })
  )
}).annotate({
  identifier: "V3IntelRequest",
  examples: [{ address: "0x8589427373d6d84e98730d7795d8f6f8731fda16", options: { include_details: true } }]
})

/** The v3 result of one address (spec §2.1) plus `metadata.chain`, `metadata.as_of` and, on request, `details`. */
export const V3Result = IntelResult.IntelResult.annotate({ identifier: "V3IntelResult" })

/** Body of `POST /api/v3/intel/batch`. */
export const BatchRequest = Schema.Struct({
  addresses: Schema.Array(
    Schema.String.check(
      Schema.isMaxLength(128, {
        message: "must be at most 128 characters",
        toJsonSchema: () => ({ maxLength: 128 })
      })
    )
  )
    .check(Schema.isBetweenLength(1, 25, { message: "must hold 1 to 25 addresses" }))
    .annotate({
      description:
        "1 to 25 addresses of at most 128 characters; networks may be mixed. An invalid one becomes a failed item (not charged), not a failed request."
    }),
  options: Schema.optionalKey(
    Options({
      batch_size: Schema.optionalKey(
        Schema.Int.check(
          Schema.isBetween({ minimum: 1, maximum: 10 }, { message: "must be a whole number from 1 to 10" })
        ).annotate({
          description: "How many addresses are screened concurrently, 1 to 10; default 3."
        })
      ),
      include_details: Schema.optionalKey(Schema.Boolean),
      chain: Schema.optionalKey(ChainHint),
      enable_agentic: Schema.optionalKey(Schema.Boolean),
      as_of: Schema.optionalKey(AsOf),
      exposure: Schema.optionalKey(ExposureOption)
    })
  )
}).annotate({
  identifier: "V3BatchRequest",
  examples: [
    {
      addresses: ["0x8589427373d6d84e98730d7795d8f6f8731fda16", "bc1qa5wkgaew2dkv56kfvj49j0av5nml45x9ek9hz6"],
      options: { batch_size: 3 }
    }
  ]
})

/** A batch item that could not be screened. */
export const BatchFailure = IntelResult.BatchFailure.annotate({ identifier: "V3BatchFailure" })

/** The v3 batch result (spec §2.4); results are in input order. */
export const BatchResult = IntelResult.BatchResult.annotate({ identifier: "V3BatchResult" })

/** Query of `GET /api/v2/intel`. */
export const V2Query = Schema.Struct({ address: Address })

/** The v2 intelligence result (spec §2.5). */
export const V2Result = V2.IntelResponse.annotate({ identifier: "V2IntelResult" })

/** The v2 status result (spec §2.6). Always 200: an invalid or expired key is reported in `status`. */
export const StatusResult = Status.StatusReport.annotate({ identifier: "V2StatusResult" })

const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))
const int = (description: string) => Schema.optionalKey(Schema.Int.annotate({ description }))

/** What was wrong, for programs; each failure sets the properties that concern it. */
const Details = Schema.Struct({
  field: text("The offending field of the request (400)"),
  location: text("Where the field was: body, query, path or headers (400)"),
  reason: text("Why: the rule broken (400), the storage state (503) or the chain node's failure (502)"),
  problems: Schema.optionalKey(
    Schema.Array(Bots.ExpressionProblem).annotate({ description: "Each problem of the bot's rule (400)" })
  ),
  id: text("The resource named (404, 409)"),
  botId: text("The bot of the alert (404)"),
  label: text("The contract label already taken (409)"),
  chainId: int("The chain concerned (409, 502)"),
  max: int("How many the key may have (409)"),
  bots: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        id: Schema.String,
        botName: Schema.String,
        problems: Schema.optionalKey(Schema.Array(Bots.ExpressionProblem))
      })
    ).annotate({ description: "The bots that use the resource, with what deleting it would break (409)" })
  ),
  tried: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({ description: "Where an ABI was looked for and what was heard (422)" })
  ),
  limit: text("The refusing quota window: qps, daily or monthly (429)"),
  limit_value: int("That window's limit (429)"),
  retry_after_seconds: int("When to retry (429)"),
  limit_bytes: int("The largest body accepted (413)"),
  content_type: text("The content type sent (415)"),
  method: text("The method of a request no route answers (404)"),
  path: text("The path of a request no route answers (404)")
}).annotate({
  identifier: "ErrorDetails",
  description: "What was wrong, for programs: the field, the limit, the reason."
})

interface Example {
  readonly message: string
  readonly details?: Record<string, unknown>
}

/** A v3 error body: `{error, message, details}`. */
const v3Body = (error: string, status: number, identifier: string, example: Example) =>
  Schema.Struct({ error: Schema.Literal(error), message: Schema.String, details: Schema.optionalKey(Details) }).pipe(
    HttpApiSchema.status(status),
    Schema.annotate({ identifier, examples: [{ error, ...example }] })
  )

/** A v2 error body: the v3 fields plus `success:false` and `timestamp` (the shape of spec §7). */
const v2Body = (error: string, status: number, identifier: string, example: Example) =>
  Schema.Struct({
    success: Schema.Literal(false),
    error: Schema.Literal(error),
    message: Schema.String,
    details: Schema.optionalKey(Details),
    timestamp: Instant.Timestamp
  }).pipe(
    HttpApiSchema.status(status),
    Schema.annotate({
      identifier: `V2${identifier}`,
      examples: [{ success: false as const, error, ...example, timestamp: "2026-11-22T10:00:01.000Z" }]
    })
  )

const HeaderInt = Schema.String.annotate({ description: "A whole number", examples: ["60"] })

/** `X-RateLimit-*`: the window that decided the request (Reset in seconds from now). */
const rateLimitHeaders = {
  "x-ratelimit-limit": HeaderInt.annotate({ description: "Size of the window that decided the request" }),
  "x-ratelimit-remaining": HeaderInt.annotate({ description: "What is left of it after this request" }),
  "x-ratelimit-reset": HeaderInt.annotate({ description: "Seconds until it starts again" })
}

/** Headers of a charged success. */
export const chargedHeaders = rateLimitHeaders

/** Headers of a screening answered through the result cache. */
export const cachedHeaders = {
  ...rateLimitHeaders,
  "x-cache": Schema.Literals(["HIT", "MISS"]).annotate({ description: "Whether the result came from the cache" }),
  age: Schema.optionalKey(HeaderInt.annotate({ description: "Seconds since a cached result was computed (HIT only)" }))
}

/** The errors every route of one flavour can answer, by status. */
const errorSet = (body: typeof v3Body) => ({
  /** 400: the request is malformed; `details.field` names the offending field. */
  ValidationError: body("Validation Error", 400, "ValidationError", {
    message: "address: not the format of any supported network",
    details: { field: "address" }
  }),
  /** 401: no key, or a key that is unknown, revoked or expired. */
  Unauthorized: HttpApiSchema.WithHeaders(
    body("Unauthorized", 401, "Unauthorized", { message: "Invalid or missing API key" }),
    { "www-authenticate": Schema.Literal('Bearer realm="vigil"') }
  ),
  /** 413: the body is larger than the server accepts. */
  PayloadTooLarge: body("Payload Too Large", 413, "PayloadTooLarge", {
    message: "request body exceeds 65536 bytes",
    details: { limit_bytes: 65536 }
  }),
  /** 415: a body that is not JSON. */
  UnsupportedMediaType: body("Unsupported Media Type", 415, "UnsupportedMediaType", {
    message: "the body must be JSON (Content-Type: application/json)",
    details: { content_type: "text/plain" }
  }),
  /** 429: a rate or quota limit of the key is exhausted. */
  TooManyRequests: HttpApiSchema.WithHeaders(
    body("Too Many Requests", 429, "TooManyRequests", {
      message: "daily address limit of 10000 reached; retry in 3600 s",
      details: { limit: "daily", limit_value: 10000, retry_after_seconds: 3600 }
    }),
    { ...rateLimitHeaders, "retry-after": HeaderInt.annotate({ description: "Seconds to wait before retrying" }) }
  ),
  /** 500: a bug; it is logged, and the body says nothing more. */
  InternalError: body("Internal Server Error", 500, "InternalError", {
    message: "an unexpected error occurred; it has been logged"
  }),
  /** 503: storage does not answer (`Retry-After` when it is only busy). */
  ServiceUnavailable: HttpApiSchema.WithHeaders(
    body("Service Unavailable", 503, "ServiceUnavailable", {
      message: "storage unavailable: database is locked",
      details: { reason: "Busy" }
    }),
    { "retry-after": Schema.optionalKey(HeaderInt.annotate({ description: "Seconds to wait, when storage is busy" })) }
  )
})

/** Error bodies of the v3 routes and of the system routes. */
export const V3Errors = errorSet(v3Body)

/** Error bodies of the v2 and webhook routes. */
export const V2Errors = errorSet(v2Body)

/** 400 of a v3 route (exported for clients and tests). */
export const ValidationError = V3Errors.ValidationError
/** 413 of a v3 route. */
export const PayloadTooLarge = V3Errors.PayloadTooLarge
/** 429 of a v3 route. */
export const TooManyRequests = V3Errors.TooManyRequests

/** Body of `POST /api/v2/webhooks`. */
export const WebhookRequest = Schema.Struct({
  url: Schema.String.annotate({
    description: "HTTPS URL of a public host",
    examples: ["https://hooks.example.com/vigil"]
  })
}).annotate({ identifier: "WebhookRequest" })

/** `POST /api/v2/webhooks` (201): the only answer that shows the signing secret. */
export const WebhookRegistered = WebhookResponses.RegisteredResponse.annotate({ identifier: "WebhookRegistered" })

/** `GET /api/v2/webhooks`. */
export const WebhookList = WebhookResponses.ListResponse.annotate({ identifier: "WebhookList" })

/** `DELETE /api/v2/webhooks/:webhookId`. */
export const WebhookDeleted = WebhookResponses.DeletedResponse.annotate({ identifier: "WebhookDeleted" })

/** `GET /api/v2/webhooks/stats`. */
export const WebhookStats = WebhookResponses.StatsResponse.annotate({ identifier: "WebhookStats" })

/** Body of `POST /api/v2/intel/webhook`. */
export const AsyncIntelRequest = Schema.Struct({ address: Address }).annotate({ identifier: "AsyncIntelRequest" })

/** `POST /api/v2/intel/webhook` (202): the deliveries are stored; results follow on the webhooks. */
export const AsyncAccepted = WebhookResponses.AcceptedResponse.annotate({ identifier: "AsyncAccepted" })

const webhookError = (status: number, identifier: string, text: string) =>
  WebhookResponses.FailureResponse.pipe(
    HttpApiSchema.status(status),
    Schema.annotate({ identifier, examples: [{ success: false, error: text, timestamp: "2026-11-22T10:00:01.000Z" }] })
  )

/** 400: the URL is not an HTTPS URL of a public host (`details.reason` says which rule). */
export const InvalidWebhookUrl = webhookError(400, "InvalidWebhookUrl", "Invalid webhook URL provided")
/** 404: no such webhook for this key. */
export const WebhookNotFound = webhookError(404, "WebhookNotFound", "Webhook not found")
/** 409: the key has 5 webhooks already, or (async intel) none to deliver to. */
export const WebhookConflict = webhookError(409, "WebhookConflict", "Maximum 5 webhooks allowed per client")

/** Body of `POST /v1/contracts` (spec §2.9): core's. */
export const ContractRequest = ContractModel.Request

/** A registered contract: core's. */
export const Contract = ContractModel.View

/** `POST /v1/contracts` (201) and `GET /v1/contracts/:contractId`. */
export const ContractAnswer = Schema.Struct({
  success: Schema.Literal(true),
  contract: Contract,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ContractAnswer" })

/** `GET /v1/contracts`. */
export const ContractList = Schema.Struct({
  success: Schema.Literal(true),
  contracts: Schema.Array(Contract),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ContractList" })

/** Body of `POST /v1/rules/check`: a rule as a bot would carry it, on one chain. */
export const RuleCheckRequest = Schema.Struct({
  chainId: Schema.Int.annotate({ description: "The chain whose contracts (of this key) the rule names" }),
  expressions: Schema.Array(Schema.String).check(
    Schema.isBetweenLength(1, 20, { message: "must hold 1 to 20 expressions" })
  ),
  watchRuleType: Schema.optionalKey(BotModel.WatchRuleType),
  options: Schema.optionalKey(
    Schema.Struct({
      literalDefs: Schema.optionalKey(BotModel.LiteralDefs),
      ruleScope: Schema.optionalKey(BotModel.RuleScope)
    })
  )
}).annotate({
  identifier: "RuleCheckRequest",
  examples: [{ chainId: 1, expressions: ["system.emitted(tx1.USDC.E.Transfer)"] }]
})

/** What `POST /v1/rules/check` found: the rule's normal form, or its problems. */
export const RuleCheckAnswer = Schema.Struct({
  success: Schema.Literal(true),
  ok: Schema.Boolean.annotate({ description: "Whether the rule checks: a bot with it would be accepted" }),
  normal: Schema.optionalKey(Schema.String.annotate({ description: "The rule's normal form, when it checks" })),
  message: Schema.optionalKey(Schema.String),
  problems: Schema.Array(Bots.ExpressionProblem),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "RuleCheckAnswer" })

/** `GET /v1/lists`: the lists screening consults. */
export const ListsAnswer = Schema.Struct({
  success: Schema.Literal(true),
  lists: Schema.Array(
    IntelIndex.ListStatus.annotate({
      identifier: "ListStatus",
      description:
        "One list: its publisher, kind, authority, current version and its date, the dates of every version in effect (`since` the oldest), what was ingested from where and when, records in force and de-listed, `problem` when the store's verification found its records altered, and `refused` when a refresh since the version in force was refused by the guard (the list may be behind its publisher)."
    })
  ),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ListsAnswer" })

/** Query of `GET /v1/contracts`. */
export const ContractListQuery = Schema.Struct({
  chainId: Schema.optionalKey(Schema.Int.annotate({ description: "Only the contracts of this chain" }))
})

/** `GET /v1/bots`'s query. */
export const BotListQuery = Schema.Struct({
  chainId: Schema.optionalKey(Schema.Int.annotate({ description: "Only the bots of this chain" }))
})

/** `DELETE /v1/bots/:botId`, and of a contract no bot needed. */
export const ContractDeleted = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.String,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ContractDeleted" })

/** A bot whose rules a change of contracts breaks, and the problems. */
const BrokenBot = Schema.Struct({
  id: Schema.String,
  botName: Schema.String,
  problems: Schema.Array(Bots.ExpressionProblem)
}).annotate({ identifier: "BrokenBot" })

/** `DELETE /v1/contracts/:contractId`: with `force=true`, the bots it broke. */
export const ContractRemoved = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.String,
  brokenBots: Schema.optionalKey(Schema.Array(BrokenBot)),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ContractRemoved" })

/** Query of `DELETE /v1/contracts/:contractId`. */
export const ContractRemoveQuery = Schema.Struct({
  force: Schema.optionalKey(
    Schema.Literals(["true", "false"]).annotate({
      description: "true: delete even when bots use the contract (the answer lists the bots it broke)"
    })
  )
})

/** 404: the key has no contract of that id. */
export const ContractNotFound = v2Body("Not Found", 404, "ContractNotFound", {
  message: "no contract ct_1764000000000_abcdefghi",
  details: { id: "ct_1764000000000_abcdefghi" }
})

/** 409: the key already has a contract of that label on that chain. */
export const ContractLabelTaken = v2Body("Conflict", 409, "ContractLabelTaken", {
  message: "the label USDC is already used on chain 1",
  details: { label: "USDC", chainId: 1 }
})

/** 409: the key has as many contracts (or bots) as it may have; `details.max` says how many. */
export const KeyLimitReached = v2Body("Conflict", 409, "KeyLimitReached", {
  message: "the key has 200 contracts, the most it may have; delete one first",
  details: { max: 200 }
})

/** 422: registered without an ABI, and none was found; `details.tried` says where it looked and what it heard. */
export const AbiNotFound = v2Body("Unprocessable Entity", 422, "AbiNotFound", {
  message: "no verified ABI for 0x… on chain 1: …",
  details: { tried: ["EIP-1967 proxy check: not a proxy", "sourcify (contract): not verified"] }
})

/** Body of `POST /v1/bots`: core's, with its checks and messages. */
export const BotCreate = BotModel.Create

/** Body of `PUT /v1/bots/:botId`: core's, with its checks and messages. */
export const BotUpdate = BotModel.Update

/** A bot as the API shows it: core's. */
export const Bot = BotModel.View

/** `POST /v1/bots` (201), `PUT` and `GET /v1/bots/:botId`. */
export const BotAnswer = Schema.Struct({
  success: Schema.Literal(true),
  bot: Bot,
  warnings: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "On create and update: what the bot will not do as stored (e.g. no node is configured for its chain)"
    })
  ),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "BotAnswer" })

/** `GET /v1/bots`. */
export const BotList = Schema.Struct({
  success: Schema.Literal(true),
  bots: Schema.Array(Bot),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "BotList" })

/** `DELETE /v1/bots/:botId`. */
export const BotDeleted = ContractDeleted.annotate({ identifier: "BotDeleted" })

/** 404: the key has no bot of that id. */
export const BotNotFound = v2Body("Not Found", 404, "BotNotFound", {
  message: "no bot bot_1764000000000_abcdefghi",
  details: { id: "bot_1764000000000_abcdefghi" }
})

/** 404: the bot has no alert of that id. */
export const AlertNotFound = v2Body("Not Found", 404, "AlertNotFound", {
  message: "bot bot_1764000000000_abcdefghi has no alert al_0123456789abcdef0123456789abcdef",
  details: { botId: "bot_1764000000000_abcdefghi", id: "al_0123456789abcdef0123456789abcdef" }
})

/** 409: the bot was changed by another request meanwhile. */
export const BotConflict = v2Body("Conflict", 409, "BotConflict", {
  message: "bot bot_1764000000000_abcdefghi was changed by another request; read it again and retry",
  details: { id: "bot_1764000000000_abcdefghi" }
})

/** 409: bots of the key use the contract; `details.bots` lists them with what would break (retry with force=true). */
export const ContractInUse = v2Body("Conflict", 409, "ContractInUse", {
  message: "1 bot uses contract ct_1764000000000_abcdefghi (whales); delete with force=true to delete it anyway",
  details: { bots: [{ id: "bot_1764000000000_abcdefghi", botName: "whales", problems: [] }] }
})

/** Body of `POST /v1/bots/:botId/historical-blocks` (spec §2.10). */
export const HistoricalBlocksRequest = History.SubmitRequest.annotate({ identifier: "HistoricalBlocksRequest" })

/** `POST /v1/bots/:botId/historical-blocks`: what became of each block. */
export const HistoricalBlocksAnswer = Schema.Struct({
  success: Schema.Literal(true),
  botId: Schema.String,
  blocks: Schema.Array(
    Schema.Struct({
      number: Schema.Int,
      status: Schema.Literals(["stored", "already stored", "missing"]),
      reason: Schema.optionalKey(Schema.String)
    })
  ),
  total: Schema.Int.annotate({ description: "Blocks the bot has been given in all" }),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "HistoricalBlocksAnswer" })

/** `GET /v1/bots/:botId/historical-blocks`: what the bot has been given, and a submission under way. */
export const HistoricalProgress = Schema.Struct({
  success: Schema.Literal(true),
  botId: Schema.String,
  blocks: Schema.Int.annotate({ description: "Blocks the bot has been given in all" }),
  firstBlock: Schema.optionalKey(Schema.Int),
  lastBlock: Schema.optionalKey(Schema.Int),
  running: Schema.optionalKey(
    Schema.Struct({
      requested: Schema.Int.annotate({ description: "Blocks the submission under way reads from the node" }),
      processed: Schema.Int.annotate({ description: "Of those, read and stored so far (100 at a time)" }),
      started: Instant.Timestamp
    }).annotate({ description: "A submission under way on this server" })
  ),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "HistoricalProgress" })

/** Body of `POST /v1/bots/:botId/execute-historical-query`. */
export const HistoricalQueryRequest = Schema.Struct({ chainId: Schema.Int }).annotate({
  identifier: "HistoricalQueryRequest"
})

/** `POST /v1/bots/:botId/execute-historical-query`: the matches with their evidence, and patterns. */
export const HistoricalQueryAnswer = Schema.Struct({
  success: Schema.Literal(true),
  botId: Schema.String,
  matches: Schema.Array(
    Schema.Struct({
      rule: Schema.Int.annotate({ description: "Index of the expression in watchRule.expressions" }),
      expression: Schema.String,
      blockNumber: Schema.Int,
      evidence: Evidence.Evidence
    })
  ),
  patterns: Schema.Array(
    Schema.Struct({
      rule: Schema.Int,
      expression: Schema.String,
      matches: Schema.Int,
      occurrences: Schema.Record(Schema.String, Schema.Int).annotate({
        description: "Matched events and calls by Contract.E|F.name"
      }),
      firstBlock: Schema.optionalKey(Schema.Int),
      lastBlock: Schema.optionalKey(Schema.Int)
    })
  ),
  blocks: Schema.Int,
  transactions: Schema.Int,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "HistoricalQueryAnswer" })

/** 409: the query cannot run yet (no blocks submitted; rules that need traces the stored blocks lack). */
export const HistoryNotReady = v2Body("Conflict", 409, "HistoryNotReady", {
  message:
    "no blocks were submitted for bot bot_1764000000000_abcdefghi: POST /v1/bots/bot_1764000000000_abcdefghi/historical-blocks first"
})

/** 502: the chain's node failed (details.reason: Timeout, RateLimited, Unavailable, Unsupported, NotConfigured…). */
export const ChainUnavailable = v2Body("Bad Gateway", 502, "ChainUnavailable", {
  message: "the node of chain 1 has no call traces (debug_traceBlockByNumber: method not found)",
  details: { reason: "Unsupported", chainId: 1 }
})

/** Body of `POST /v1/notifications`: core's. */
export const ChannelRequest = ChannelModel.Request

/** A notification channel, without its secrets: core's. */
export const Channel = ChannelModel.View

/** `POST /v1/notifications` (201) and `GET /v1/notifications/:channelId`. */
export const ChannelAnswer = Schema.Struct({
  success: Schema.Literal(true),
  channel: Channel,
  secret: Schema.optionalKey(
    Schema.String.annotate({ description: "webhook channels: the signing secret (whsec_…), shown only at creation" })
  ),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ChannelAnswer" })

/** `GET /v1/notifications`. */
export const ChannelList = Schema.Struct({
  success: Schema.Literal(true),
  channels: Schema.Array(Channel),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ChannelList" })

/** `DELETE /v1/notifications/:channelId`. */
export const ChannelDeleted = ContractDeleted.annotate({ identifier: "ChannelDeleted" })

/** `POST /v1/notifications/:channelId/redeliver` (202): the channel's dead letters are queued again. */
export const ChannelRedelivered = Schema.Struct({
  success: Schema.Literal(true),
  channelId: Schema.String,
  requeued: Schema.Int.annotate({ description: "Dead-lettered messages queued again (0 when there were none)" }),
  message: Schema.String,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ChannelRedelivered" })

/** `POST /v1/notifications/:channelId/test` (202): the test message is queued. */
export const ChannelTestQueued = Schema.Struct({
  success: Schema.Literal(true),
  deliveryId: Schema.String.annotate({ description: "The delivery's id (webhook-id header, X-Vigil-Delivery)" }),
  message: Schema.String,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "ChannelTestQueued" })

/** 404: the key has no channel of that id. */
export const ChannelNotFound = v2Body("Not Found", 404, "ChannelNotFound", {
  message: "no notification channel nc_1764000000000_abcdefghi",
  details: { id: "nc_1764000000000_abcdefghi" }
})

/** 409: the key already has the most channels allowed, or bots send to the channel being deleted. */
export const ChannelConflict = v2Body("Conflict", 409, "ChannelConflict", {
  message:
    "1 bot sends to channel nc_1764000000000_abcdefghi: bot_1764000000000_abcdefghi (whales); remove it from their notifications first",
  details: { bots: [{ id: "bot_1764000000000_abcdefghi", botName: "whales" }] }
})

/** Query of `GET /v1/bots/:botId/alerts`. */
export const AlertQuery = Schema.Struct({
  limit: Schema.optionalKey(Schema.Int.annotate({ description: "1 to 200 alerts per page; default 50" })),
  before: Schema.optionalKey(Schema.String.annotate({ description: "The `next` of the previous page" })),
  state: Schema.optionalKey(Schema.Literals(["active", "retracted", "unverified"]))
})

/** An alert with its state and notices: core's. */
export const Alert = AlertModel.Listed

/** `POST /v1/bots/:botId/alerts/:alertId/redeliver` (202): the alert's dead letters are queued again. */
export const AlertRedelivered = Schema.Struct({
  success: Schema.Literal(true),
  botId: Schema.String,
  alertId: Schema.String,
  requeued: Schema.Int.annotate({
    description: "Dead-lettered notices of the alert and of its retraction queued again (0 when there were none)"
  }),
  message: Schema.String,
  timestamp: Instant.Timestamp
}).annotate({ identifier: "AlertRedelivered" })

/** `GET /v1/bots/:botId/alerts`. */
export const AlertList = Schema.Struct({
  success: Schema.Literal(true),
  botId: Schema.String,
  alerts: Schema.Array(Alert),
  next: Schema.optionalKey(Schema.String.annotate({ description: "Pass as `before` for the next (older) page" })),
  timestamp: Instant.Timestamp
}).annotate({ identifier: "AlertList" })

/** What an intelligence webhook receives (spec §6): an asynchronous screening's result in the delivery envelope. */
export const IntelligenceDelivery = Webhooks.Envelope(V2.Delivered).annotate({ identifier: "IntelligenceDelivery" })

/** What a `webhook` notification channel receives: an alert, its retraction or unverified notice, or a test. */
export const ChannelWebhookMessage = ChannelModel.WebhookMessage
