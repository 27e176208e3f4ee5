/** GET /health on the real `vigil serve` (SQLite round trip per request) beside a bare node:http server. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { type LoadFigures, load, medianFigures, startServer } from "../Load.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))
const bareServer = fileURLToPath(new URL("../servers/bare.js", import.meta.url))

/** The baseline scenario. */
export const scenario: Scenario = {
  name: "http-health",
  description:
    "`GET /health` answered by `vigil serve` (Effect HttpApi, one SQLite query per request) and by a bare `node:http` server returning a JSON body of the same size, with the same autocannon load. Servers run pinned to core 0, the load generator to core 1; rounds alternate between the two servers and the median is reported.",
  run: async ({ connections, durationSeconds, rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-"))
    const vigil = await startServer([vigilBin, "serve"], {
      VIGIL_DB: join(dir, "vigil.db"),
      VIGIL_HOST: "127.0.0.1",
      VIGIL_PORT: "0"
    })
    const bare = await startServer([bareServer])
    try {
      const request = { path: "/health" }
      const warm = { connections, durationSeconds: 2 }
      await load(bare.url, request, warm)
      await load(vigil.url, request, warm)
      const runs: Record<string, Array<LoadFigures>> = { "node:http (bare)": [], "vigil serve": [] }
      for (let round = 0; round < rounds; round++) {
        runs["node:http (bare)"]!.push(await load(bare.url, request, { connections, durationSeconds }))
        runs["vigil serve"]!.push(await load(vigil.url, request, { connections, durationSeconds }))
      }
      const measurements = Object.entries(runs).map(([subject, r]) => ({ subject, figures: { ...medianFigures(r) } }))
      const baseline = "node:http (bare)"
      return {
        settings: { connections, durationSeconds, rounds, warmupSeconds: 2 },
        measurements,
        baseline,
        ratios: ratiosTo(baseline, measurements)
      }
    } finally {
      await Promise.all([vigil.stop(), bare.stop()])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
