/** The intelligence routes of `vigil serve` under load (auth, quota charge, lookup, scoring) beside a bare node:http server. */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { ingestSanctions, unlimitedKey, vigilBin } from "../Vigil.ts"
import { Postgres } from "@vigil/testkit"
import { type LoadFigures, load, loadSpread, medianFigures, type Request, startServer } from "../Load.ts"
import { postgresCpu, postgresCpuBetween, runsHere } from "../Postgres.ts"

const bareServer = fileURLToPath(new URL("../servers/bare.js", import.meta.url))

/** OFAC-listed (Lazarus Group). */
const SANCTIONED = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

/** `count` distinct EVM addresses in their EIP-55 (checksummed) form, none of them listed. */
const distinctAddresses = (count: number) =>
  Array.from({ length: count }, (_, i) => {
    const lower = createHash("sha256").update(`clean-${i}`).digest("hex").slice(0, 40)
    const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
    const mixed = [...lower].map((c, j) => (parseInt(hash[j]!, 16) >= 8 ? c.toUpperCase() : c)).join("")
    return `0x${mixed}`
  })

/** 25 distinct addresses: 5 listed, 20 not. */
const batch = Array.from(
  { length: 25 },
  (_, i) => `0x${(i * 2654435761 + 17).toString(16).padStart(40, "0").slice(-40)}`
)

/** Lists a sanctioned address and five of the batch, and creates a key without limits: the key. */
const prepare = (db: string, listFile: string) => {
  ingestSanctions(db, listFile)
  return unlimitedKey(db)
}

