/** The error a command fails with when it cannot do what it was asked. */
import { Effect, Schema } from "effect"
import type { StoreError } from "@vigil/core"

/** `message` is printed as `vigil: <message>` and the process exits with code 1. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}

/** `value` with a URL's password hidden, for messages. */
export const shown = (value: string): string => value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]+):[^@]*@/i, "$1:***@")

/** Turns a storage failure of the database at `db` into the one line a command prints. */
export const databaseFailure = (db: string) => (error: StoreError.StoreError) =>
  Effect.fail(new CommandFailed({ message: `cannot use the database ${shown(db)}: ${error.reason}: ${error.message}` }))
