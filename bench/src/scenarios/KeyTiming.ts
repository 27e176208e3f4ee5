/**
 * Whether a refused key tells an attacker that its id exists: `vigil serve` answers requests presenting a real
 * key's id with a wrong secret, and requests presenting an id no key has (one, presented as often as the real one),
 * each with a fresh secret, one after the other on one keep-alive connection, on three authenticated routes. Both
 * must take the same time: a Mann–Whitney test over the pairs.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { median, type Scenario } from "../Harness.ts"
import { startServer } from "../Load.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))

/** Pairs measured per route (after as many untimed ones), in alternating order within each pair. */
const pairs = 3_000

const routes = [
  {
    name: "POST /api/v3/intel",
    method: "POST",
    path: "/api/v3/intel",
    body: '{"address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}'
  },
  {
    name: "GET /api/v2/intel",
    method: "GET",
    path: "/api/v2/intel?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
  },
  { name: "GET /v1/bots", method: "GET", path: "/v1/bots" }
] as const

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

/** A key of the right shape: `vgl_<id>_<secret>`, with a fresh secret of 44 base58 characters. */
const keyOf = (id: string) => `vgl_${id}_${[...randomBytes(44)].map((b) => alphabet[b % 58]).join("")}`

/**
 * The Mann–Whitney z of samples `a` against `b` (normal approximation, ties given their mean rank): near 0 when
 * neither tends to be larger; beyond ±3 a difference a probe could find.
 */
const mannWhitneyZ = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  const all = [...a.map((v) => ({ v, from: 0 })), ...b.map((v) => ({ v, from: 1 }))].sort((x, y) => x.v - y.v)
  let rankA = 0
  for (let i = 0; i < all.length;) {
    let j = i
    while (j < all.length && all[j]!.v === all[i]!.v) j++
    const rank = (i + 1 + j) / 2
    for (let k = i; k < j; k++) if (all[k]!.from === 0) rankA += rank
    i = j
  }
  const n1 = a.length
  const n2 = b.length
  const u = rankA - (n1 * (n1 + 1)) / 2
  return (u - (n1 * n2) / 2) / Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12)
}

/** The scenario. */
export const scenario: Scenario = {
  name: "key-timing",
  description: `Requests to \`vigil serve\` (SQLite) presenting a real key's id with a wrong secret, and an id no key has (one per route, presented as often as the real one; each request with a fresh secret), one after the other on one keep-alive connection, ${pairs} pairs per route after as many untimed, on three routes (the hot lane's v3 and v2, and the HttpApi router's /v1/bots). Both are refused with 401; the time to the whole answer is measured at the client. Mann–Whitney z of the real-id times against the unknown-id times: target |z| < 3 on every route (no difference a probe of this size could find).`,
  run: async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-keys-"))
    const db = join(dir, "vigil.db")
    const issued = JSON.parse(
      execFileSync(process.execPath, [vigilBin, "keys", "create", "--db", db, "--name", "Acme"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"]
      })
    ).key as string
    const realId = /^vgl_([0-9a-f]{16})_/.exec(issued)![1]!
    const server = await startServer([vigilBin, "serve"], { VIGIL_DB: db, VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0" })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const url = new URL(server.url)
    /** One request presenting `key`: nanoseconds to the end of the answer. */
    const once = (route: (typeof routes)[number], key: string) =>
      new Promise<number>((resolve, reject) => {
        const started = process.hrtime.bigint()
        const req = request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            method: route.method,
            path: route.path,
            headers: { "x-api-key": key, "content-type": "application/json" }
          },
          (res) => {
            res.resume()
            res.on("end", () => {
              if (res.statusCode !== 401) reject(new Error(`${route.name}: ${res.statusCode}, not 401`))
              else resolve(Number(process.hrtime.bigint() - started))
            })
          }
        )
        req.on("error", reject)
        req.end("body" in route ? route.body : undefined)
      })
    try {
      const measurements = []
      const notes: Array<string> = []
      for (const route of routes) {
        const real: Array<number> = []
        const unknown: Array<number> = []
        // One unknown id, presented as often as the real one. A string read again and again is read faster than fresh
        // ones (the processor's branch predictor learns its characters: the key's pattern match alone, on copies,
        // takes about 90 ns less for a repeated id, and the same for two repeated ids), so fresh unknown ids would
        // measure the repetition, not whether the id exists. A probe compares candidate ids presented alike.
        let unknownId = realId
        while (unknownId === realId) unknownId = randomBytes(8).toString("hex")
        for (let i = 0; i < 2 * pairs; i++) {
          const realFirst = i % 2 === 0
          const a = await once(route, keyOf(realFirst ? realId : unknownId))
          const b = await once(route, keyOf(realFirst ? unknownId : realId))
          if (i < pairs) continue
          real.push(realFirst ? a : b)
          unknown.push(realFirst ? b : a)
        }
        const z = mannWhitneyZ(real, unknown)
        const micros = (ns: ReadonlyArray<number>) => Math.round(median(ns) / 100) / 10
        measurements.push({
          subject: route.name,
          figures: {
            "real id µs": micros(real),
            "unknown id µs": micros(unknown),
            "difference µs": Math.round((median(real) - median(unknown)) / 100) / 10,
            "Mann–Whitney z": Math.round(z * 100) / 100
          }
        })
        notes.push(`${route.name}: |z| ${Math.abs(z) < 3 ? "<" : "≥"} 3 over ${pairs} pairs`)
      }
      return {
        settings: { pairs, warmupPairs: pairs, routes: routes.length },
        measurements,
        baseline: routes[0].name,
        ratios: {},
        notes: [
          "Target: |z| < 3 on every route: a real key's id with a wrong secret is refused in the same time as an unknown id.",
          ...notes
        ]
      }
    } finally {
      agent.destroy()
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
