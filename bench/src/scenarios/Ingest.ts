/** Full OFAC SDN Advanced XML (121 MB, bz2) ingest time and peak RSS, beside decompressing the same file alone. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { median, ratiosTo, type Scenario } from "../Harness.ts"
import { withDatabase } from "../Postgres.ts"
import { hasSharedData, sharedData } from "../SharedData.ts"

const child = fileURLToPath(new URL("../children/ingest.js", import.meta.url))
const file = () => sharedData("sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.xml.bz2")

const once = (mode: string, db: string) =>
  JSON.parse(
    execFileSync(process.execPath, [child, mode, file(), db], { encoding: "utf8" }).trim().split("\n").at(-1)!
  ) as {
    ms: number
    maxRssMB: number
    count: number
  }

/** The scenario. */
export const scenario: Scenario = {
  name: "ingest-sdn-xml",
  description:
    "`vigil ingest ofac-sdn-xml` of the full SDN Advanced XML of 2025-11-19 (4.5 MB bz2, 115 MB of XML) into a new SQLite file and into a new PostgreSQL database (the machine's server, over loopback), in a fresh process each round, beside a process that only decompresses the same file with the same streaming decoder. Peak RSS is the process's maxRSS.",
  available: hasSharedData,
  run: async ({ rounds }) => {
    const pg = "vigil ingest, PostgreSQL"
    const runs: Record<string, Array<{ ms: number; maxRssMB: number }>> = {
      "decompress only": [],
      "vigil ingest": [],
      [pg]: []
    }
    let unavailable: string | undefined
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), "vigil-bench-ingest-"))
      try {
        runs["decompress only"]!.push(once("decompress", join(dir, "x.db")))
        runs["vigil ingest"]!.push(once("ingest", join(dir, "vigil.db")))
        const onPg = await withDatabase(async (url) => once("ingest", url))
        if ("value" in onPg) runs[pg]!.push(onPg.value)
        else unavailable = onPg.unavailable
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
    const seconds = (subject: string) => measurements.find((m) => m.subject === subject)?.figures.seconds
    const onPg = seconds(pg)
    return {
      settings: { rounds, input: "sdn_advanced.xml.bz2 (2025-11-19)" },
      measurements,
      baseline: "decompress only",
      ratios: ratiosTo("decompress only", measurements),
      notes: [
        "Target: at most 1.2× the time and 1.1× the peak RSS of decompressing alone, on SQLite and on PostgreSQL.",
        onPg === undefined
          ? `PostgreSQL not measured: ${unavailable}`
          : `PostgreSQL: ${(onPg / seconds("vigil ingest")!).toFixed(3)}× the time of the SQLite ingest (target ≤ 1.5×)`
      ]
    }
  }
}
