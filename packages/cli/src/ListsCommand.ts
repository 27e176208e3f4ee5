/** `vigil lists`: the lists ingested, their current version and counts, one JSON line each. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IntelIndex } from "@vigil/core"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { databaseFailure } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"

/** The command. */
export const command = Command.make("lists", { db: databaseFlag }, ({ db }) =>
  Effect.gen(function* () {
    const index = yield* IntelIndex.IntelIndex
    for (const list of yield* index.lists) yield* JsonLine.print(list)
  }).pipe(Effect.provide(SqliteAdapter.layer({ filename: db })), Effect.catchTag("StoreError", databaseFailure(db)))
).pipe(Command.withDescription("Show the ingested lists and their versions"))
