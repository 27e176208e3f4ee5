/** Handlers of the monitoring contract routes (spec §2.9, §4.7): answers `{success, contract|contracts, timestamp}`. */
import { type ApiKeys, Bots, Contract, Contracts, Instant, type Quota } from "@vigil/core"
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { CurrentClient, VigilApi } from "./Api.ts"
import * as Auth from "./Auth.ts"
import * as HttpErrors from "./HttpErrors.ts"

/** What the contract handlers need. */
export type Requirements = Contracts.Contracts | Bots.Bots | ApiKeys.ApiKeys | Quota.Quota

const answer = HttpErrors.answer("v2")

/** The contracts group (either key header). */
export const layer: Layer.Layer<HttpApiGroup.Service<"vigil", "contracts">, never, Requirements> = HttpApiBuilder.group(
  VigilApi,
  "contracts",
  Effect.fnUntraced(function* (handlers) {
    const contracts = yield* Contracts.Contracts
    const bots = yield* Bots.Bots
    return handlers
      .handle("register", ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const c = yield* contracts.register(client.id, payload)
          return { success: true, contract: Contract.view(c), timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const list = yield* contracts.list(client.id, query.chainId)
          return {
            success: true,
            contracts: list.map(Contract.view),
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const c = yield* contracts.get(client.id, params.contractId)
          return { success: true, contract: Contract.view(c), timestamp: yield* Instant.now } as const
        }).pipe(answer)
      )
      .handle("remove", ({ params, query }) =>
        Effect.gen(function* () {
          const client = yield* CurrentClient
          const contract = yield* contracts.get(client.id, params.contractId)
          // The bots this deletion would break are named, not found out later when nothing matches.
          const broken = (yield* bots.audit(client.id, { chainId: contract.chainId, without: contract.id })).map(
            (b) => ({ id: b.bot.id, botName: b.bot.botName, problems: b.problems })
          )
          if (broken.length > 0 && query.force !== "true") {
            return yield* new HttpErrors.Refused({
              flavour: "v2",
              status: 409,
              message: `${broken.length} bot${broken.length === 1 ? " uses" : "s use"} contract ${contract.id} (${broken.map((b) => b.botName).join(", ")}); delete with force=true to delete it anyway`,
              details: { bots: broken }
            })
          }
          yield* contracts.remove(client.id, params.contractId)
          return {
            success: true,
            message: `contract ${params.contractId} deleted`,
            ...(broken.length === 0 ? {} : { brokenBots: broken }),
            timestamp: yield* Instant.now
          } as const
        }).pipe(answer)
      )
  })
).pipe(Layer.provide(Auth.keyRateLayer))
