/**
 * `vigil calibrate`: fits the calibration model from the lists in force, stores it as the next version (unless
 * `--dry-run`), and prints its evaluation on the held-out addresses beside the rule-based answer; `--plot FILE`
 * draws the reliability table as an SVG.
 */
import { Calibration, type IntelIndex, Instant, type StoreError } from "@vigil/core"
import { readFileSync, writeFileSync } from "node:fs"
import { Clock, Console, Effect, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure, UsageError } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

const pct = (x: number) => x.toFixed(3)

/** The evaluation as a reader sees it in a terminal. */
const report = (model: Calibration.Model | Calibration.Stored, stored: boolean): ReadonlyArray<string> => {
  const e = model.evaluation
  const name = "version" in model ? `calibration model ${model.version}` : "calibration model (not stored: --dry-run)"
  const weights = model.features.map((f, i) => `${f} ${(model.weights[i] ?? 0).toFixed(2)}`)
  const row = (label: string, c: Calibration.Evaluation["block"], r: Calibration.Evaluation["block"]) =>
    `  ${label.padEnd(20)} precision ${pct(c.precision)}  recall ${pct(c.recall)}  (${c.flagged} flagged)   rule-based: precision ${pct(r.precision)}  recall ${pct(r.recall)}  (${r.flagged} flagged)`
  return [
    `${name}, fitted on the lists as of ${model.asOf}${stored ? ", stored" : ""}`,
    `  learned from ${model.training.examples} addresses some scraped list names (${model.training.positives} also named for a risk by an official or curated list on its own word${model.training.copied === undefined ? "" : `; ${model.training.copied} named only by entries citing a source of their own features, not counted`}); L2 penalty ${model.l2}`,
    `  weights: ${weights.join(", ")}`,
    `  held out: ${e.examples} addresses (${e.positives} named by an official or curated list), each answered from its scraped records alone:`,
    row("BLOCK (score >= 85)", e.block, e.blockRules),
    row("REVIEW (score >= 60)", e.review, e.reviewRules),
    `  Brier score          ${e.brier.toFixed(4)}   rule-based (score / 100): ${e.brierRules.toFixed(4)}`,
    `  reliability (held out, by predicted probability):`,
    ...e.reliability
      .filter((b) => b.count > 0)
      .map(
        (b) =>
          `    ${b.from.toFixed(1)}-${b.to.toFixed(1)}  ${String(b.count).padStart(6)} addresses  predicted ${b.predicted.toFixed(3)}  observed ${b.observed.toFixed(3)}`
      )
  ]
}

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * The reliability diagram of an evaluation as an SVG: predicted probability across, observed share up, one dot
 * per non-empty bin (its area by the addresses in it), the diagonal of a perfect calibration.
 */
const reliabilitySvg = (model: Calibration.Model | Calibration.Stored): string => {
  const size = 320
  const left = 56
  const top = 40
  const x = (p: number) => left + p * size
  const y = (p: number) => top + (1 - p) * size
  const bins = model.evaluation.reliability.filter((b) => b.count > 0)
  const most = Math.max(1, ...bins.map((b) => b.count))
  const ticks = [0, 0.2, 0.4, 0.6, 0.8, 1]
  const title = `Reliability on held-out addresses (${model.evaluation.examples}), lists as of ${model.asOf}`
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + size + 24}" height="${top + size + 56}" viewBox="0 0 ${left + size + 24} ${top + size + 56}" font-family="sans-serif" font-size="11">`,
    `<title>${escape(title)}</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="12" font-weight="bold">${escape(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#444"/>`,
    ...ticks.flatMap((t) => [
      `<line x1="${x(t)}" y1="${y(0)}" x2="${x(t)}" y2="${y(0) + 4}" stroke="#444"/>`,
      `<text x="${x(t)}" y="${y(0) + 16}" text-anchor="middle">${t.toFixed(1)}</text>`,
      `<line x1="${x(0) - 4}" y1="${y(t)}" x2="${x(0)}" y2="${y(t)}" stroke="#444"/>`,
      `<text x="${x(0) - 7}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(1)}</text>`
    ]),
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#999" stroke-dasharray="4 3"/>`,
    `<polyline fill="none" stroke="#1f5fa8" stroke-width="1.5" points="${bins.map((b) => `${x(b.predicted).toFixed(1)},${y(b.observed).toFixed(1)}`).join(" ")}"/>`,
    ...bins.map(
      (b) =>
        `<circle cx="${x(b.predicted).toFixed(1)}" cy="${y(b.observed).toFixed(1)}" r="${(3 + 9 * Math.sqrt(b.count / most)).toFixed(1)}" fill="#1f5fa8" fill-opacity="0.55"><title>${b.from.toFixed(1)}-${b.to.toFixed(1)}: ${b.count} addresses, predicted ${b.predicted.toFixed(3)}, observed ${b.observed.toFixed(3)}</title></circle>`
    ),
    `<text x="${left + size / 2}" y="${top + size + 36}" text-anchor="middle">predicted probability (calibrated)</text>`,
    `<text transform="translate(16 ${top + size / 2}) rotate(-90)" text-anchor="middle">observed share named by an official or curated list</text>`,
    `</svg>`,
    ""
  ].join("\n")
}

