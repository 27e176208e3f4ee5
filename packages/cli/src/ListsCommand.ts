/** `vigil lists`: the lists ingested, their current version and counts, one JSON line each; `--delete` removes one. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { Instant, IntelIndex } from "@vigil/core"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"

/** The command. */
export const command = Command.make(
  "lists",
  {
    delete: Flag.String("delete").pipe(
      Flag.withDescription("Delete this list: its records leave every answer at once; the deletion is recorded"),
      Flag.optional
    ),
    db: databaseFlag
  },
  (args) =>
    Effect.gen(function* () {
      const index = yield* IntelIndex.IntelIndex
      if (Option.isSome(args.delete)) {
        const list = args.delete.value
        const removed = yield* index.remove(list, yield* Instant.now)
        if (removed === undefined)
          return yield* new CommandFailed({ message: `no list named ${list}; nothing changed` })
        return yield* JsonLine.print({ deleted: removed.list, version: removed.version, records: removed.records })
      }
      for (const list of yield* index.lists) yield* JsonLine.print(list)
    }).pipe(
      Effect.provide(SqliteAdapter.layer({ filename: args.db })),
      Effect.catchTag("StoreError", databaseFailure(args.db))
    )
).pipe(Command.withDescription("Show the ingested lists and their versions, or delete one (--delete NAME)"))
