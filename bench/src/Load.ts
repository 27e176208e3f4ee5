/** HTTP load generation with autocannon (as a library) and child-process servers pinned to their own core. */
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { cpus } from "node:os"
import { median } from "./Harness.ts"

/** A request autocannon repeats. */
export interface Request {
  readonly method?: "GET" | "POST"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** Bodies sent in turn instead of `body`, one per request, starting over when all are sent. */
  readonly bodies?: ReadonlyArray<string>
}

/** Figures of one load run. */
export interface LoadFigures {
  readonly "req/s": number
  readonly "p50 ms": number
  readonly "p99 ms": number
  readonly errors: number
  readonly non2xx: number
}

const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" })
    return cpus().length > 1
  } catch {
    return false
  }
})()

/** Pins this process (the load generator) to the last core, leaving core 0 to the server under test. */
export const pinSelf = () => {
  if (hasTaskset) execFileSync("taskset", ["-pc", String(cpus().length - 1), String(process.pid)], { stdio: "ignore" })
}

/**
 * The command that runs `node <args>` on every core: a child inherits this process's pin to one core, and a
 * command a user runs (an ingest) has the whole machine.
 */
export const onEveryCore = (args: ReadonlyArray<string>): [string, Array<string>] =>
  hasTaskset ? ["taskset", ["-c", `0-${cpus().length - 1}`, process.execPath, ...args]] : [process.execPath, [...args]]

/** The command that runs `node <args>` on this process's core (one, when the load generator is pinned). */
export const onThisCore = (args: ReadonlyArray<string>): [string, Array<string>] => [process.execPath, [...args]]

/** A running server child process and the URL it announced. */
export interface Server {
  readonly url: string
  readonly stop: () => Promise<void>
  /** What it has printed so far. */
  readonly output: () => string
}

/** `VIGIL_BENCH_CPU_PROF=<dir>`: every server a scenario starts writes a CPU profile there when it stops. */
const profiling = (args: ReadonlyArray<string>) => {
  const dir = process.env.VIGIL_BENCH_CPU_PROF
  return dir === undefined || dir === "" ? [...args] : ["--cpu-prof", `--cpu-prof-dir=${dir}`, ...args]
}

/**
 * Starts `node <args>` (on core 0 when taskset exists) and resolves with the first `http://host:port`
 * it prints after the word "listening".
 */
export const startServer = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Server> => {
  const command = hasTaskset ? "taskset" : process.execPath
  const argv = hasTaskset ? ["-c", "0", process.execPath, ...profiling(args)] : profiling(args)
  const child: ChildProcess = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      output += `\n(exited with ${signal ?? `code ${code}`})\n`
      resolve()
    })
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not announce itself within 30 s:\n${output}`))
    }, 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s)]+)/i.exec(output)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve({
          url: match[1],
          output: () => output,
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`server exited before listening:\n${output}`))
    })
  })
}

/** One autocannon run against `url`. */
export const load = async (
  url: string,
  request: Request,
  options: { readonly connections: number; readonly durationSeconds: number }
): Promise<LoadFigures> => {
  const bodies = request.bodies
  let next = 0
  const result = await autocannon({
    url: `${url}${request.path}`,
    method: request.method ?? "GET",
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    ...(bodies === undefined
      ? {}
      : {
          requests: [
            {
              setupRequest: (r: autocannon.Request) => ({ ...r, body: bodies[next++ % bodies.length] })
            }
          ]
        }),
    connections: options.connections,
    duration: options.durationSeconds
  })
  return {
    "req/s": Math.round(result.requests.average),
    "p50 ms": result.latency.p50,
    "p99 ms": result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx
  }
}

/**
 * Load spread over several servers at once (the connections split evenly between them, as a load balancer would):
 * their requests per second added up, the worst of their latencies.
 */
export const loadSpread = async (
  urls: ReadonlyArray<string>,
  request: Request,
  options: { readonly connections: number; readonly durationSeconds: number }
): Promise<LoadFigures> => {
  const each = Math.max(1, Math.floor(options.connections / urls.length))
  const runs = await Promise.all(urls.map((url) => load(url, request, { ...options, connections: each })))
  return {
    "req/s": runs.reduce((n, r) => n + r["req/s"], 0),
    "p50 ms": Math.max(...runs.map((r) => r["p50 ms"])),
    "p99 ms": Math.max(...runs.map((r) => r["p99 ms"])),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0)
  }
}

/** Median of each figure over several runs. */
export const medianFigures = (runs: ReadonlyArray<LoadFigures>): LoadFigures => ({
  "req/s": median(runs.map((r) => r["req/s"])),
  "p50 ms": median(runs.map((r) => r["p50 ms"])),
  "p99 ms": median(runs.map((r) => r["p99 ms"])),
  errors: runs.reduce((n, r) => n + r.errors, 0),
  non2xx: runs.reduce((n, r) => n + r.non2xx, 0)
})
