/**
 * AccountReader over EVM JSON-RPC: one batch per read (`eth_getTransactionCount`, `eth_getBalance`, `eth_getCode`
 * at `latest`) to the chain's node, on Node's fetch; when they show nothing, one `eth_getLogs` for a token
 * `Transfer` to the address over the whole chain (an address that only ever received tokens is active). No retry:
 * the caller's time budget is short, and a node that does not answer makes the answer partial, not late. The RPC
 * URLs are the operator's own configuration.
 */
import { ChainActivity } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { topicOf, transferTopic } from "./EvmTransfers.ts"
import * as NodePost from "./NodePost.ts"

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
/** The answer to `eth_getLogs`: only whether it holds any log matters. */
const LogsAnswer = Schema.Struct({
  result: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  error: Schema.optionalKey(Schema.Struct({ message: Schema.String }))
})
const decodeLogsAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(LogsAnswer))

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
      const post = (body: unknown) => NodePost.post(url, body, failed)
      /** Whether a token `Transfer` log names the address as recipient, anywhere in the chain. */
      const receivedTokens = post({
        jsonrpc: "2.0",
        id: 0,
        method: "eth_getLogs",
        params: [
          {
            fromBlock: "0x0",
            toBlock: "latest",
            topics: [transferTopic, null, topicOf(address)]
          }
        ]
      }).pipe(
        Effect.flatMap((text) =>
          Effect.mapError(decodeLogsAnswer(text), () => failed("eth_getLogs: the answer is not JSON-RPC"))
        ),
        Effect.flatMap((answer) =>
          answer.result === undefined
            ? Effect.fail(
                failed(
                  `its nonce, balance and code show nothing, and its token receipts could not be read (eth_getLogs: ${answer.error?.message ?? "no result"})`
                )
              )
            : Effect.succeed(answer.result.length > 0)
        )
      )
      return post(calls).pipe(
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
        }),
        Effect.flatMap((account) =>
          ChainActivity.isActive(account)
            ? Effect.succeed(account)
            : Effect.map(receivedTokens, (received) => ({ ...account, receivedTokens: received }))
        )
      )
    }
  })
