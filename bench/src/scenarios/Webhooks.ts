/** Durable webhook deliveries per second from `vigil serve` to a local HTTPS receiver, beside raw HTTPS POSTs. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent, createServer, request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { median, ratiosTo, type Scenario } from "../Harness.ts"
import { startServer } from "../Load.ts"
import { autovacuumOf, postgresCpu, postgresCpuBetween, runsHere, withDatabase } from "../Postgres.ts"

const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
const WEBHOOKS = 5
const REQUESTS = 1_000
const CONCURRENCY = 16
const WARMUP_SECONDS = 5
/** Measured bursts per server, each followed by a pass of the bare loop. */
const BURSTS = 3

/** A throwaway CA and a certificate for 127.0.0.1 (openssl). */
export const certificates = (dir: string) => {
  const run = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  run("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=bench CA")
  run("req", ...ec, "-keyout", "s.key", "-out", "s.csr", "-subj", "/CN=127.0.0.1")
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1\n")
  run(
    "x509",
    "-req",
    "-in",
    "s.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "s.pem",
    "-extfile",
    "ext.cnf"
  )
  const read = (f: string) => readFileSync(join(dir, f), "utf8")
  return { ca: read("ca.pem"), key: read("s.key"), cert: read("s.pem"), caFile: join(dir, "ca.pem") }
}

/** Runs `n` tasks with at most `c` at once. */
const pool = async (n: number, c: number, task: (i: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) await task(next++)
    })
  )
}

