/**
 * AccountReader over EVM JSON-RPC: one batch per read (`eth_getTransactionCount`, `eth_getBalance`, `eth_getCode`
 * at `latest`) to the chain's node, on Node's fetch. No retry: the caller's time budget is short, and a node that
 * does not answer makes the answer partial, not late. The RPC URLs are the operator's own configuration.
 */
import { ChainActivity } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"

const Quantity = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]*$/))

/** A JSON-RPC batch answer of the three reads (in any order, by id). */
const Answers = Schema.Array(
  Schema.Struct({
    id: Schema.Number,
    result: Schema.optionalKey(Quantity),
    error: Schema.optionalKey(Schema.Struct({ message: Schema.String }))
  })
)
const decodeAnswers = Schema.decodeUnknownEffect(Schema.fromJsonString(Answers))
const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

const quantity = (hex: string): bigint => (hex === "0x" ? 0n : BigInt(hex))

/** The reader of the nodes in `urls` (chain id → JSON-RPC URL). */
export const layer = (urls: ReadonlyMap<number, string>): Layer.Layer<ChainActivity.AccountReader> =>
  Layer.succeed(ChainActivity.AccountReader)({
    chains: [...urls.keys()],
    read: (chainId, address) => {
      const url = urls.get(chainId)
      const failed = (message: string) => new ChainActivity.AccountReadError({ message })
      if (url === undefined) return Effect.fail(failed(`no node for chain ${chainId}`))
      const calls = ["eth_getTransactionCount", "eth_getBalance", "eth_getCode"].map((method, id) => ({
        jsonrpc: "2.0",
        id,
        method,
        params: [address, "latest"]
      }))
      return Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: encodeJson(calls),
            signal
          })
          if (!response.ok) throw new Error(`the node answered HTTP ${response.status}`)
          return await response.text()
        },
        catch: (e) => failed(`the node could not be read: ${(e as Error).message}`)
      }).pipe(
        Effect.flatMap((text) =>
          Effect.mapError(decodeAnswers(text), () => failed("the node's answer is not a JSON-RPC batch of quantities"))
        ),
        Effect.flatMap((answers) => {
          const results: Array<string> = []
          for (let id = 0; id < calls.length; id++) {
            const answer = answers.find((a) => a.id === id)
            if (answer?.result === undefined)
              return Effect.fail(failed(`${calls[id]!.method}: ${answer?.error?.message ?? "no result"}`))
            results.push(answer.result)
          }
          return Effect.succeed({ nonce: quantity(results[0]!), balance: quantity(results[1]!), code: results[2]! })
        })
      )
    }
  })
