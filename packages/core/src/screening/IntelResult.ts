/**
 * The wire shapes of screening, each declared once as a Schema: the v3 result of one address (spec §2.1, plus
 * `metadata.chain`, `metadata.as_of` and, on request, `details`), a failed batch item and the batch result
 * (§2.4). Types derive from them; the HTTP adapter only annotates them for its document.
 */
import { Schema } from "effect"
import { Chain, Instant } from "../kernel/index.ts"
import * as Intel from "./Intel.ts"
import * as Scoring from "./Scoring.ts"

const Timestamp = Instant.Timestamp

/** A signal on the wire: what was found, its weight and publisher, and the record that raised it. */
export const Signal = Schema.Struct({
  type: Scoring.SignalType,
  weight: Schema.Finite,
  source: Schema.String,
  polarity: Schema.Literals(["risk", "positive"]),
  summary: Schema.String.annotate({
    description:
      "What was found, where, and how far the source's word goes; a sanctions claim no official list confirms says so."
  }),
  evidence: Schema.Struct({
    list: Schema.String,
    authority: Intel.Authority.annotate({
      description:
        "The list's authority: official (the issuer's own list), curated (a third party that reviews it) or scraped labels."
    }),
    reference: Schema.String,
    category: Intel.Category,
    listedAt: Schema.String,
    delistedAt: Schema.optionalKey(
      Schema.String.annotate({ description: "When the listing ended, where the source states it." })
    ),
    delistedBetween: Schema.optionalKey(Intel.DelistedBetween),
    listAsOf: Schema.optionalKey(
      Schema.String.annotate({
        description:
          "The date of the list's version this answer read (its newest dated on or before the screened day): how current the list is."
      })
    ),
    label: Schema.optionalKey(Schema.String),
    entityName: Schema.optionalKey(Schema.String),
    exposure: Schema.optionalKey(
      Schema.Struct({
        counterparty: Schema.String,
        network: Schema.String,
        direction: Schema.Literals(["incoming", "outgoing", "both"]),
        transfers: Schema.Int,
        transactions: Schema.Array(Schema.String).annotate({
          description: "Up to 10 transaction hashes, oldest first."
        }),
        amounts: Schema.Array(
          Schema.Struct({
            token: Schema.String.annotate({ description: "The token contract, or `native`." }),
            standard: Schema.Literals(["erc20", "erc721", "native"]),
            incoming: Schema.String.annotate({
              description: "Received from the counterparty, in the token's smallest unit (decimal)."
            }),
            outgoing: Schema.String.annotate({
              description: "Sent to the counterparty, in the token's smallest unit (decimal)."
            }),
            share: Schema.Finite.annotate({
              description:
                "What moved with the counterparty as a share (0–1) of the address's volume of this token in the window."
            })
          })
        )
      }).annotate({
        description:
          "For an exposure_* signal: the listed counterparty (whose own evidence the other fields are), the network, the direction, and the transfers in the window read."
      })
    )
  })
})
export type Signal = typeof Signal.Type

/** The raw records and the score breakdown, when `include_details` asks for them. */
export const Details = Schema.Struct({
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
  formula: Schema.String,
  calibration: Schema.optionalKey(
    Schema.Struct({
      model: Schema.Int,
      model_as_of: Schema.String.annotate({ description: "The day of the lists the model was fitted on." }),
      fitted_at: Schema.String.annotate({ description: "When the model was fitted (ISO 8601)." }),
      probability: Schema.Finite.annotate({
        description:
          "The model's probability that the scraped evidence of this answer is borne out by an official or curated list (0.01–0.99). Not `confidence`."
      }),
      rule_score: Schema.Finite,
      score: Schema.Finite
    }).annotate({
      description:
        "When the calibration graded the answer: the model's version and age, its probability, the rule-based score and the calibrated score (which `score` shows)."
    })
  ),
  chains_with_activity: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description:
        "The networks with a configured node on which the address has a nonce, a balance, code or a token received (lowercase names; `chain-<id>` for a chain Vigil does not name). Empty also when nothing could be checked: `activity` says which networks were."
    })
  ),
  activity: Schema.optionalKey(
    Schema.Struct({
      checked: Schema.Array(Schema.String),
      unchecked: Schema.Array(Schema.Struct({ network: Schema.String, reason: Schema.String }))
    }).annotate({
      description:
        "Which networks' nodes answered for `chains_with_activity`, and what could not be checked and why (a node that failed or did not answer in time; `every network` when no node is configured)."
    })
  )
})

