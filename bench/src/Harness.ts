/** What every benchmark scenario shares: its result shape, machine facts, and where results are written. */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { arch, cpus, platform, release, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root (bench/dist/.. /..). */
export const root = fileURLToPath(new URL("../..", import.meta.url))

/** One measured subject of a scenario: a name and its figures. */
export interface Measurement {
  readonly subject: string
  readonly figures: Readonly<Record<string, number>>
}

/** What a scenario reports: its measurements, the baseline among them, and ratios against that baseline. */
export interface ScenarioResult {
  readonly settings: Readonly<Record<string, string | number>>
  readonly measurements: ReadonlyArray<Measurement>
  readonly baseline: string
  /** Per subject: figure name → subject / baseline. */
  readonly ratios: Readonly<Record<string, Readonly<Record<string, number>>>>
  readonly notes?: ReadonlyArray<string>
}

/** A named benchmark. */
export interface Scenario {
  readonly name: string
  readonly description: string
  /** False when the scenario's inputs are missing on this machine (it is then skipped with a message). */
  readonly available?: () => boolean
  readonly run: (options: RunOptions) => Promise<ScenarioResult>
}

/** Knobs shared by every scenario (from the command line). */
interface RunOptions {
  readonly durationSeconds: number
  readonly rounds: number
  readonly connections: number
}

/** Facts about the machine, recorded with every result. */
const machine = () => ({
  node: process.version,
  platform: `${platform()} ${release()} ${arch()}`,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30)
})

/** The commit measured, and whether the work tree had changes on top of it. */
const git = () => {
  try {
    const sha = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim()
    const dirty =
      execFileSync("git", ["status", "--porcelain", "--", ".", ":!bench/results", ":!docs/bench.md"], {
        cwd: root,
        encoding: "utf8"
      }).trim() !== ""
    return { sha, dirty }
  } catch {
    return { sha: "unknown", dirty: true }
  }
}

/** Median of a non-empty list. */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Ratios of every subject's figures to the baseline's (rounded to 3 places). */
export const ratiosTo = (baseline: string, measurements: ReadonlyArray<Measurement>) => {
  const base = measurements.find((m) => m.subject === baseline)
  const ratios: Record<string, Record<string, number>> = {}
  for (const m of measurements) {
    if (m.subject === baseline || base === undefined) continue
    ratios[m.subject] = Object.fromEntries(
      Object.entries(m.figures)
        .filter(([k]) => (base.figures[k] ?? 0) !== 0)
        .map(([k, v]) => [k, Math.round((v / base.figures[k]!) * 1000) / 1000])
    )
  }
  return ratios
}

const resultsDir = join(root, "bench", "results")

/** Writes `bench/results/<name>.json` and returns the record written. */
export const writeResult = (scenario: Scenario, result: ScenarioResult) => {
  const record = {
    scenario: scenario.name,
    description: scenario.description,
    date: new Date().toISOString(),
    git: git(),
    machine: machine(),
    ...result
  }
  mkdirSync(resultsDir, { recursive: true })
  writeFileSync(join(resultsDir, `${scenario.name}.json`), `${JSON.stringify(record, null, 2)}\n`)
  return record
}

const formatNumber = (n: number) =>
  Number.isInteger(n) ? n.toLocaleString("en-US") : n.toLocaleString("en-US", { maximumFractionDigits: 3 })

/** A Markdown table of one scenario's measurements with the ratio to its baseline. */
export const table = (result: ScenarioResult): string => {
  const figureNames = [...new Set(result.measurements.flatMap((m) => Object.keys(m.figures)))]
  const header = `| subject | ${figureNames.join(" | ")} | ratio to ${result.baseline} |`
  const rule = `|${" --- |".repeat(figureNames.length + 2)}`
  const rows = result.measurements.map((m) => {
    const ratio =
      m.subject === result.baseline
        ? "1 (baseline)"
        : Object.entries(result.ratios[m.subject] ?? {})
            .map(([k, v]) => `${k} ${v}×`)
            .join(", ")
    return `| ${m.subject} | ${figureNames.map((f) => (m.figures[f] === undefined ? "" : formatNumber(m.figures[f]!))).join(" | ")} | ${ratio} |`
  })
  return [header, rule, ...rows].join("\n")
}

/** Rewrites `docs/bench.md` from every result file present. */
export const writeDocs = () => {
  const files = readdirSync(resultsDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
  const sections = files.map((file) => {
    const r = JSON.parse(readFileSync(join(resultsDir, file), "utf8")) as ScenarioResult & {
      scenario: string
      description: string
      date: string
      git: { sha: string; dirty: boolean }
      machine: ReturnType<typeof machine>
    }
    const settings = Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")
    return [
      `## ${r.scenario}`,
      "",
      r.description,
      "",
      table(r),
      "",
      `Measured ${r.date} at ${r.git.sha.slice(0, 12)}${r.git.dirty ? " (with uncommitted changes)" : ""} on ${r.machine.cpus}× ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}. Settings: ${settings}.`,
      ...(r.notes ?? []).map((n) => `\n${n}`)
    ].join("\n")
  })
  const doc = [
    "# Benchmarks",
    "",
    "Generated by `npm run bench` from `bench/results/*.json`; do not edit by hand.",
    "Every scenario measures a baseline in the same run on the same machine, and reports the ratio to it:",
    "absolute figures move with the machine's load, ratios much less.",
    "",
    ...sections.flatMap((s) => [s, ""])
  ].join("\n")
  writeFileSync(join(root, "docs", "bench.md"), doc)
}
