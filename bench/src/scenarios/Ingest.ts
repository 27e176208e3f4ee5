/** Full OFAC SDN Advanced XML (121 MB, bz2) ingest time and peak RSS, beside decompressing the same file alone. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { median, ratiosTo, type Scenario } from "../Harness.ts"
import { onEveryCore, onThisCore } from "../Load.ts"
import { withDatabase } from "../Postgres.ts"
import { hasSharedData, sharedData } from "../SharedData.ts"

const child = fileURLToPath(new URL("../children/ingest.js", import.meta.url))
const file = () => sharedData("sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.xml.bz2")

const once = (mode: string, db: string, cores: "every" | "one" = "every") =>
  JSON.parse(
    execFileSync(...(cores === "every" ? onEveryCore : onThisCore)([child, mode, file(), db]), { encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!
  ) as {
    ms: number
    maxRssMB: number
    count: number
  }

/** The scenario. */
export const scenario: Scenario = {
  name: "ingest-sdn-xml",
  description:
    "`vigil ingest ofac-sdn-xml` of the full SDN Advanced XML of 2025-11-19 (4.5 MB bz2, 115 MB of XML) into a new SQLite file and into a new PostgreSQL database (the machine's server, over loopback), in a fresh process each round that may use every core (as a command a user runs has the machine; the last row is held to one core), beside a process that only decompresses the same file. The baseline pipes the file through unbzip2-stream's own stream in one thread, the bare decompression every earlier run measured; a second process reads the file as an ingest does (Vigil's decoder, unbzip2-stream's block decoder writing into typed arrays, on a worker thread). Peak RSS is the process's maxRSS.",
  available: hasSharedData,
  run: async ({ rounds }) => {
    const pg = "vigil ingest, PostgreSQL"
    const own = "decompress only, Vigil's decoder"
    const oneCore = "vigil ingest, one core"
    const runs: Record<string, Array<{ ms: number; maxRssMB: number }>> = {
      "decompress only": [],
      [own]: [],
      "vigil ingest": [],
      [pg]: [],
      [oneCore]: []
    }
    let unavailable: string | undefined
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), "vigil-bench-ingest-"))
      try {
        runs["decompress only"]!.push(once("stock", join(dir, "x.db")))
        runs[own]!.push(once("decompress", join(dir, "x.db")))
        runs["vigil ingest"]!.push(once("ingest", join(dir, "vigil.db")))
        const onPg = await withDatabase(async (url) => once("ingest", url))
        if ("value" in onPg) runs[pg]!.push(onPg.value)
        else unavailable = onPg.unavailable
        runs[oneCore]!.push(once("ingest", join(dir, "one.db"), "one"))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    const measurements = Object.entries(runs)
      .filter(([, r]) => r.length > 0)
      .map(([subject, r]) => ({
        subject,
        figures: { seconds: median(r.map((x) => x.ms)) / 1000, "peak RSS MB": median(r.map((x) => x.maxRssMB)) }
      }))
    const figure = (subject: string, name: "seconds" | "peak RSS MB") =>
      measurements.find((m) => m.subject === subject)?.figures[name]
    const seconds = (subject: string) => figure(subject, "seconds")
    const onPg = seconds(pg)
    // What an ingest adds to reading its input the way it reads it.
    const overOwn = (subject: string) =>
      figure(subject, "seconds") === undefined
        ? undefined
        : `${subject}: seconds ${(figure(subject, "seconds")! / figure(own, "seconds")!).toFixed(3)}×, peak RSS MB ${(figure(subject, "peak RSS MB")! / figure(own, "peak RSS MB")!).toFixed(3)}×`
    return {
      settings: { rounds, input: "sdn_advanced.xml.bz2 (2025-11-19)" },
      measurements,
      baseline: "decompress only",
      ratios: ratiosTo("decompress only", measurements),
      notes: [
        "Target: at most 1.2× the time and 1.1× the peak RSS of decompressing alone (the baseline: the stock stream, as in every earlier run), on SQLite and on PostgreSQL.",
        `Beside decompressing alone with Vigil's own decoder, the floor an ingest now stands on (no target set): ${[
          "vigil ingest",
          pg,
          oneCore
        ]
          .map(overOwn)
          .filter((x) => x !== undefined)
          .join("; ")}`,
        onPg === undefined
          ? `PostgreSQL not measured: ${unavailable}`
          : `PostgreSQL: ${(onPg / seconds("vigil ingest")!).toFixed(3)}× the time of the SQLite ingest (target ≤ 1.5×)`
      ]
    }
  }
}
