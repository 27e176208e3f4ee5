/** `vigil ingest <kind> <file-or-url>`: stores a list as a new version, atomically; `--config` ingests several. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { Intel, type IntelIndex, Ingestion } from "@vigil/core"
import { SingleBar } from "cli-progress"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { readFileSync } from "node:fs"
import { basename, dirname, resolve } from "node:path"
import { CommandFailed, databaseFailure } from "./CommandFailed.ts"
import * as Input from "./Input.ts"
import { databaseFlag } from "./ServeCommand.ts"

/** The kinds of input `vigil ingest` reads. */
export const kinds = ["ofac-sdn-xml", "ofac-sdn-csv", "usdt-events", "graphsense", "labels", "address-list"] as const
export type Kind = (typeof kinds)[number]

/** A date given as YYYY-MM-DD. */
export const IsoDate = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "Expected a date as YYYY-MM-DD" })
)

/** One source to ingest, as given on the command line or in a `--config` file. */
export const SourceSpec = Schema.Struct({
  kind: Schema.Literals(kinds),
  input: Schema.NonEmptyString,
  list: Schema.optionalKey(Schema.NonEmptyString),
  source: Schema.optionalKey(Schema.NonEmptyString),
  category: Schema.optionalKey(Intel.Category),
  label: Schema.optionalKey(Schema.NonEmptyString),
  format: Schema.optionalKey(Schema.Literals(Ingestion.Labels.formats)),
  asOf: Schema.optionalKey(IsoDate)
})
export type SourceSpec = typeof SourceSpec.Type

/** Turns a source spec into the ingest request and parser of its kind. */
export const plan = (
  spec: SourceSpec
): Effect.Effect<{ request: Ingestion.Ingest.Request; parser: Ingestion.Parser.Parser }, CommandFailed> => {
  const common = { kind: spec.kind, origin: spec.input, ...(spec.asOf === undefined ? {} : { asOf: spec.asOf }) }
  switch (spec.kind) {
    case "ofac-sdn-xml":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "ofac-sdn", source: spec.source ?? "OFAC", mode: "snapshot" },
        parser: Ingestion.OfacSdnXml.make()
      })
    case "ofac-sdn-csv":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "ofac-sdn-csv", source: spec.source ?? "OFAC", mode: "snapshot" },
        parser: Ingestion.OfacSdnCsv.make()
      })
    case "usdt-events":
      return Effect.succeed({
        request: { ...common, list: spec.list ?? "usdt-ethereum", source: spec.source ?? "Tether", mode: "history" },
        parser: Ingestion.UsdtEvents.make({ label: spec.label ?? "USDT" })
      })
    case "graphsense":
      return Effect.succeed({
        request: {
          ...common,
          list: spec.list ?? `graphsense-${basename(spec.input).replace(/\.ya?ml$/i, "")}`,
          source: spec.source ?? "GraphSense",
          mode: "snapshot"
        },
        parser: Ingestion.GraphSense.make()
      })
    case "labels": {
      const list = spec.list ?? `labels-${basename(spec.input).replace(/\.(json|csv)$/i, "")}`
      return Effect.succeed({
        request: { ...common, list, source: spec.source ?? list, mode: "snapshot" },
        parser: Ingestion.Labels.make({
          list,
          ...(spec.format === undefined ? {} : { format: spec.format }),
          ...(spec.category === undefined ? {} : { category: spec.category })
        })
      })
    }
    case "address-list":
      if (spec.list === undefined || spec.category === undefined) {
        return Effect.fail(new CommandFailed({ message: "address-list needs --list NAME and --category CATEGORY" }))
      }
      return Effect.succeed({
        request: { ...common, list: spec.list, source: spec.source ?? spec.list, mode: "snapshot" },
        parser: Ingestion.AddressList.make({
          list: spec.list,
          category: spec.category,
          ...(spec.label === undefined ? {} : { label: spec.label })
        })
      })
  }
}

/** One line saying what an ingest did. */
export const summary = (origin: string, o: Ingestion.Ingest.Outcome): string => {
  const skipped = o.skipped.count === 0 ? "" : `; skipped ${o.skipped.count} (first: ${o.skipped.examples[0] ?? ""})`
  return o.status === "unchanged"
    ? `${o.list}: unchanged, ${origin} is identical to the current version${skipped}`
    : `${o.list}: version ${o.version} as of ${o.asOf} from ${origin}: ${o.records} records (added ${o.added}, de-listed ${o.delisted}, unchanged ${o.unchanged})${skipped}`
}

