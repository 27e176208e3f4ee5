/**
 * `vigil follow reset --chain N [--at BLOCK] [--rpc URL] [--db PATH]`: re-anchors a chain's follower after a
 * reorganisation deeper than it keeps hashes for (it is halted, and `/health` answers 503 FollowHalted): the
 * cursor is set to the node's block `--at` (default its head), and each standing alert of the chain is kept,
 * retracted or marked unverified against the node's chain (`Reanchor`). Prints one JSON line of what it did.
 * The node is `--rpc`, else `VIGIL_RPC_URL_<chainId>`. A running server picks the new cursor up at its next step.
 */
import { EvmRpc } from "@vigil/adapter-evm"
import { ChainData, Reanchor } from "@vigil/core"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure, needsSubcommand, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

const reset = Command.make(
  "reset",
  {
    db: databaseFlag,
    chain: Flag.Int("chain").pipe(Flag.withDescription("Chain id of the follower to re-anchor (required)")),
    at: Flag.Int("at").pipe(Flag.withDescription("Block to re-anchor at (default: the node's head)"), Flag.optional),
    rpc: Flag.String("rpc").pipe(
      Flag.withDescription("JSON-RPC URL of the chain's node (default: VIGIL_RPC_URL_<chainId>)"),
      Flag.optional
    )
  },
  ({ db, chain, at, rpc }) =>
    Effect.gen(function* () {
      const url = Option.getOrUndefined(rpc) ?? process.env[`VIGIL_RPC_URL_${chain}`]
      if (url === undefined || url === "")
        return yield* new CommandFailed({
          message: `no node for chain ${chain}: give --rpc URL or set VIGIL_RPC_URL_${chain}`
        })
      if (!URL.canParse(url) || !["http:", "https:"].includes(new URL(url).protocol))
        return yield* new UsageError({ message: `--rpc ${url} is not an http(s) URL` })
      const done = yield* Reanchor.reset(chain, Option.getOrUndefined(at)).pipe(
        Effect.provideService(ChainData.ChainData, EvmRpc.make({ urls: new Map([[chain, url]]) })),
        Effect.provide(Store.all(db)),
        Effect.catchTags({
          StoreError: databaseFailure(db),
          ReanchorRefused: (e) => Effect.fail(new CommandFailed({ message: e.message })),
          ChainDataError: (e) => Effect.fail(new CommandFailed({ message: `${url}: ${e.message}` }))
        })
      )
      yield* JsonLine.print(done)
    })
).pipe(
  Command.withDescription(
    "Re-anchor a chain's follower halted by a reorganisation deeper than the hashes kept: cursor at the node's block, alerts kept, retracted or marked unverified"
  ),
  Command.withExamples([
    { command: "vigil follow reset --chain 1 --at 19000000", description: "Re-anchor chain 1's follower" }
  ])
)

/** The command group. */
export const command = Command.make("follow", {}, needsSubcommand("vigil follow", ["reset"])).pipe(
  Command.withDescription("Following chains: re-anchor a halted follower"),
  Command.withSubcommands([reset])
)