/** The scenario. */
export const scenario: Scenario = {
  name: "http-intel",
  description:
    "`vigil serve` on SQLite answering v3 single (a sanctioned address, whose score ≥ 60 is served from the 10-minute cache after the first request; a clean one, screened every time (its index lookup remembered until the lists change); 20,000 distinct checksummed clean addresses in turn, so no memory of recent addresses helps), v2 GET (cached for 24 h) and a v3 batch of 25 addresses; every request authenticates its key and charges its quota in SQLite. v3 single and v2 GET take the hot-routes lane; `router only` is a second server on the same database with VIGIL_HOT_ROUTES=off, every request through the HttpApi router. The same v3 routes are measured on a third server whose store is a PostgreSQL database on the machine's server (over loopback, a pool of 10), each as a ratio to its SQLite figure, and v3 single and batch on two such instances of that database at once (autocannon's connections split between them; both on core 0), as a ratio to one. The baseline is a bare node:http server that parses the JSON body and returns a fixed body of the size of a v3 result. Servers pinned to core 0, autocannon on core 1, subjects alternate in every round, medians reported.",
  run: async ({ connections, durationSeconds, rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-"))
    const db = join(dir, "vigil.db")
    const listFile = join(dir, "list.txt")
    writeFileSync(listFile, [SANCTIONED, ...batch.slice(0, 5)].join("\n") + "\n")
    const key = prepare(db, listFile)
    // The same on PostgreSQL, when a server answers (the key is the database's: one of its own there).
    let pg: Postgres.RunDatabase | undefined
    let unavailable: string | undefined
    try {
      pg = await Postgres.createDatabase()
    } catch (cause) {
      unavailable = String((cause as Error).message ?? cause)
    }
    const pgKey = pg === undefined ? undefined : prepare(pg.url, listFile)
    const env = { VIGIL_DB: db, VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0" }
    const server = await startServer([vigilBin, "serve"], env)
    const routerOnly = await startServer([vigilBin, "serve"], { ...env, VIGIL_HOT_ROUTES: "off" })
    const onPg = pg === undefined ? undefined : await startServer([vigilBin, "serve"], { ...env, VIGIL_DB: pg.url })
    // A second instance on the same database, on the same core: what acting as one service costs.
    const onPgToo = pg === undefined ? undefined : await startServer([vigilBin, "serve"], { ...env, VIGIL_DB: pg.url })
    const bare = await startServer([bareServer])
    const post = (body: unknown, as = key): Request => ({
      method: "POST",
      path: "/api/v3/intel",
      headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const distinct = distinctAddresses(20_000).map((address) => JSON.stringify({ address }))
    const subjects: ReadonlyArray<[string, string | ReadonlyArray<string>, Request]> = [
      ["node:http (bare)", bare.url, post({ address: CLEAN })],
      ["node:http (bare), 20,000 distinct bodies", bare.url, { ...post({}), bodies: distinct }],
      ["v3 single, sanctioned", server.url, post({ address: SANCTIONED })],
      ["v3 single, clean", server.url, post({ address: CLEAN })],
      ["v3 single, 20,000 distinct clean", server.url, { ...post({}), bodies: distinct }],
      ["v3 single, sanctioned, router only", routerOnly.url, post({ address: SANCTIONED })],
      ["v2 GET", server.url, { path: `/api/v2/intel?address=${CLEAN}`, headers: { "x-api-key": key } }],
      [
        "v3 batch of 25",
        server.url,
        { ...post({ addresses: batch, options: { batch_size: 10 } }), path: "/api/v3/intel/batch" }
      ],
      ...(onPg === undefined || onPgToo === undefined || pgKey === undefined
        ? []
        : ([
            ["v3 single, clean, PostgreSQL", onPg.url, post({ address: CLEAN }, pgKey)],
            ["v3 single, 20,000 distinct clean, PostgreSQL", onPg.url, { ...post({}, pgKey), bodies: distinct }],
            [
              "v3 batch of 25, PostgreSQL",
              onPg.url,
              { ...post({ addresses: batch, options: { batch_size: 10 } }, pgKey), path: "/api/v3/intel/batch" }
            ],
            ["v3 single, clean, PostgreSQL, two instances", [onPg.url, onPgToo.url], post({ address: CLEAN }, pgKey)],
            [
              "v3 batch of 25, PostgreSQL, two instances",
              [onPg.url, onPgToo.url],
              { ...post({ addresses: batch, options: { batch_size: 10 } }, pgKey), path: "/api/v3/intel/batch" }
            ]
          ] satisfies ReadonlyArray<[string, string | ReadonlyArray<string>, Request]>))
    ]
    try {
      const runs = new Map<string, Array<LoadFigures>>(subjects.map(([name]) => [name, []]))
      const measure = (url: string | ReadonlyArray<string>, request: Request, seconds: number) =>
        typeof url === "string"
          ? load(url, request, { connections, durationSeconds: seconds })
          : loadSpread(url, request, { connections, durationSeconds: seconds })
      for (const [, url, request] of subjects) await measure(url, request, 5)
      /** PostgreSQL's CPU time (ms) and the requests answered, over the measured runs of each PostgreSQL subject. */
      const database = new Map<string, { ms: number; requests: number }>()
      const local = pg !== undefined && runsHere(pg.url)
      for (let round = 0; round < rounds; round++) {
        for (const [name, url, request] of subjects) {
          const before = local && name.includes("PostgreSQL") ? postgresCpu() : undefined
          const figures = await measure(url, request, durationSeconds)
          runs.get(name)!.push(figures)
          const ms = before === undefined ? undefined : postgresCpuBetween(before, postgresCpu())
          if (ms === undefined) continue
          const sum = database.get(name) ?? { ms: 0, requests: 0 }
          database.set(name, { ms: sum.ms + ms, requests: sum.requests + figures["req/s"] * durationSeconds })
        }
      }
      const measurements = [...runs].map(([subject, r]) => ({ subject, figures: { ...medianFigures(r) } }))
      const baseline = "node:http (bare)"
      const figures = (subject: string) => measurements.find((m) => m.subject === subject)!.figures
      const distinctRatio =
        figures("v3 single, 20,000 distinct clean")["req/s"]! /
        figures("node:http (bare), 20,000 distinct bodies")["req/s"]!
      return {
        settings: { connections, durationSeconds, rounds, warmupSeconds: 5 },
        measurements,
        baseline,
        ratios: ratiosTo(baseline, measurements),
        notes: [
          `v3 batch of 25: ${figures("v3 batch of 25")["req/s"]! * 25} addresses/s`,
          onPg === undefined
            ? `PostgreSQL not measured: ${unavailable}`
            : `PostgreSQL beside SQLite (req/s): ${(
                [
                  ["v3 single, clean", "target ≥ 0.8×"],
                  ["v3 single, 20,000 distinct clean", "no target"],
                  ["v3 batch of 25", "target ≥ 0.9×"]
                ] as const
              )
                .map(
                  ([s, target]) =>
                    `${s} ${(figures(`${s}, PostgreSQL`)["req/s"]! / figures(s)["req/s"]!).toFixed(3)}× (${target})`
                )
                .join("; ")}`,
          ...(onPg === undefined
            ? []
            : [
                `PostgreSQL, two instances beside one, both on the one core the single instance has (so this is what sharing the database costs, not what a second machine adds): ${[
                  "v3 single, clean",
                  "v3 batch of 25"
                ]
                  .map(
                    (s) =>
                      `${s} ${(figures(`${s}, PostgreSQL, two instances`)["req/s"]! / figures(`${s}, PostgreSQL`)["req/s"]!).toFixed(3)}×`
                  )
                  .join("; ")}`
              ]),
          ...(database.size === 0
            ? []
            : [
                `PostgreSQL's own CPU (every process of the server on this machine, over the measured runs) per request: ${[
                  ...database
                ]
                  .map(
                    ([subject, { ms, requests }]) =>
                      `${subject} ${Math.round((ms * 1000) / requests)} µs (${Math.round(ms / (rounds * durationSeconds) / 10)}% of a core)`
                  )
                  .join("; ")}`
              ]),
          `v3 single, 20,000 distinct clean: ${distinctRatio.toFixed(3)}× the bare server sent the same rotating bodies (a body per request slows autocannon itself, so that is the like-for-like baseline)`
        ]
      }
    } finally {
      await Promise.all([server.stop(), routerOnly.stop(), bare.stop(), onPg?.stop(), onPgToo?.stop()])
      await pg?.drop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