/** The scenario. */
export const scenario: Scenario = {
  name: "webhook-deliveries",
  description: `\`vigil serve\` on SQLite (and on a PostgreSQL database of the machine's server) with ${WEBHOOKS} webhooks on one key: ${REQUESTS} asynchronous intelligence requests (${CONCURRENCY} at a time) fan out into ${REQUESTS * WEBHOOKS} durable, signed deliveries to an HTTPS receiver on loopback; measured, after such bursts have warmed the server up for ${WARMUP_SECONDS} s (as long as the HTTP scenarios' warm-up), from the first request until the receiver has every delivery (distinct webhook-id) and stats show none pending or failed; ${BURSTS} such bursts per server and round. Baseline: the same number of HTTPS POSTs of the same body sent straight to the receiver with ${CONCURRENCY} keep-alive connections (more connections make it no faster), one pass right after each measured burst (so both sides meet the machine in the same state; its speed drifts by tens of percent within minutes), after one pass that warms it up. Figures are medians over every burst and pass. Server on core 0, receiver and clients on core 1.`,
  run: async ({ rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-webhooks-"))
    const certs = certificates(dir)
    const seen = new Set<string>()
    let lastBody = "{}"
    const receiver = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c))
      req.on("end", () => {
        const id = req.headers["webhook-id"]
        if (typeof id === "string") seen.add(id)
        lastBody = body
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", () => done()))
    const port = (receiver.address() as { port: number }).port
    const pg = "vigil durable deliveries, PostgreSQL"
    let unavailable: string | undefined
    const runs: Record<string, Array<{ "deliveries/s": number; seconds: number; lost: number }>> = {
      "HTTPS POST (bare)": [],
      "vigil durable deliveries": [],
      [pg]: []
    }
    /** Each burst's rate over that of the bare pass right after it, by subject. */
    const pairs: Record<string, Array<number>> = { "vigil durable deliveries": [], [pg]: [] }
    /** A pass of the bare loop: seconds for every POST. */
    const bare = async (pass: string) => {
      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: certs.ca })
      const started = performance.now()
      await pool(REQUESTS * WEBHOOKS, CONCURRENCY, (i) => {
        return new Promise<void>((done, fail) => {
          const req = request(
            `https://127.0.0.1:${port}/bare`,
            {
              method: "POST",
              agent,
              headers: { "content-type": "application/json", "webhook-id": `bare_${pass}_${i}` }
            },
            (res) => {
              res.resume()
              res.on("end", () => done())
            }
          )
          req.on("error", fail)
          req.end(lastBody)
        })
      })
      agent.destroy()
      return (performance.now() - started) / 1000
    }
    const recordBare = (seconds: number) =>
      runs["HTTPS POST (bare)"]!.push({
        "deliveries/s": Math.round((REQUESTS * WEBHOOKS) / seconds),
        seconds: Math.round(seconds * 1000) / 1000,
        lost: 0
      })
    /** The database server's autovacuum setting, read when a round runs on it. */
    let autovacuum: string | undefined
    /** PostgreSQL's CPU time (ms) over each measured burst on it, with the deliveries received and the seconds taken. */
    const database: Array<{ readonly ms: number; readonly deliveries: number; readonly seconds: number }> = []
    /** One round of `vigil serve` on `db` (a file or a postgres:// URL), recorded under `subject`. */
    const measure = async (subject: string, db: string, round: number) => {
      const created = execFileSync(
        process.execPath,
        // Quotas no burst reaches (the default 10,000 addresses a day is ten bursts).
        [vigilBin, "keys", "create", "--db", db, "--name", "Bench", "--qps", "100000"].concat([
          "--daily",
          "1000000000",
          "--monthly",
          "1000000000"
        ]),
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }
      )
      const key = JSON.parse(created).key as string
      const server = await startServer([vigilBin, "serve"], {
        VIGIL_DB: db,
        VIGIL_HOST: "127.0.0.1",
        VIGIL_PORT: "0",
        VIGIL_WEBHOOK_ALLOW_HOSTS: "127.0.0.1",
        VIGIL_WEBHOOK_CA_FILE: certs.caFile
      })
      try {
        const post = (path: string, body: unknown) =>
          fetch(`${server.url}${path}`, {
            method: "POST",
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: JSON.stringify(body)
          })
        for (let i = 0; i < WEBHOOKS; i++) await post("/api/v2/webhooks", { url: `https://127.0.0.1:${port}/h${i}` })
        /** `REQUESTS` asynchronous requests, and the seconds until the receiver has every delivery. */
        const burst = async () => {
          seen.clear()
          const started = performance.now()
          await pool(REQUESTS, CONCURRENCY, async () => {
            const r = await post("/api/v2/intel/webhook", { address: CLEAN })
            if (r.status !== 202) throw new Error(`async intel answered ${r.status}`)
            await r.arrayBuffer()
          })
          while (seen.size < REQUESTS * WEBHOOKS && performance.now() - started < 120_000) {
            await new Promise((done) => setTimeout(done, 5))
          }
          return (performance.now() - started) / 1000
        }
        // The receiver can see the last deliveries a moment before the server has recorded them as delivered.
        const unsettled = async () => {
          const body = (await (
            await fetch(`${server.url}/api/v2/webhooks/stats`, { headers: { "x-api-key": key } })
          ).json()) as { stats: { webhooks: Array<{ pending: number; failed: number }> } }
          return body.stats.webhooks.reduce((n, w) => n + w.pending + w.failed, 0)
        }
        // Bursts warm the server up for as long as the HTTP scenarios' warm-up lasts; the next ones are measured.
        for (let warm = 0; warm < WARMUP_SECONDS;) warm += await burst()
        if (runs["HTTPS POST (bare)"]!.length === 0) await bare("warm-up")
        const local = db.startsWith("postgres") && runsHere(db)
        if (db.startsWith("postgres")) autovacuum = await autovacuumOf(db)
        for (let b = 0; b < BURSTS; b++) {
          const before = local ? postgresCpu() : undefined
          const seconds = await burst()
          const received = seen.size
          const ms = before === undefined ? undefined : postgresCpuBetween(before, postgresCpu())
          if (ms !== undefined) database.push({ ms, deliveries: received, seconds })
          let open = await unsettled()
          for (let waited = 0; open > 0 && waited < 10_000; waited += 50) {
            await new Promise((done) => setTimeout(done, 50))
            open = await unsettled()
          }
          runs[subject]!.push({
            "deliveries/s": Math.round(received / seconds),
            seconds: Math.round(seconds * 1000) / 1000,
            lost: REQUESTS * WEBHOOKS - received + open
          })
          const bareSeconds = await bare(`${round}_${subject.length}_${b}`)
          recordBare(bareSeconds)
          pairs[subject]!.push(bareSeconds / seconds)
        }
      } finally {
        await server.stop()
      }
    }
    try {
      for (let round = 0; round < rounds; round++) {
        await measure("vigil durable deliveries", join(dir, `r${round}.db`), round)
        const onPg = await withDatabase((url) => measure(pg, url, round))
        if ("unavailable" in onPg) unavailable = onPg.unavailable
      }
    } finally {
      receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
    const measurements = Object.entries(runs)
      .filter(([, r]) => r.length > 0)
      .map(([subject, r]) => ({
        subject,
        figures: {
          "deliveries/s": median(r.map((x) => x["deliveries/s"])),
          seconds: median(r.map((x) => x.seconds)),
          lost: r.reduce((n, x) => n + x.lost, 0)
        }
      }))
    const baseline = "HTTPS POST (bare)"
    const rate = (subject: string) => measurements.find((m) => m.subject === subject)?.figures["deliveries/s"]
    const onPg = rate(pg)
    return {
      settings: { rounds, bursts: BURSTS, requests: REQUESTS, webhooksPerKey: WEBHOOKS, concurrency: CONCURRENCY },
      measurements,
      baseline,
      ratios: ratiosTo(baseline, measurements),
      notes: [
        ...Object.entries(pairs)
          .filter(([, r]) => r.length > 0)
          .map(
            ([subject, r]) =>
              `${subject}, each burst beside the bare pass right after it: median ${median(r).toFixed(3)}× (${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)}; target ≥ ${subject.endsWith("PostgreSQL") ? "0.45" : "0.55"}×)`
          ),
        onPg === undefined
          ? `PostgreSQL not measured: ${unavailable}`
          : `PostgreSQL: ${(onPg / rate("vigil durable deliveries")!).toFixed(3)}× the deliveries/s on SQLite`,
        ...(database.length === 0
          ? []
          : [
              `PostgreSQL's own CPU (every process of the server on this machine) per delivery, over each burst (its 1,000 requests included): median ${Math.round(
                median(database.map((d) => (d.ms * 1000) / d.deliveries))
              )} µs, ${Math.round(median(database.map((d) => d.ms / d.seconds / 10)))}% of a core while the burst lasted`
            ]),
        ...(autovacuum === undefined
          ? []
          : [
              `The database server's autovacuum is ${autovacuum}${autovacuum === "off" ? ": the outbox's dead rows of a round's bursts (a new database each round) are not vacuumed, so each claim walks past every dead version the round has left so far (docs/operating.md, Vacuum)" : ""}.`
            ])
      ]
    }
  }
}
