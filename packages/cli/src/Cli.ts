/** The `vigil` command and its subcommands, and how its outcome becomes an exit code. */
import { Version } from "@vigil/core"
import { Cause, Config, Console, Effect, Exit, Option, Runtime } from "effect"
import { CliError, Command } from "effect/cli"
import * as CalibrateCommand from "./CalibrateCommand.ts"
import * as CheckCommand from "./CheckCommand.ts"
import * as DemoCommand from "./DemoCommand.ts"
import * as DetectCommand from "./DetectCommand.ts"
import * as FollowCommand from "./FollowCommand.ts"
import * as IngestCommand from "./IngestCommand.ts"
import * as KeysCommand from "./KeysCommand.ts"
import * as ListsCommand from "./ListsCommand.ts"
import * as MigrateStoreCommand from "./MigrateStoreCommand.ts"
import * as MonitorCommand from "./MonitorCommand.ts"
import * as RefreshCommand from "./RefreshCommand.ts"
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
    RefreshCommand.command,
    CalibrateCommand.command,
    ScreenCommand.command,
    ListsCommand.command,
    MigrateStoreCommand.command,
    KeysCommand.command,
    CheckCommand.command,
    RulesCommand.command,
    MonitorCommand.command,
    FollowCommand.command,
    DemoCommand.command
  ])
)

/** The environment variable a flag fell back to, when its value was refused. */
const variableOf = (error: CliError.CliError): string | undefined =>
  error._tag === "InvalidValue" && error.value === "config"
    ? /at \["([A-Z0-9_]+)"\]/.exec(error.expected)?.[1]
    : undefined

/** A usage error's problem in words; a bad environment value named with its variable and value. */
const problemOf = (error: CliError.CliError, environment: (variable: string) => string | undefined): string => {
  if (error._tag === "InvalidValue" && error.value === "config") {
    // A flag's fallback variable held something the flag does not take.
    const variable = variableOf(error)
    const expected = error.expected
      .replace(/^SchemaError\(/, "")
      .replace(/\s*at \[.*$/s, "")
      .replace("a string representing a finite number", "a number")
    const value = variable === undefined ? undefined : environment(variable)
    return variable === undefined
      ? `invalid value for --${error.option}: ${expected.charAt(0).toLowerCase()}${expected.slice(1)}`
      : `invalid ${variable} ${JSON.stringify(value ?? "")} (the --${error.option} setting): ${expected.charAt(0).toLowerCase()}${expected.slice(1)}`
  }
  const text = (error.message.split("\n")[0] ?? error._tag).replace("a string representing a finite number", "a number")
  return `${text.charAt(0).toLowerCase()}${text.slice(1)}`
}

/** The commands that group subcommands. */
const groups = new Set(["keys", "rules", "monitor", "follow"])

/** The command a command line runs, e.g. `vigil keys create`. */
const commandOf = (argv: ReadonlyArray<string>): string => {
  const [first, second] = argv
  return first === undefined || first.startsWith("-")
    ? "vigil"
    : groups.has(first) && second !== undefined && !second.startsWith("-")
      ? `vigil ${first} ${second}`
      : `vigil ${first}`
}

/** The one line a usage error prints: the command, the problem, and the help to read. */
export const usageLine = (
  error: CliError.ShowHelp,
  environment: (variable: string) => string | undefined = () => undefined
): string => {
  const path = error.commandPath.join(" ")
  const first = error.errors[0]
  const problem = first === undefined ? "a subcommand is required" : problemOf(first, environment)
  const more = error.errors.length > 1 ? ` (and ${error.errors.length - 1} more)` : ""
  return `${path}: ${problem}${more}; see ${path} --help`
}

/**
 * Runs a command line (`process.argv` form). Exit codes: 0 done; 1 a CommandFailed (printed on stderr as
 * `vigil: <message>`); 2 a usage error (an unknown command or flag, a missing argument, a bad value), printed as one
 * line on stderr naming it and the `--help` to read. Standard output carries only what a command prints once it runs
 * (or the help and version asked for), never a help text after a mistake. With no arguments, the help.
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const console = yield* Console.Console
    // Until a handler starts, what goes to stdout is held: the help printed after a usage error is dropped.
    let started = false
    const held: Array<ReadonlyArray<unknown>> = []
    const start = () => {
      started = true
      for (const args of held.splice(0)) console.log(...args)
    }
    const gated: Console.Console = Object.assign(Object.create(console) as Console.Console, {
      log: (...args: ReadonlyArray<unknown>) => (started ? console.log(...args) : void held.push(args))
    })
    const line = argv.length === 0 ? ["--help"] : argv
    return yield* Command.runWith(vigil.pipe(Command.provideEffectDiscard(Effect.sync(start))), {
      version: Version.version,
      renderErrors: false
    })(line).pipe(
      Effect.tap(() => Effect.sync(start)),
      Effect.as(0),
      Effect.catchTag("CommandFailed", (error) => Console.error(`vigil: ${error.message}`).pipe(Effect.as(1))),
      Effect.catchTag("UsageError", (error) =>
        Console.error(
          error.message.startsWith("vigil")
            ? error.message
            : `${commandOf(line)}: ${error.message}; see ${commandOf(line)} --help`
        ).pipe(Effect.as(2))
      ),
      Effect.catchIf(
        (error): error is CliError.ShowHelp => CliError.isCliError(error) && error._tag === "ShowHelp",
        (error) =>
          Effect.gen(function* () {
            const variable = error.errors[0] === undefined ? undefined : variableOf(error.errors[0])
            const value =
              variable === undefined
                ? undefined
                : Option.getOrUndefined(
                    yield* Config.String(variable).pipe(Config.option, Effect.orElseSucceed(Option.none))
                  )
            yield* Console.error(usageLine(error, () => value))
            return 2
          })
      ),
      Effect.provideService(Console.Console, gated)
    )
  })

/**
 * Exit codes: the program's own code on success, 0 after an orderly shutdown on SIGINT/SIGTERM
 * (interruption only), and Effect's default (1, with the cause reported) for anything unexpected.
 */
export const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : 0)
  if (Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
  return Runtime.defaultTeardown(exit, onExit)
}
