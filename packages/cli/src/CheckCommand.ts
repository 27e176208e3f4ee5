/**
 * `vigil check`: verifies the database as the server does when it starts (SQLite's full integrity check, and each
 * list's records against the digest written with their last change) and prints what it found as one JSON line.
 */
import { IntelIndex, StorageProbe } from "@vigil/core"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { CommandFailed, databaseFailure } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

/** The command: exit 0 when nothing is wrong, 1 (after the report) when verification found damage. */
export const command = Command.make("check", { db: databaseFlag }, ({ db }) =>
  Effect.gen(function* () {
    const status = yield* Effect.flatMap(StorageProbe.StorageProbe, (probe) => probe.check)
    const lists = yield* Effect.flatMap(IntelIndex.IntelIndex, (index) => index.lists)
    yield* JsonLine.print({
      database: db,
      integrity: status.integrity.status,
      problems: status.integrity.problems,
      checked_at: status.integrity.checkedAt,
      schema_version: status.schemaVersion,
      lists: lists.length,
      damaged_lists: lists.filter((l) => l.problem !== undefined).map((l) => l.list)
    })
    if (status.integrity.status === "failed") {
      return yield* new CommandFailed({
        message: `${db} failed verification: ${status.integrity.problems.length} problem(s), first: ${status.integrity.problems[0] ?? ""}`
      })
    }
  }).pipe(Effect.provide(Store.all(db)), Effect.catchTag("StoreError", databaseFailure(db)))
).pipe(
  Command.withDescription(
    "Verify the database: SQLite's full integrity check and every list's records against their digest; exit 1 on damage"
  ),
  Command.withExamples([{ command: "vigil check", description: "Verify the store" }])
)
