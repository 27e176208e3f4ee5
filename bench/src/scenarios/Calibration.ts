/** v3 single with the calibration model applied (`enable_agentic`, the default) beside the rule-based answer. */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { unlimitedKey, vigil, vigilBin } from "../Vigil.ts"
import { type LoadFigures, load, medianFigures, type Request, startServer } from "../Load.ts"

const bareServer = fileURLToPath(new URL("../servers/bare.js", import.meta.url))

const addresses = (prefix: string, count: number) =>
  Array.from(
    { length: count },
    (_, i) => `0x${createHash("sha256").update(`${prefix}-${i}`).digest("hex").slice(0, 40)}`
  )

/** The scenario. */
export const scenario: Scenario = {
  name: "calibration",
  description:
    "`vigil serve` on SQLite answering v3 single for 20,000 distinct addresses that only a scraped list names (so every answer is graded by the calibration model; answers scoring 60 or more are cached for 10 minutes, as in production), with `enable_agentic` left to its default (true) and set to false, subjects alternating in every round. The lists: a scraped feed naming 22,000 addresses, 2,000 of them also on a curated list; the model fitted by `vigil calibrate` from them. Baseline: the bare node:http server. Servers pinned to core 0, autocannon on core 1, medians reported; the figure that matters is calibrated ÷ rule-based (target ≥ 0.9×).",
  run: async ({ connections, durationSeconds, rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-"))
    const db = join(dir, "vigil.db")
    const screened = addresses("screened", 20_000)
    const confirmed = addresses("confirmed", 2_000)
    const feed = join(dir, "feed.txt")
    const reviewed = join(dir, "reviewed.txt")
    writeFileSync(feed, [...screened, ...confirmed].join("\n") + "\n")
    writeFileSync(reviewed, confirmed.join("\n") + "\n")
    const asOf = new Date().toISOString().slice(0, 10)
    for (const [file, list, authority] of [
      [feed, "bench-feed", "scraped"],
      [reviewed, "bench-reviewed", "curated"]
    ] as const) {
      vigil(["ingest", "address-list", file, "--list", list, "--category", "phishing", "--authority", authority], db)
    }
    vigil(["calibrate", "--as-of", asOf], db)
    const key = unlimitedKey(db)
    const server = await startServer([vigilBin, "serve"], { VIGIL_DB: db, VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0" })
    const bare = await startServer([bareServer])
    const request = (agentic: boolean): Request => ({
      method: "POST",
      path: "/api/v3/intel",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: "{}",
      bodies: screened.map((address) =>
        JSON.stringify(agentic ? { address } : { address, options: { enable_agentic: false } })
      )
    })
    const subjects: ReadonlyArray<[string, string, Request]> = [
      ["node:http (bare), 20,000 distinct bodies", bare.url, request(true)],
      ["v3 single, scraped-listed, calibrated (enable_agentic default)", server.url, request(true)],
      ["v3 single, scraped-listed, rule-based (enable_agentic false)", server.url, request(false)]
    ]
    try {
      // One screening each first: the answers are calibrated, and the rule-based ones are not.
      const probe = async (body: string) =>
        (await fetch(`${server.url}/api/v3/intel`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body
        }).then((r) => r.json())) as { score: number; recommendation: { ai_enhanced: boolean } }
      const calibrated = await probe(JSON.stringify({ address: screened[0] }))
      const rules = await probe(JSON.stringify({ address: screened[0], options: { enable_agentic: false } }))
      if (!calibrated.recommendation.ai_enhanced || rules.recommendation.ai_enhanced)
        throw new Error(`the model was not applied as expected: ${JSON.stringify({ calibrated, rules })}`)
      const runs = new Map<string, Array<LoadFigures>>(subjects.map(([name]) => [name, []]))
      for (const [, url, r] of subjects) await load(url, r, { connections, durationSeconds: 5 })
      for (let round = 0; round < rounds; round++) {
        for (const [name, url, r] of subjects)
          runs.get(name)!.push(await load(url, r, { connections, durationSeconds }))
      }
      const measurements = [...runs].map(([subject, r]) => ({ subject, figures: { ...medianFigures(r) } }))
      const rate = (subject: string) => measurements.find((m) => m.subject === subject)!.figures["req/s"]!
      const baseline = "node:http (bare), 20,000 distinct bodies"
      return {
        settings: { connections, durationSeconds, rounds, warmupSeconds: 5 },
        measurements,
        baseline,
        ratios: ratiosTo(baseline, measurements),
        notes: [
          `calibrated ÷ rule-based (target ≥ 0.9×): ${(rate(subjects[1]![0]) / rate(subjects[2]![0])).toFixed(3)}×`,
          `the screened addresses score ${rules.score} rule-based and ${calibrated.score} calibrated`
        ]
      }
    } finally {
      await Promise.all([server.stop(), bare.stop()])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