/** The v3 result of one address. */
export const IntelResult = Schema.Struct({
  address: Schema.String,
  score: Schema.Finite,
  risk_level: Scoring.Band,
  confidence: Schema.Finite.annotate({
    description:
      "How sure the answer is of its action (0–1): how far the lists it rests on are trusted (an official list most, then curated, then scraped labels; more for lists that agree). 0 for an incomplete answer, 0.5 when no list names the address, 1 for a system address. A calibrated answer keeps it; the model's probability is `details.calibration.probability`."
  }),
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
    action: Scoring.Action,
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
    as_of: Schema.String,
    exposure: Schema.optionalKey(
      Schema.Struct({
        budget_ms: Schema.Int,
        dust_floor: Schema.Struct({
          native: Schema.String,
          token: Schema.String,
          tokens: Schema.Record(Schema.String, Schema.String)
        }).annotate({
          description:
            "The dust floor applied, in whole units: an incoming transfer below it from a listed counterparty is possibly unsolicited (reported in `unsolicited`, not scored). `native` for the chain's coin, `token` for any token not in `tokens` (by contract); a token whose decimals() cannot be read has no floor."
        }),
        windows: Schema.Array(
          Schema.Struct({
            network: Schema.String,
            from_block: Schema.Int,
            to_block: Schema.Int.annotate({
              description: "The last block read: the head, or with a past `as_of` the last block of that day (UTC)."
            }),
            transfers: Schema.Int,
            native: Schema.Boolean.annotate({
              description: "Whether native transfers were read over the whole window (see `gaps` when not)."
            })
          })
        ),
        counterparties: Schema.Int.annotate({
          description: "Counterparties with a non-zero transfer; every one is screened (none is left out by a cap)."
        }),
        listed: Schema.Int,
        dust_ignored: Schema.Int.annotate({
          description:
            "Transfers set aside: zero-value ones (either way, from anyone) and incoming ones below the floor from listed counterparties."
        }),
        system_transfers: Schema.Int.annotate({
          description:
            "Transfers with a system address (the zero address of mints and burns, burn addresses, precompiles): never counterparties."
        }),
        unsolicited: Schema.Array(
          Schema.Struct({
            counterparty: Schema.String,
            network: Schema.String,
            type: Scoring.SignalType,
            list: Schema.String,
            reason: Schema.String,
            transactions: Schema.Array(Schema.String),
            amounts: Schema.Array(
              Schema.Struct({
                token: Schema.String,
                standard: Schema.Literals(["erc20", "erc721", "native"]),
                incoming: Schema.String,
                outgoing: Schema.String
              })
            )
          })
        ).annotate({
          description:
            "Transfers with a listed counterparty set aside as possibly unsolicited (zero-value, or received below the dust floor): reported, not scored, since anyone can send anyone a token from a listed address."
        }),
        gaps: Schema.Array(
          Schema.Struct({
            network: Schema.String,
            kind: Schema.Literals(["token", "native"]),
            from_block: Schema.Int,
            to_block: Schema.Int,
            reason: Schema.String
          })
        ).annotate({
          description:
            "Block ranges of a window whose transfers of one kind were not read (a range the node refused even split, or a node without traces for native transfers)."
        }),
        complete: Schema.Boolean.annotate({
          description:
            "True only when every configured network was read over its whole window, both kinds of transfer, and every counterparty was screened; otherwise `warnings` say what was left out."
        })
      }).annotate({
        description:
          "With `options.exposure`: what was read (per network, the block window and the transfers found), how many counterparties were screened and listed, what was set aside, what could not be read, and whether the reading is complete."
      })
    ),
    warnings: Schema.optionalKey(
      Schema.Array(Schema.String).annotate({
        description:
          "About the input or the answer, when there is something to say: e.g. an EVM address whose mixed case does not match its EIP-55 checksum (screened all the same; check it for a typo), or a list that cannot vouch for `as_of` because the date precedes its oldest stored version (the answer is then incomplete)."
      })
    )
  }),
  details: Schema.optionalKey(Details)
})
export type IntelResult = typeof IntelResult.Type

/** A batch item that could not be screened: spec §2.4 leaves its form open; this is ours. */
export const BatchFailure = Schema.Struct({
  address: Schema.String,
  error: Schema.Struct({ code: Schema.Literal("invalid_address"), message: Schema.String })
})
export type BatchFailure = typeof BatchFailure.Type

/** Counts of a batch: items, successes, failures, and successes per band. */
export const BatchSummary = Schema.Struct({
  total: Schema.Int,
  successful: Schema.Int,
  failed: Schema.Int,
  critical: Schema.Int,
  high: Schema.Int,
  medium: Schema.Int,
  low: Schema.Int,
  minimal: Schema.Int
})
export type BatchSummary = typeof BatchSummary.Type

/** The v3 batch result: one item per address, in input order. */
export const BatchResult = Schema.Struct({
  results: Schema.Array(Schema.Union([IntelResult, BatchFailure])),
  summary: BatchSummary,
  metadata: Schema.Struct({
    version: Schema.Literal("v3"),
    latency_ms: Schema.Finite,
    correlation_id: Schema.String.annotate({ examples: ["req_m3k2x1_9f8e7d6c5b4a"] }),
    timestamp: Timestamp
  })
})
export type BatchResult = typeof BatchResult.Type

/** The summary of batch items. */
export const summarize = (results: ReadonlyArray<IntelResult | BatchFailure>): BatchSummary => {
  const summary = {
    total: results.length,
    successful: 0,
    failed: 0,
    critical: 0,
    high: 0,
    medium: 0,
    low: 0,
    minimal: 0
  }
  for (const r of results) {
    if ("error" in r) summary.failed++
    else {
      summary.successful++
      summary[r.risk_level]++
    }
  }
  return summary
}
