/** Wire schemas of the intelligence routes (spec §2.1–2.6): they document the API and tests check responses against them. */
import { Chain, Intel, type Screening, type V2 } from "@vigil/core"
import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"

const Band = Schema.Literals(["critical", "high", "medium", "low", "minimal"])
const Action = Schema.Literals(["ALLOW", "ALLOW_CAUTIOUS", "MONITOR", "REVIEW", "BLOCK"])
const Timestamp = Schema.String.annotate({
  description: "ISO 8601 UTC instant",
  examples: ["2026-11-22T10:00:01.000Z"]
})

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

/** Body of `POST /api/v3/intel`. */
export const V3Request = Schema.Struct({
  address: Address,
  options: Schema.optionalKey(
    Schema.Struct({
      include_details: Schema.optionalKey(Schema.Boolean),
      chain: Schema.optionalKey(ChainHint),
      enable_agentic: Schema.optionalKey(Schema.Boolean)
    })
  )
}).annotate({
  identifier: "V3IntelRequest",
  examples: [{ address: "0x8589427373d6d84e98730d7795d8f6f8731fda16", options: { include_details: true } }]
})

const Signal = Schema.Struct({
  type: Schema.String,
  weight: Schema.Finite,
  source: Schema.String,
  polarity: Schema.Literals(["risk", "positive"]),
  evidence: Schema.Struct({
    list: Schema.String,
    reference: Schema.String,
    category: Intel.Category,
    listedAt: Schema.String,
    delistedAt: Schema.optionalKey(Schema.String),
    label: Schema.optionalKey(Schema.String),
    entityName: Schema.optionalKey(Schema.String)
  })
})

/** The v3 result of one address (spec §2.1) plus `metadata.chain`, `metadata.as_of` and, on request, `details`. */
export const V3Result = Schema.Struct({
  address: Schema.String,
  score: Schema.Finite,
  risk_level: Band,
  confidence: Schema.Finite,
  flags: Schema.Struct({
    sanctioned: Schema.Boolean,
    blacklisted: Schema.Boolean,
    threat_actor: Schema.Boolean,
    smart_money: Schema.Boolean
  }),
  entity: Schema.Struct({ name: Schema.String, type: Schema.String, category: Schema.String }),
  signals: Schema.Array(Signal),
  labels: Schema.Array(Schema.String),
  recommendation: Schema.Struct({
    action: Action,
    summary: Schema.String,
    details: Schema.String,
    ai_enhanced: Schema.Boolean
  }),
  metadata: Schema.Struct({
    version: Schema.Literal("v3"),
    latency_ms: Schema.Finite,
    sources_used: Schema.Int,
    is_complete: Schema.Boolean,
    timestamp: Timestamp,
    chain: Schema.Struct({
      family: Chain.Family,
      networks: Schema.Array(Chain.Network),
      normalized: Schema.String
    }),
    as_of: Schema.String
  }),
  details: Schema.optionalKey(
    Schema.Struct({
      records: Schema.Array(Intel.IntelRecord),
      breakdown: Schema.Array(
        Schema.Struct({
          type: Schema.String,
          weight: Schema.Finite,
          contribution: Schema.Finite,
          list: Schema.String,
          reference: Schema.String
        })
      ),
      formula: Schema.String
    })
  )
}).annotate({ identifier: "V3IntelResult" })

/** Compile-time guard: every result the core produces fits the documented schema. */
export const conforms = (result: Screening.Result): typeof V3Result.Type => result

