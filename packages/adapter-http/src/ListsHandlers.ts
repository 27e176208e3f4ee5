/** Handler of `GET /v1/lists`: the lists screening consults, as `{success, lists, timestamp}`. */
import { type ApiKeys, Instant, type Quota, Screening } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"

/** What the lists handler needs. */
export type Requirements = Screening.Screening | ApiKeys.ApiKeys | Quota.Quota

/** The lists group (either key header). */
export const layer: Layer.Layer<HttpApiGroup.Service<"vigil", "lists">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "lists",
  Effect.fnUntraced(function* (handlers) {
    const screening = yield* Screening.Screening
    return handlers.handle("list", () =>
      Effect.gen(function* () {
        const lists = yield* screening.lists
        return { success: true, lists, timestamp: yield* Instant.now } as const
      }).pipe(HttpErrors.answer("v2"))
    )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
