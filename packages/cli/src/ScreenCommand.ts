/** `vigil screen <address>... | --file FILE`: one v3 result per line; an invalid address gives an error line. */
import { EvmTransfers } from "@vigil/adapter-evm"
import { Chain, Exposure, Instant, Screening } from "@vigil/core"
import { Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { readFileSync } from "node:fs"
import { CommandFailed, databaseFailure, UsageError } from "./CommandFailed.ts"
import { IsoDate } from "./IngestCommand.ts"
import { databaseFlag, exposureSettings, readNodes } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

/** The command. */
export const command = Command.make(
  "screen",
  {
    addresses: Argument.String("address").pipe(Argument.variadic()),
    file: Flag.String("file").pipe(Flag.withDescription("Read addresses from this file, one per line"), Flag.optional),
    asOf: Flag.String("as-of").pipe(
      Flag.withSchema(IsoDate),
      Flag.withDescription("Screen against the lists as they were on this date"),
      Flag.optional
    ),
    chain: Flag.Literals("chain", ["auto", ...Chain.Network.literals]).pipe(Flag.withDefault("auto" as const)),
    details: Flag.Boolean("details").pipe(
      Flag.withDescription("Include the raw records and the score breakdown"),
      Flag.withDefault(false)
    ),
    exposure: Flag.Boolean("exposure").pipe(
      Flag.withDescription(
        "Read each address's recent transfers from the nodes of VIGIL_RPC_URL_<chainId> and screen its counterparties"
      ),
      Flag.withDefault(false)
    ),
    ruleBased: Flag.Boolean("rule-based").pipe(
      Flag.withDescription("Give the rule-based answer: no calibration (the API's enable_agentic: false)"),
      Flag.withDefault(false)
    ),
    db: databaseFlag
  },
  (args) =>
    Effect.gen(function* () {
      const file = Option.getOrUndefined(args.file)
      const fromFile =
        file !== undefined
          ? yield* Effect.try({
              try: () =>
                readFileSync(file, "utf8")
                  .split(/\r?\n/)
                  .map((l) => l.trim())
                  .filter((l) => l !== "" && !l.startsWith("#")),
              catch: (e) => new CommandFailed({ message: `cannot read ${file}: ${(e as Error).message}` })
            })
          : []
      const addresses = [...args.addresses, ...fromFile]
      if (addresses.length === 0) return yield* new UsageError({ message: "give addresses to screen, or --file FILE" })
      if (Option.isSome(args.asOf)) {
        const today = yield* Instant.today
        if (args.asOf.value > today) {
          return yield* new CommandFailed({ message: `--as-of ${args.asOf.value} is after today (${today})` })
        }
      }
      const screening = yield* Screening.Screening
      const options: Screening.Options = {
        chain: args.chain,
        includeDetails: args.details,
        ...(args.ruleBased ? { agentic: false } : {}),
        ...Option.match(args.asOf, { onNone: () => ({}), onSome: (asOf) => ({ asOf }) })
      }
      // Counterparty exposure: read from the configured nodes, judged against the lists of the screened day.
      const exposure = args.exposure
        ? yield* Effect.gen(function* () {
            const { rpcUrls } = yield* readNodes(undefined)
            if (rpcUrls.size === 0)
              return yield* new CommandFailed({
                message: "--exposure reads transfers from a node: set VIGIL_RPC_URL_<chainId> for at least one chain"
              })
            const settings = { ...Exposure.defaultSettings, ...(yield* exposureSettings()) }
            return yield* Effect.service(Exposure.Exposure).pipe(
              Effect.provide(Exposure.Exposure.layer(settings).pipe(Layer.provide(EvmTransfers.layer(rpcUrls))))
            )
          })
        : undefined
      const asOf = Option.getOrUndefined(args.asOf) ?? (yield* Instant.today)
      const complete = (address: string, result: Screening.Result) =>
        exposure === undefined
          ? Effect.succeed(result)
          : Effect.map(exposure.of(address, asOf, args.chain), (found) => Exposure.annotate(result, found))
      let invalid = 0
      yield* Effect.forEach(
        addresses,
        (address) =>
          screening.screen(address, options).pipe(
            Effect.flatMap((result) => complete(address, result)),
            Effect.map((result) => JSON.stringify(result)),
            Effect.catchTag("InvalidAddress", (e) => {
              invalid++
              return Effect.succeed(JSON.stringify({ address, error: { code: "invalid_address", message: e.message } }))
            }),
            Effect.flatMap(Console.log)
          ),
        { discard: true }
      )
      // Every address got its line; the exit status still says that not all of them could be screened.
      if (invalid > 0) {
        return yield* new CommandFailed({
          message: `${invalid} of ${addresses.length} address${addresses.length === 1 ? " was" : "es were"} not valid (see their lines)`
        })
      }
    }).pipe(
      Effect.provide(Screening.Screening.layer.pipe(Layer.provideMerge(Store.all(args.db)))),
      Effect.catchTag("StoreError", databaseFailure(args.db))
    )
).pipe(
  Command.withDescription("Screen addresses: one v3 JSON result per line"),
  Command.withExamples([
    { command: "vigil screen 0x098B716B8Aaf21512996dC57EB0615e2383E2f96", description: "One address, one JSON line" },
    {
      command: "vigil screen --file addresses.txt --as-of 2024-06-01",
      description: "Many, as the lists stood on a day"
    }
  ])
)
