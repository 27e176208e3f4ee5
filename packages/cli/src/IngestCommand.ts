/** `vigil ingest <kind> <file-or-url>`: stores a list as a new version, atomically; `--config` ingests several. */
import { Intel, type IntelIndex, Ingestion } from "@vigil/core"
import { SingleBar } from "cli-progress"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { CommandFailed, databaseFailure, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { Input } from "@vigil/engine"
import { databaseFlag } from "./ServeCommand.ts"
import * as CalibrateCommand from "./CalibrateCommand.ts"
import * as Store from "./Store.ts"

/** The kinds of input `vigil ingest` reads. */
export const kinds = Ingestion.Sources.kinds

/** A date given as YYYY-MM-DD. */
export const IsoDate = Ingestion.Sources.IsoDate

/** One source to ingest, as given on the command line or in a `--config` file. */
export const SourceSpec = Ingestion.Sources.SourceSpec
export type SourceSpec = Ingestion.Sources.SourceSpec

/**
 * Ingests one source: progress bar on a terminal, one summary line either way, and with `details` a line for every
 * entry passed over, with why.
 */
export const ingestOne = (
  spec: SourceSpec,
  details = false,
  json = false
): Effect.Effect<Ingestion.Ingest.Outcome, CommandFailed, IntelIndex.IntelIndex | IntelIndex.Versions> =>
  Effect.gen(function* () {
    const { request, parser } = yield* Ingestion.Sources.plan(spec, Input.originKey(spec.input)).pipe(
      Effect.mapError((e) => new CommandFailed({ message: e.message }))
    )
    const input = yield* Input.open(spec.input).pipe(Effect.mapError((e) => new CommandFailed({ message: e.message })))
    const tty = process.stderr.isTTY === true
    const bar = tty
      ? new SingleBar({
          format: `${request.list} [{bar}] {percentage}% | {value}/{total} bytes | {records} records`,
          hideCursor: true
        })
      : undefined
    bar?.start(input.size ?? 0, 0, { records: 0 })
    // The bar measures the file as stored (compressed bytes of a .bz2) and the records parsed so far.
    const outcome = yield* Input.ingest(request, parser, input.bytes, (_, records) =>
      bar?.update(input.read(), { records })
    ).pipe(
      Effect.ensuring(Effect.sync(() => bar?.stop())),
      Effect.onInterrupt(() => Console.error(`vigil: interrupted; ${request.list} is unchanged`)),
      Effect.catchTags({
        IngestFailed: (e) => Effect.fail(new CommandFailed({ message: e.message })),
        InputError: (e) => Effect.fail(new CommandFailed({ message: e.message })),
        StoreError: (e) =>
          Effect.fail(
            new CommandFailed({ message: `${request.list}: storage: ${e.reason}: ${e.message}; nothing changed` })
          )
      })
    )
    if (json) {
      // One record per source: what the summary line says, with every reason kept under --details.
      const { skipped, ...rest } = outcome
      yield* JsonLine.print({
        origin: spec.input,
        ...rest,
        skipped: details ? skipped : { count: skipped.count, reasons: skipped.reasons.slice(0, 1) }
      })
      return outcome
    }
    yield* Console.log(Ingestion.Sources.summary(spec.input, outcome))
    if (details) {
      const { count, reasons } = outcome.skipped
      for (const reason of reasons) yield* Console.log(`  skipped ${reason}`)
      if (count > reasons.length)
        yield* Console.log(`  … and ${count - reasons.length} more skipped (reasons not kept)`)
    }
    return outcome
  })

const readConfig = (path: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (e) => new CommandFailed({ message: `cannot read ${path}: ${(e as Error).message}` })
    })
    const specs = yield* Schema.decodeUnknownEffect(
      Schema.fromJsonString(Schema.Struct({ sources: Schema.Array(SourceSpec) }))
    )(text).pipe(Effect.mapError((e) => new CommandFailed({ message: `${path}: ${e.message}` })))
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
    allowShrink: Flag.Boolean("allow-shrink").pipe(
      Flag.withDescription(
        "Accept a version with no valid record or one that de-lists more than --max-delist-share of the list"
      ),
      Flag.withDefault(false)
    ),
    replace: Flag.Boolean("replace").pipe(
      Flag.withDescription("Replace a list that holds another kind of data or another publisher's"),
      Flag.withDefault(false)
    ),
    authority: Flag.Literals("authority", Intel.Authority.literals).pipe(
      Flag.withDescription(
        "The list's authority: official (only official lists decide the sanctioned flag), curated or scraped; default: the list keeps its own, a new one its kind's"
      ),
      Flag.optional
    ),
    backfill: Flag.Boolean("backfill").pipe(
      Flag.withDescription("Add a snapshot dated before the list's current version to its history"),
      Flag.withDefault(false)
    ),
    maxDelistShare: Flag.Finite("max-delist-share").pipe(
      Flag.withDescription("Largest share (0-1) of a list's active records one version may de-list; default 0.2"),
      Flag.optional
    ),
    details: Flag.Boolean("details").pipe(
      Flag.withDescription("After the summary, one line per entry passed over, with why"),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription(
        "One JSON record per source (its outcome: list, version, asOf, counts, skipped) instead of the summary line"
      ),
      Flag.withDefault(false)
    ),
    calibrate: Flag.Boolean("calibrate").pipe(
      Flag.withDescription("Once every source is in, fit and store the calibration model (as vigil calibrate does)"),
      Flag.withDefault(false)
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
                ...Option.match(args.asOf, { onNone: () => ({}), onSome: (asOf) => ({ asOf }) }),
                ...Option.match(args.authority, { onNone: () => ({}), onSome: (authority) => ({ authority }) })
              }
            ]
          : yield* new UsageError({
              message: `give <kind> <file-or-url> (kinds: ${kinds.join(", ")}) or --config FILE`
            })
      if (Option.isSome(args.maxDelistShare) && !(args.maxDelistShare.value >= 0 && args.maxDelistShare.value <= 1)) {
        return yield* new UsageError({
          message: `--max-delist-share must be from 0 to 1, not ${args.maxDelistShare.value}`
        })
      }
      // The flags apply to every source, over what a config file says.
      const guarded = specs.map((spec) => ({
        ...spec,
        ...(args.allowShrink ? { allowShrink: true } : {}),
        ...(args.replace ? { replace: true } : {}),
        ...(args.backfill ? { backfill: true } : {}),
        ...Option.match(args.maxDelistShare, {
          onNone: () => ({}),
          onSome: (maxDelistedShare) => ({ maxDelistedShare })
        })
      }))
      yield* Effect.forEach(guarded, (spec) => ingestOne(spec, args.details, args.json), { discard: true }).pipe(
        Effect.andThen(args.calibrate ? Effect.asVoid(CalibrateCommand.calibrateOnce({})) : Effect.void),
        Effect.provide(Store.all(args.db)),
        Effect.catchTag("StoreError", databaseFailure(args.db))
      )
    })
).pipe(
  Command.withDescription(
    "Ingest a list (ofac-sdn-xml, ofac-sdn-csv, usdt-events, graphsense, labels, address-list) as a new version, atomically"
  ),
  Command.withExamples([
    { command: "vigil ingest ofac-sdn-xml sdn_advanced.xml.bz2", description: "OFAC's SDN file, streamed" },
    { command: "vigil ingest address-list ours.txt --list ours --category scam", description: "Your own list" }
  ])
)
