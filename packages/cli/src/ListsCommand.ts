/** `vigil lists`: the lists ingested, their current version and counts, one JSON line each. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IntelIndex } from "@vigil/core"
import { Console, Effect } from "effect"
import { Command } from "effect/cli"
import { databaseFailure } from "./CommandFailed.ts"
import { databaseFlag } from "./ServeCommand.ts"

/** The command. */
export const command = Command.make("lists", { db: databaseFlag }, ({ db }) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.IntelIndex
    for (const list of yield* index.lists) yield* Console.log(JSON.stringify(list))
  }).pipe(Effect.provide(SqliteAdapter.layer({ filename: db })), Effect.catchTag("StoreError", databaseFailure(db)))
).pipe(Command.withDescription("Show the ingested lists and their versions"))
