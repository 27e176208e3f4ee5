/** The `vigil` command and its subcommands, and how its outcome becomes an exit code. */
import { Version } from "@vigil/core"
import { Cause, Console, Effect, Exit, Runtime } from "effect"
import { Command } from "effect/cli"
import * as CalibrateCommand from "./CalibrateCommand.ts"
import * as CheckCommand from "./CheckCommand.ts"
import * as DetectCommand from "./DetectCommand.ts"
import * as FollowCommand from "./FollowCommand.ts"
import * as IngestCommand from "./IngestCommand.ts"
import * as KeysCommand from "./KeysCommand.ts"
import * as ListsCommand from "./ListsCommand.ts"
import * as MigrateStoreCommand from "./MigrateStoreCommand.ts"
import * as MonitorCommand from "./MonitorCommand.ts"
import * as RulesCommand from "./RulesCommand.ts"
import * as ScreenCommand from "./ScreenCommand.ts"
import * as ServeCommand from "./ServeCommand.ts"

/** The root command. */
export const vigil = Command.make("vigil").pipe(
  Command.withDescription("Vigil: blockchain address risk screening and smart-contract monitoring"),
  Command.withSubcommands([
    ServeCommand.command,
    DetectCommand.command,
    IngestCommand.command,
    CalibrateCommand.command,
    ScreenCommand.command,
    ListsCommand.command,
    MigrateStoreCommand.command,
    KeysCommand.command,
    CheckCommand.command,
    RulesCommand.command,
    MonitorCommand.command,
    FollowCommand.command
  ])
)

/** Runs a command line (`process.argv` form); a CommandFailed is printed on stderr and yields exit code 1. */
export const run = (argv: ReadonlyArray<string>) =>
  Command.runWith(vigil, { version: Version.version })(argv).pipe(
    Effect.as(0),
    Effect.catchTag("CommandFailed", (error) => Console.error(`vigil: ${error.message}`).pipe(Effect.as(1)))
  )

/**
 * Exit codes: the program's own code on success, 0 after an orderly shutdown on SIGINT/SIGTERM
 * (interruption only), and Effect's default (1, with the cause reported) for anything unexpected.
 */
export const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : 0)
  if (Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
  return Runtime.defaultTeardown(exit, onExit)
}
