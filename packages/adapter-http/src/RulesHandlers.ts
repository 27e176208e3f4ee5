/**
 * Handler of `POST /v1/rules/check`: a watch rule checked as a bot would take it, nothing stored. The placeholder
 * values of `options.literalDefs` are read from the body's own text, as for a bot, so their numbers stay exact.
 */
import { type ApiKeys, Bots, Instant, type Quota, Rules } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"

/** What the rules handler needs. */
export type Requirements = Bots.Bots | ApiKeys.ApiKeys | Quota.Quota

/** The placeholders' values as JSON text, when the body's own text cannot be read (numbers as they round-trip). */
const literalText = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

/** The rules group (either key header). */
export const layer: Layer.Layer<HttpApiGroup.Service<"vigil", "rules">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "rules",
  Effect.fnUntraced(function* (handlers) {
    const bots = yield* Bots.Bots
    return handlers.handle("check", ({ payload }) =>
      Effect.gen(function* () {
        const client = yield* CurrentClient
        // The body was read to decode the payload; its text is kept, so this reads no more of the socket.
        const text = yield* Effect.orElseSucceed((yield* HttpServerRequest.HttpServerRequest).text, () => "")
        const found = yield* bots.check(client.id, {
          chainId: payload.chainId,
          expressions: payload.expressions,
          ...(payload.watchRuleType === undefined ? {} : { watchRuleType: payload.watchRuleType }),
          ...(payload.options?.literalDefs === undefined
            ? {}
            : { literalDefs: Rules.Literals.textIn(text) ?? literalText(payload.options.literalDefs) }),
          ...(payload.options?.ruleScope === undefined ? {} : { ruleScope: payload.options.ruleScope })
        })
        const timestamp = yield* Instant.now
        return found.ok
          ? ({ success: true, ok: true, normal: found.normal, problems: [], timestamp } as const)
          : ({ success: true, ok: false, message: found.message, problems: found.problems, timestamp } as const)
      }).pipe(HttpErrors.answer("v2"))
    )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
