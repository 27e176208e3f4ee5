/** The `lists` group of the API, composed with the others in `Api.ts`. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { edgeErrors, KeyRateAuth } from "./Common.ts"

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
