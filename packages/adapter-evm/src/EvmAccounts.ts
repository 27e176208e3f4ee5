/**
 * AccountReader over EVM JSON-RPC (through `JsonRpc`): one batch per read (`eth_getTransactionCount`, `eth_getBalance`,
 * `eth_getCode` at `latest`) to the chain's node; when they show nothing, one `eth_getLogs` for a token `Transfer` to
 * the address over the whole chain (an address that only ever received tokens is active). No retry: the caller's
 * time budget is short, and a node that does not answer makes the answer partial, not late. The RPC URLs are the
 * operator's own configuration.
 */
import { ChainActivity } from "@vigil/core"
import { Effect, Layer, Schema } from "effect"
import { topicOf, transferTopic } from "./EvmTransfers.ts"
import * as JsonRpc from "./JsonRpc.ts"

const Quantity = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]*$/))
const isQuantity = Schema.is(Quantity)
/** The answer to `eth_getLogs`: only whether it holds any log matters. */
const decodeLogs = Schema.decodeUnknownEffect(Schema.Array(Schema.Unknown))

const quantity = (hex: string): bigint => (hex === "0x" ? 0n : BigInt(hex))

/** The reader of the nodes in `urls` (chain id → JSON-RPC URL). */
export const layer = (urls: ReadonlyMap<number, string>): Layer.Layer<ChainActivity.AccountReader> =>
  Layer.succeed(ChainActivity.AccountReader)({
    chains: [...urls.keys()],
    read: (chainId, address) => {
      const url = urls.get(chainId)
      const failed = (message: string) => new ChainActivity.AccountReadError({ message })
      if (url === undefined) return Effect.fail(failed(`no node for chain ${chainId}`))
      const methods = ["eth_getTransactionCount", "eth_getBalance", "eth_getCode"] as const
      const refused = (e: JsonRpc.RpcFailure) => failed(`the node could not be read: ${e.message}`)
      /** Whether a token `Transfer` log names the address as recipient, anywhere in the chain. */
      const receivedTokens = JsonRpc.call(url, "eth_getLogs", [
        { fromBlock: "0x0", toBlock: "latest", topics: [transferTopic, null, topicOf(address)] }
      ]).pipe(
        Effect.flatMap((result) =>
          Effect.mapError(decodeLogs(result), () => failed("eth_getLogs: the answer is not a list of logs"))
        ),
        Effect.mapError((e) =>
          e._tag === "RpcFailure"
            ? failed(
                `its nonce, balance and code show nothing, and its token receipts could not be read (${e.message})`
              )
            : e
        ),
        Effect.map((logs) => logs.length > 0)
      )
      return JsonRpc.batch(
        url,
        methods.map((method) => ({ method, params: [address, "latest"] }))
      ).pipe(
        Effect.mapError(refused),
        Effect.flatMap((answers) => {
          const results: Array<string> = []
          for (const [i, answer] of answers.entries()) {
            if (!answer.ok) return Effect.fail(failed(`${methods[i]}: ${answer.message}`))
            if (!isQuantity(answer.result))
              return Effect.fail(failed(`${methods[i]}: the node's answer is not a quantity`))
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
