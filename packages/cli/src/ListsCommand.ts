/**
 * `vigil lists`: the lists ingested, their current version and counts, one JSON line each; `--delete` removes
 * one, `--rollback` withdraws a list's current version, `--redate` corrects a version's date.
 */
import { Ingestion, Instant, IntelIndex } from "@vigil/core"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

/** The JSON line of an amendment: what was done, and the version in force afterwards. */
const amended = (action: "rolled_back" | "redated", o: IntelIndex.AmendOutcome, extra: object = {}) => ({
  [action]: o.list,
  version: o.version,
  ...extra,
  current: o.current,
  as_of: o.asOf,
  active: o.active,
  delisted: o.delisted
})

/** The command. */
export const command = Command.make(
  "lists",
  {
    delete: Flag.String("delete").pipe(
      Flag.withDescription("Delete this list: its records leave every answer at once; the deletion is recorded"),
      Flag.optional
    ),
    rollback: Flag.String("rollback").pipe(
      Flag.withDescription(
        "Withdraw this list's current version: the list becomes what its earlier versions made it; recorded"
      ),
      Flag.optional
    ),
    redate: Flag.String("redate").pipe(
      Flag.withDescription("Correct the date of a version of this list (with --version N and --as-of YYYY-MM-DD)"),
      Flag.optional
    ),
    version: Flag.Int("version").pipe(Flag.withDescription("The version --redate corrects"), Flag.optional),
    asOf: Flag.String("as-of").pipe(
      Flag.withSchema(Instant.IsoDate),
      Flag.withDescription("The date --redate gives the version"),
      Flag.optional
    ),
    db: databaseFlag
  },
  (args) =>
    Effect.gen(function* () {
      const actions = [args.delete, args.rollback, args.redate].filter(Option.isSome).length
      if (actions > 1) return yield* new UsageError({ message: "give one of --delete, --rollback, --redate" })
      if (Option.isSome(args.delete)) {
        const list = args.delete.value
        const removed = yield* (yield* IntelIndex.Administration).remove(list, yield* Instant.now)
        if (removed === undefined)
          return yield* new CommandFailed({ message: `no list named ${list}; nothing changed` })
        return yield* JsonLine.print({ deleted: removed.list, version: removed.version, records: removed.records })
      }
      if (Option.isSome(args.rollback)) {
        const outcome = yield* Ingestion.Ingest.rollback(args.rollback.value)
        return yield* JsonLine.print(amended("rolled_back", outcome))
      }
      if (Option.isSome(args.redate)) {
        if (Option.isNone(args.version) || Option.isNone(args.asOf))
          return yield* new UsageError({ message: "--redate needs --version N and --as-of YYYY-MM-DD" })
        const outcome = yield* Ingestion.Ingest.redate(args.redate.value, args.version.value, args.asOf.value)
        return yield* JsonLine.print(amended("redated", outcome, { to: args.asOf.value }))
      }
      for (const list of yield* (yield* IntelIndex.IntelIndex).lists) yield* JsonLine.print(list)
    }).pipe(
      Effect.catchTag("AmendRefused", (e) =>
        Effect.fail(new CommandFailed({ message: `${e.message}; nothing changed` }))
      ),
      Effect.provide(Store.all(args.db)),
      Effect.catchTag("StoreError", databaseFailure(args.db))
    )
).pipe(
  Command.withDescription(
    "Show the ingested lists and their versions; --delete NAME, --rollback NAME, or --redate NAME --version N --as-of DATE"
  ),
  Command.withExamples([
    { command: "vigil lists", description: "Every list with its version and dates" },
    { command: "vigil lists --rollback ofac-sdn", description: "Withdraw a list's newest version" }
  ])
)
