/** The `v2` group of the API, composed with the others in `Api.ts`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { ApiKeyAuth, edgeErrors, intelErrors } from "./Common.ts"

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
