/** The `rules` group of the API, composed with the others in `Api.ts`. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { bodyErrors, KeyRateAuth } from "./Common.ts"

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
