/** The `status` group of the API, composed with the others in `Api.ts`. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { edgeErrors } from "./Common.ts"

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
