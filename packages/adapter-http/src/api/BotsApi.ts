/** The `bots` group of the API, composed with the others in `Api.ts`. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { bodyErrors, edgeErrors, KeyRateAuth } from "./Common.ts"

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
