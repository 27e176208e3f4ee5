/** The error a command fails with when it cannot do what it was asked. */
import { Effect, Schema } from "effect"
import type { StoreError } from "@vigil/core"

/** `message` is printed as `vigil: <message>` and the process exits with code 1. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}

/**
 * The command line itself is wrong (a command without its subcommand, flags that do not go together): printed as one
 * line on stderr, and the process exits with code 2.
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/** The handler of a command that only groups subcommands: run alone, a usage error naming them. */
export const needsSubcommand = (path: string, subcommands: ReadonlyArray<string>) => () =>
  Effect.fail(
    new UsageError({
      message: `${path}: a subcommand is required (${subcommands.join(", ")}); see ${path} --help`
    })
  )

/** `value` with a URL's password hidden, for messages. */
export const shown = (value: string): string => value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]+):[^@]*@/i, "$1:***@")

/** Turns a storage failure of the database at `db` into the one line a command prints. */
export const databaseFailure = (db: string) => (error: StoreError.StoreError) =>
  Effect.fail(new CommandFailed({ message: `cannot use the database ${shown(db)}: ${error.reason}: ${error.message}` }))