/** Body of `POST /api/v3/intel/batch`. */
export const BatchRequest = Schema.Struct({
  addresses: Schema.Array(Schema.String)
    .check(Schema.isBetweenLength(1, 25, { message: "must hold 1 to 25 addresses" }))
    .annotate({
      description:
        "1 to 25 addresses; networks may be mixed. An invalid one becomes a failed item, not a failed request."
    }),
  options: Schema.optionalKey(
    Schema.Struct({
      batch_size: Schema.optionalKey(
        Schema.Int.check(
          Schema.isBetween({ minimum: 1, maximum: 10 }, { message: "must be a whole number from 1 to 10" })
        ).annotate({
          description: "How many addresses are screened concurrently, 1 to 10; default 3."
        })
      ),
      include_details: Schema.optionalKey(Schema.Boolean),
      chain: Schema.optionalKey(ChainHint),
      enable_agentic: Schema.optionalKey(Schema.Boolean)
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
export const BatchFailure = Schema.Struct({
  address: Schema.String,
  error: Schema.Struct({ code: Schema.Literals(["invalid_address"]), message: Schema.String })
}).annotate({ identifier: "V3BatchFailure" })

/** The v3 batch result (spec §2.4); results are in input order. */
export const BatchResult = Schema.Struct({
  results: Schema.Array(Schema.Union([V3Result, BatchFailure])),
  summary: Schema.Struct({
    total: Schema.Int,
    successful: Schema.Int,
    failed: Schema.Int,
    critical: Schema.Int,
    high: Schema.Int,
    medium: Schema.Int,
    low: Schema.Int,
    minimal: Schema.Int
  }),
  metadata: Schema.Struct({
    version: Schema.Literal("v3"),
    latency_ms: Schema.Finite,
    correlation_id: Schema.String.annotate({ examples: ["req_m3k2x1_9f8e7d6c5b4a"] }),
    timestamp: Timestamp
  })
}).annotate({ identifier: "V3BatchResult" })

/** Query of `GET /api/v2/intel`. */
export const V2Query = Schema.Struct({ address: Address })

const V2Data = Schema.Struct({
  address: Schema.String,
  entity: Schema.Struct({
    type: Schema.Literals(["malicious", "sanctioned", "suspicious", "service", "individual", "unknown"]),
    name: Schema.NullOr(Schema.String)
  }),
  risk_assessment: Schema.Struct({
    risk_score: Schema.Finite,
    risk_level: Schema.Literals(["critical", "high", "medium", "low", "clean"])
  }),
  recommendation: Schema.String,
  classification: Schema.String,
  risk_tags: Schema.String.annotate({ description: 'Tags joined with "; ".' }),
  priority: Schema.Literals(["URGENT", "HIGH", "MEDIUM", "LOW", "ROUTINE"]),
  labels: Schema.Array(Schema.String),
  chains_with_activity: Schema.Array(Schema.String)
})

/** Compile-time guard for the v2 projection. */
export const conformsV2 = (data: V2.Data): typeof V2Data.Type => data

/** The v2 intelligence result (spec §2.5). */
export const V2Result = Schema.Struct({
  success: Schema.Literal(true),
  data: V2Data,
  message: Schema.Literal("Address intelligence processed successfully"),
  timestamp: Timestamp,
  client: Schema.String
}).annotate({ identifier: "V2IntelResult" })

/** The v2 status result (spec §2.6). Always 200: an invalid or expired key is reported in `status`. */
export const StatusResult = Schema.Struct({
  status: Schema.Literals(["authenticated", "invalid", "expired"]),
  client: Schema.Struct({
    name: Schema.String,
    qps: Schema.Int,
    dailyLimit: Schema.Int,
    monthlyLimit: Schema.Int
  }),
  usage: Schema.Struct({
    dailyUsed: Schema.Int,
    monthlyUsed: Schema.Int,
    recentRequests: Schema.Int,
    dailyRemaining: Schema.Int,
    monthlyRemaining: Schema.Int
  }),
  timestamp: Timestamp
}).annotate({ identifier: "V2StatusResult" })

const errorBody = (
  error: string,
  status: number,
  identifier: string,
  example: { message: string; details: Record<string, unknown> }
) =>
  Schema.Struct({
    error: Schema.Literal(error),
    message: Schema.String,
    details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  }).pipe(HttpApiSchema.status(status), Schema.annotate({ identifier, examples: [{ error, ...example }] }))

/** 400: the request is malformed; `details.field` names the offending field. */
export const ValidationError = errorBody("Validation Error", 400, "ValidationError", {
  message: "address: not a valid address of any supported network",
  details: { field: "address" }
})
/** 401 (exact body of the spec's sister API). */
export const Unauthorized = Schema.Struct({
  error: Schema.Literal("Unauthorized"),
  message: Schema.String
}).pipe(
  HttpApiSchema.status(401),
  Schema.annotate({
    identifier: "Unauthorized",
    examples: [{ error: "Unauthorized", message: "Invalid or missing API key" }]
  })
)
/** 413: the body is larger than the server accepts. */
export const PayloadTooLarge = errorBody("Payload Too Large", 413, "PayloadTooLarge", {
  message: "request body exceeds 65536 bytes",
  details: { limit_bytes: 65536 }
})
/** 429: a rate or quota limit of the key is exhausted; see `Retry-After` and `X-RateLimit-*`. */
export const TooManyRequests = errorBody("Too Many Requests", 429, "TooManyRequests", {
  message: "daily limit of 10000 addresses reached; retry in 3600 s",
  details: { limit: "daily", limit_value: 10000, retry_after_seconds: 3600 }
})
/** 503: storage does not answer. */
export const ServiceUnavailable = errorBody("Service Unavailable", 503, "ServiceUnavailable", {
  message: "storage unavailable: database is locked",
  details: { reason: "Busy" }
})

/** Body of `POST /api/v2/webhooks`. */
export const WebhookRequest = Schema.Struct({
  url: Schema.String.annotate({
    description: "HTTPS URL of a public host",
    examples: ["https://hooks.example.com/vigil"]
  })
}).annotate({ identifier: "WebhookRequest" })

const WebhookId = Schema.String.annotate({
  description: "wh_<epoch ms>_<9 lowercase alphanumerics>",
  examples: ["wh_1640995200000_abc123def"]
})

/** `POST /api/v2/webhooks` (201): the only answer that shows the signing secret. */
export const WebhookRegistered = Schema.Struct({
  success: Schema.Literal(true),
  webhook: Schema.Struct({
    id: WebhookId,
    url: Schema.String,
    created: Timestamp,
    secret: Schema.String.annotate({
      description: "Standard Webhooks secret (whsec_…) that signs every delivery; shown only here"
    })
  }),
  message: Schema.String,
  timestamp: Timestamp
}).annotate({ identifier: "WebhookRegistered" })

/** `GET /api/v2/webhooks`. */
export const WebhookList = Schema.Struct({
  success: Schema.Literal(true),
  webhooks: Schema.Array(
    Schema.Struct({
      id: WebhookId,
      url: Schema.String,
      created: Timestamp,
      deliveryCount: Schema.Int,
      lastDelivery: Schema.NullOr(Timestamp),
      disabled: Schema.Boolean
    })
  ),
  count: Schema.Int,
  timestamp: Timestamp
}).annotate({ identifier: "WebhookList" })

/** `DELETE /api/v2/webhooks/:webhookId`. */
export const WebhookDeleted = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.String,
  timestamp: Timestamp
}).annotate({ identifier: "WebhookDeleted" })

/** `GET /api/v2/webhooks/stats`. */
export const WebhookStats = Schema.Struct({
  success: Schema.Literal(true),
  stats: Schema.Struct({
    total: Schema.Int,
    totalDeliveries: Schema.Int,
    webhooks: Schema.Array(
      Schema.Struct({
        id: WebhookId,
        url: Schema.String,
        deliveryCount: Schema.Int,
        lastDelivery: Schema.NullOr(Timestamp),
        pending: Schema.Int,
        failed: Schema.Int,
        disabled: Schema.Boolean
      })
    )
  }),
  timestamp: Timestamp
}).annotate({ identifier: "WebhookStats" })

/** Body of `POST /api/v2/intel/webhook`. */
export const AsyncIntelRequest = Schema.Struct({ address: Address }).annotate({ identifier: "AsyncIntelRequest" })

/** `POST /api/v2/intel/webhook` (202): the deliveries are stored; results follow on the webhooks. */
export const AsyncAccepted = Schema.Struct({
  success: Schema.Literal(true),
  message: Schema.String,
  correlation_id: Schema.String,
  timestamp: Timestamp
}).annotate({ identifier: "AsyncAccepted" })

const webhookError = (status: number, identifier: string, text: string) =>
  Schema.Struct({
    success: Schema.Literal(false),
    error: Schema.String,
    details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
    timestamp: Timestamp
  }).pipe(
    HttpApiSchema.status(status),
    Schema.annotate({ identifier, examples: [{ success: false, error: text, timestamp: "2026-11-22T10:00:01.000Z" }] })
  )

/** 400: the URL is not an HTTPS URL of a public host (`details.reason` says which rule). */
export const InvalidWebhookUrl = webhookError(400, "InvalidWebhookUrl", "Invalid webhook URL provided")
/** 404: no such webhook for this key. */
export const WebhookNotFound = webhookError(404, "WebhookNotFound", "Webhook not found")
/** 409: the key has 5 webhooks already, or (async intel) none to deliver to. */
export const WebhookConflict = webhookError(409, "WebhookConflict", "Maximum 5 webhooks allowed per client")
