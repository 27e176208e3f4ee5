/** Latency of v3 single with counterparty exposure read from a real node (anvil), beside the same requests without. */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Anvil } from "@vigil/testkit"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { ingestSanctions, unlimitedKey, vigilBin } from "../Vigil.ts"
import { type LoadFigures, load, medianFigures, type Request, startServer } from "../Load.ts"

const addresses = (prefix: string, count: number) =>
  Array.from(
    { length: count },
    (_, i) => `0x${createHash("sha256").update(`${prefix}-${i}`).digest("hex").slice(0, 40)}`
  )

/** Requests per round kept distinct from every other round's, so that no answer comes from the minute's memory. */
const perRound = 20_000

/** The scenario. */
export const scenario: Scenario = {
  name: "exposure",
  description: `\`vigil serve\` on SQLite with anvil as chain 31337's node: v3 single with \`options.exposure\` (the newest 10,000 blocks' token transfer logs and native traces of the address, its counterparties screened), beside the same requests without it. A listed address sent ether to 200 addresses; every round screens ${perRound.toLocaleString("en-US")} addresses of its own (those 200 among them, in turn), so no reading is served from the minute's memory. 10 connections (a node is the bottleneck, not the server); the server pinned to core 0, anvil and autocannon share core 1; medians over the rounds. What matters is p50/p99 against the budget (VIGIL_EXPOSURE_BUDGET_MS, 1,000 ms).`,
  run: async ({ durationSeconds, rounds }) => {
    const connections = 10
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-"))
    const db = join(dir, "vigil.db")
    const node = await Anvil.start()
    try {
      const listed = node.accounts[1]!
      const touched = addresses("touched", 200)
      for (const to of touched)
        await node.rpc("eth_sendTransaction", [{ from: listed, to, value: `0x${(10n ** 18n).toString(16)}` }])
      await node.mine(1)
      const listFile = join(dir, "listed.txt")
      writeFileSync(listFile, `${listed}\n`)
      ingestSanctions(db, listFile)
      const key = unlimitedKey(db)
      const server = await startServer([vigilBin, "serve"], {
        VIGIL_DB: db,
        VIGIL_HOST: "127.0.0.1",
        VIGIL_PORT: "0",
        [`VIGIL_RPC_URL_${node.chainId}`]: node.url
      })
      const request = (round: number, exposure: boolean): Request => {
        const fresh = addresses(`round-${round}-${exposure}`, perRound)
        // One in a hundred has a transfer with the listed address.
        const screened = fresh.map((a, i) => (i % 100 === 0 ? touched[(i / 100) % touched.length]! : a))
        return {
          method: "POST",
          path: "/api/v3/intel",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          bodies: screened.map((address) =>
            JSON.stringify(exposure ? { address, options: { exposure: true } } : { address })
          )
        }
      }
      const subjects = ["v3 single, distinct addresses, no exposure", "v3 single, distinct addresses, options.exposure"]
      try {
        const probe = (await fetch(`${server.url}/api/v3/intel`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ address: touched[0], options: { exposure: true } })
        }).then((r) => r.json())) as { signals: ReadonlyArray<{ type: string }> }
        if (probe.signals[0]?.type !== "exposure_sanctioned")
          throw new Error(`the exposure was not found: ${JSON.stringify(probe)}`)
        await load(server.url, request(-1, true), { connections, durationSeconds: 5 })
        const runs = new Map<string, Array<LoadFigures>>(subjects.map((s) => [s, []]))
        for (let round = 0; round < rounds; round++) {
          for (const [i, subject] of subjects.entries())
            runs.get(subject)!.push(await load(server.url, request(round, i === 1), { connections, durationSeconds }))
        }
        const measurements = [...runs].map(([subject, r]) => ({ subject, figures: { ...medianFigures(r) } }))
        const figures = (subject: string) => measurements.find((m) => m.subject === subject)!.figures
        const exposed = figures(subjects[1]!)
        return {
          settings: { connections, durationSeconds, rounds, warmupSeconds: 5 },
          measurements,
          baseline: subjects[0]!,
          ratios: ratiosTo(subjects[0]!, measurements),
          notes: [
            `with exposure: p50 ${exposed["p50 ms"]} ms, p99 ${exposed["p99 ms"]} ms against a budget of 1,000 ms (${exposed["p99 ms"]! <= 1_000 ? "within" : "over"} it)`
          ]
        }
      } finally {
        await server.stop()
      }
    } finally {
      await node.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
