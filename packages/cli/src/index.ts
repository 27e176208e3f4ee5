/** The `vigil` command, importable for embedding and tests. */
export * as Cli from "./Cli.ts"
export * as DetectCommand from "./DetectCommand.ts"
export * as IngestCommand from "./IngestCommand.ts"
export * as ListsCommand from "./ListsCommand.ts"
export * as ScreenCommand from "./ScreenCommand.ts"
export * as CommandFailed from "./CommandFailed.ts"
export * as ServeCommand from "./ServeCommand.ts"
export * as Store from "./Store.ts"
