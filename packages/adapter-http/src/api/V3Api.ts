/** The `v3` group of the API, composed with the others in `Api.ts`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as S from "../Schemas.ts"
import { BearerAuth, bodyErrors, intelErrors } from "./Common.ts"

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
