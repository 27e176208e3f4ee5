/** The error a command fails with when it cannot do what it was asked. */
import { Schema } from "effect"

/** `message` is printed as `vigil: <message>` and the process exits with code 1. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String
}) {}