const encodeModel = Schema.encodeSync(Calibration.Model)
const decodeProvenance = Schema.decodeUnknownEffect(Schema.fromJsonString(Calibration.Provenance))

/** The declared ties of a `--provenance` file, or the one line saying what is wrong with it. */
const readProvenance = (file: string) =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (e) => new CommandFailed({ message: `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.mapError(
        decodeProvenance(text),
        (e) => new CommandFailed({ message: `${file} is not a provenance file: ${e.message.split("\n")[0]}` })
      )
    )
  )

/** Fits (and stores, unless `dryRun`) a model of the lists as of `asOf` (default today), and prints its report. */
export const calibrateOnce = (options: {
  readonly asOf?: string
  readonly l2?: number
  readonly dryRun?: boolean
  readonly json?: boolean
  readonly plot?: string
  readonly provenance?: Calibration.Provenance
}): Effect.Effect<
  Calibration.Model | Calibration.Stored,
  CommandFailed | StoreError.StoreError,
  IntelIndex.IntelIndex | IntelIndex.Administration
> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const asOf = options.asOf ?? Instant.day(now)
    const model = yield* Calibration.calibrate({
      asOf,
      fittedAt: Instant.iso(now),
      ...(options.l2 === undefined ? {} : { l2: options.l2 }),
      ...(options.provenance === undefined ? {} : { provenance: options.provenance }),
      store: options.dryRun !== true
    }).pipe(Effect.catchTag("CalibrationRefused", (e) => Effect.fail(new CommandFailed({ message: e.message }))))
    if (options.json === true) {
      yield* JsonLine.print({ ...("version" in model ? { version: model.version } : {}), ...encodeModel(model) })
    } else {
      for (const line of report(model, options.dryRun !== true)) yield* Console.log(line)
    }
    if (options.plot !== undefined) {
      const file = options.plot
      yield* Effect.try({
        try: () => writeFileSync(file, reliabilitySvg(model)),
        catch: (e) =>
          new CommandFailed({ message: `cannot write ${file}: ${e instanceof Error ? e.message : String(e)}` })
      })
    }
    return model
  })

/** The command. */
export const command = Command.make(
  "calibrate",
  {
    asOf: Flag.String("as-of").pipe(
      Flag.withSchema(Instant.IsoDate),
      Flag.withDescription("Fit on the lists as they were on this day (YYYY-MM-DD); default today"),
      Flag.optional
    ),
    l2: Flag.Finite("l2").pipe(
      Flag.withDescription(`L2 penalty of the fit, from 0.01 to 100; default ${Calibration.defaultL2}`),
      Flag.optional
    ),
    dryRun: Flag.Boolean("dry-run").pipe(
      Flag.withDescription("Fit and evaluate, but store nothing"),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print the model and its evaluation as one JSON line"),
      Flag.withDefault(false)
    ),
    plot: Flag.String("plot").pipe(
      Flag.withDescription("Write the reliability diagram of the held-out evaluation to this SVG file"),
      Flag.optional
    ),
    provenance: Flag.String("provenance").pipe(
      Flag.withDescription(
        'JSON file of declared ties, {"ties":[{"cites","lists","why"}]}: a reviewed entry whose citation contains `cites` copies those scraped lists, so it is not the ground truth of an address they name (beside the default tie to a list whose publisher the citation names)'
      ),
      Flag.optional
    ),
    db: databaseFlag
  },
  (args) =>
    Effect.gen(function* () {
      const l2 = Option.getOrUndefined(args.l2)
      if (l2 !== undefined && !(l2 >= 0.01 && l2 <= 100)) {
        return yield* new UsageError({ message: `--l2 must be from 0.01 to 100, not ${l2}` })
      }
      const asOf = Option.getOrUndefined(args.asOf)
      const plot = Option.getOrUndefined(args.plot)
      const file = Option.getOrUndefined(args.provenance)
      const provenance = file === undefined ? undefined : yield* readProvenance(file)
      yield* calibrateOnce({
        ...(provenance === undefined ? {} : { provenance }),
        ...(asOf === undefined ? {} : { asOf }),
        ...(l2 === undefined ? {} : { l2 }),
        ...(plot === undefined ? {} : { plot }),
        dryRun: args.dryRun,
        json: args.json
      }).pipe(Effect.provide(Store.all(args.db)), Effect.catchTag("StoreError", databaseFailure(args.db)))
    })
).pipe(
  Command.withDescription(
    "Fit the calibration model from the lists in force, store it as the next version, and print its held-out evaluation"
  ),
  Command.withExamples([
    { command: "vigil calibrate --dry-run", description: "Fit and evaluate without storing the model" }
  ])
)