/** Ingests one source: progress bar on a terminal, one summary line either way. */
export const ingestOne = (
  spec: SourceSpec
): Effect.Effect<Ingestion.Ingest.Outcome, CommandFailed, IntelIndex.IntelIndex> =>
  Effect.gen(function* () {
    const { request, parser } = yield* plan(spec)
    const input = yield* Input.open(spec.input)
    const tty = process.stderr.isTTY === true
    const bar = tty
      ? new SingleBar({
          format: `${request.list} [{bar}] {percentage}% | {value}/{total} bytes | {records} records`,
          hideCursor: true
        })
      : undefined
    bar?.start(input.size ?? 0, 0, { records: 0 })
    const outcome = yield* Ingestion.Ingest.run(request, parser, input.bytes, (bytes, records) =>
      bar?.update(bytes, { records })
    ).pipe(
      Effect.ensuring(Effect.sync(() => bar?.stop())),
      Effect.catchTags({
        IngestFailed: (e) => Effect.fail(new CommandFailed({ message: e.message })),
        StoreError: (e) =>
          Effect.fail(
            new CommandFailed({ message: `${request.list}: storage: ${e.reason}: ${e.message}; nothing changed` })
          )
      })
    )
    yield* Console.log(summary(spec.input, outcome))
    return outcome
  })

const readConfig = (path: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) => new CommandFailed({ message: `cannot read ${path}: ${(e as Error).message}` })
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new CommandFailed({ message: `${path}: not valid JSON: ${(e as Error).message}` })
    })
    const specs = yield* Schema.decodeUnknownEffect(Schema.Struct({ sources: Schema.Array(SourceSpec) }))(json).pipe(
      Effect.mapError((e) => new CommandFailed({ message: `${path}: ${e.message}` }))
    )
    const base = dirname(resolve(path))
    return specs.sources.map((s) => (/^https?:\/\//i.test(s.input) ? s : { ...s, input: resolve(base, s.input) }))
  })

/** The command. */
export const command = Command.make(
  "ingest",
  {
    kind: Argument.Literals("kind", kinds).pipe(Argument.optional),
    input: Argument.String("file-or-url").pipe(Argument.optional),
    config: Flag.String("config").pipe(
      Flag.withDescription("JSON file {sources:[{kind,input,list?,category?,...}]}"),
      Flag.optional
    ),
    list: Flag.String("list").pipe(Flag.withDescription("List name (address-list: required)"), Flag.optional),
    source: Flag.String("source").pipe(Flag.withDescription("Publisher shown as the signal source"), Flag.optional),
    category: Flag.Literals("category", Intel.Category.literals).pipe(
      Flag.withDescription("Category of every address (address-list)"),
      Flag.optional
    ),
    label: Flag.String("label").pipe(Flag.withDescription("Label shown with each record"), Flag.optional),
    format: Flag.Literals("format", Ingestion.Labels.formats).pipe(
      Flag.withDescription("Label file format (labels; detected when omitted)"),
      Flag.optional
    ),
    asOf: Flag.String("as-of").pipe(
      Flag.withSchema(IsoDate),
      Flag.withDescription("Date the version speaks for, when the data states none"),
      Flag.optional
    ),
    db: databaseFlag
  },
  (args) =>
    Effect.gen(function* () {
      const specs: ReadonlyArray<SourceSpec> = Option.isSome(args.config)
        ? yield* readConfig(args.config.value)
        : Option.isSome(args.kind) && Option.isSome(args.input)
          ? [
              {
                kind: args.kind.value,
                input: args.input.value,
                ...Option.match(args.list, { onNone: () => ({}), onSome: (list) => ({ list }) }),
                ...Option.match(args.source, { onNone: () => ({}), onSome: (source) => ({ source }) }),
                ...Option.match(args.category, { onNone: () => ({}), onSome: (category) => ({ category }) }),
                ...Option.match(args.label, { onNone: () => ({}), onSome: (label) => ({ label }) }),
                ...Option.match(args.format, { onNone: () => ({}), onSome: (format) => ({ format }) }),
                ...Option.match(args.asOf, { onNone: () => ({}), onSome: (asOf) => ({ asOf }) })
              }
            ]
          : yield* new CommandFailed({
              message: `give <kind> <file-or-url> (kinds: ${kinds.join(", ")}) or --config FILE`
            })
      yield* Effect.forEach(specs, ingestOne, { discard: true }).pipe(
        Effect.provide(SqliteAdapter.layer({ filename: args.db })),
        Effect.catchTag("StoreError", databaseFailure(args.db))
      )
    })
).pipe(
  Command.withDescription(
    "Ingest a list (ofac-sdn-xml, ofac-sdn-csv, usdt-events, graphsense, labels, address-list) as a new version, atomically"
  )
)
