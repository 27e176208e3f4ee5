/**
 * PostgreSQL for the scenarios that measure it beside SQLite: a database of its own per use on the machine's
 * server (or `VIGIL_TEST_POSTGRES_URL`), dropped after; when no server answers, those subjects are left out and the
 * scenario says why.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { Postgres } from "@vigil/testkit"

/** Runs `use` with a new database's URL and drops the database after; undefined (and why) when none answers. */
export const withDatabase = async <A>(
  use: (url: string) => Promise<A>
): Promise<{ readonly value: A } | { readonly unavailable: string }> => {
  let run: Postgres.RunDatabase
  try {
    run = await Postgres.createDatabase()
  } catch (cause) {
    return { unavailable: String((cause as Error).message ?? cause) }
  }
  try {
    return { value: await use(run.url) }
  } finally {
    await run.drop()
  }
}

/** CPU time (ms) each PostgreSQL process of this machine has used so far, by pid; empty when none runs here. */
export const postgresCpu = (): ReadonlyMap<number, number> => {
  const used = new Map<number, number>()
  let pids: Array<string>
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return used
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      // The command name is in parentheses and may hold spaces: the fields are counted after its closing one.
      const close = stat.lastIndexOf(")")
      if (stat.slice(stat.indexOf("(") + 1, close) !== "postgres") continue
      const fields = stat.slice(close + 2).split(" ")
      // utime and stime, fields 14 and 15 of the line (11 and 12 after the name and state).
      used.set(Number(pid), ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond())
    } catch {
      // The process ended meanwhile.
    }
  }
  return used
}

let ticks: number | undefined
const ticksPerSecond = (): number => {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
    } catch {
      ticks = 100
    }
  }
  return ticks
}

/**
 * The CPU time (ms) PostgreSQL's processes used between two readings of {@link postgresCpu}: each process's growth
 * (the whole of one that started meanwhile; one that ended meanwhile is lost, so it is a floor). Undefined when no
 * PostgreSQL process runs on this machine (a server elsewhere: not measured).
 */
export const postgresCpuBetween = (
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>
): number | undefined => {
  if (after.size === 0) return undefined
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}

/** Whether the database of `url` is served on this machine (loopback or a local socket): its processes can be read. */
export const runsHere = (url: string): boolean => {
  const host = new URL(url).hostname
  return host === "" || host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host.startsWith("%2F")
}

/** The server's `autovacuum` setting (on or off), as the notes of the scenarios that measure PostgreSQL give it. */
export const autovacuumOf = async (url: string): Promise<string> =>
  String((await Postgres.rows(url, "SELECT current_setting('autovacuum') AS setting"))[0]?.setting ?? "unknown")
