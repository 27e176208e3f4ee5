/** `vigil refresh`: the official lists brought up to date from their publishers, one line (or JSON record) per list. */
import { Refresh } from "@vigil/engine"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { chainsFile, databaseFlag, loadMonitoringOptions, refreshSettings } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

/** The command. */
export const command = Command.make(
  "refresh",
  {
    db: databaseFlag,
    chains: chainsFile,
    sdnUrl: Flag.String("sdn-url").pipe(
      Flag.withDescription(
        `Where to fetch OFAC's SDN Advanced XML (default VIGIL_REFRESH_SDN_URL, else ${Refresh.ofacSdnUrl})`
      ),
      Flag.optional
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("One JSON record per list ({list, status, line, outcome?}) instead of a line of text"),
      Flag.withDefault(false)
    )
  },
  ({ db, chains, sdnUrl, json }) =>
    Effect.gen(function* () {
      const monitoring = yield* loadMonitoringOptions(Option.getOrUndefined(chains))
      const settings = yield* refreshSettings(monitoring, sdnUrl)
      const reports = yield* Refresh.run(settings).pipe(
        Effect.provide(Store.all(db)),
        Effect.catchTag("StoreError", databaseFailure(db))
      )
      for (const r of reports)
        yield* json
          ? JsonLine.print(r)
          : r.status === "failed"
            ? Console.error(`vigil: ${r.line}`)
            : Console.log(r.line)
      const failed = reports.filter((r) => r.status === "failed")
      if (failed.length > 0)
        return yield* new CommandFailed({
          message: `${failed.map((r) => r.list).join(", ")} not refreshed; the lists in force keep serving`
        })
    })
).pipe(
  Command.withDescription(
    "Refresh the official lists from their publishers: OFAC's SDN from its URL, USDT's and USDC's freezes from the Ethereum node (VIGIL_RPC_URL_1), read on from the last block read"
  ),
  Command.withExamples([
    { command: "vigil refresh", description: "The official lists from their publishers" },
    {
      command: "VIGIL_RPC_URL_1=https://eth.example vigil refresh --json",
      description: "With an Ethereum node, as JSON records"
    }
  ])
)
