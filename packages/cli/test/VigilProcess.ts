/** Runs the built `vigil` executable as a child process, and cleans up every child and temp folder after each test. */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeAll } from "vitest"

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))
const children: Array<ChildProcess> = []
const dirs: Array<string> = []

export const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "vigil-cli-"))
  dirs.push(dir)
  return dir
}

export interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** A JSON request to the server at `url()` with the API key `key`: its status and parsed body. */
export const caller =
  (url: () => string, key: string) =>
  async (method: string, path: string, body?: unknown): Promise<{ readonly status: number; readonly json: any }> => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, json: await response.json() }
  }

/**
 * A new store starts with no list in these tests, which count what they ingest; a test of the built-in lists
 * passes `VIGIL_BUILTIN_LISTS: "on"` (the default outside tests).
 */
const startsEmpty = { VIGIL_BUILTIN_LISTS: "off" }

/** The environment of a child: this process's, then `env` (a variable given as undefined is left out). */
const environment = (env: Record<string, string | undefined>, more: Record<string, string> = {}) =>
  Object.fromEntries(
    Object.entries({ ...process.env, ...startsEmpty, ...more, ...env }).filter(
      (e): e is [string, string] => e[1] !== undefined
    )
  )

/** Starts `vigil serve` in `cwd` and resolves once it logs where it listens (or rejects if it exits first). */
export const serve = (
  cwd: string,
  env: Record<string, string | undefined>,
  args: ReadonlyArray<string> = []
): Promise<Running> => {
  const child = spawn(process.execPath, [bin, "serve", ...args], {
    cwd,
    env: environment(env, { VIGIL_HOST: "127.0.0.1", VIGIL_PORT: "0" }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let output = ""
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s]+)/.exec(output)
      if (match?.[1]) resolve({ child, url: match[1], output: () => output, exited })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    void exited.then((code) => reject(new Error(`vigil serve exited with ${code} before listening:\n${output}`)))
  })
}

/** The arguments of `vigil ingest` of `file` as the snapshot of `asOf` of the sanctions address list `watch`. */
export const ingestWatchArgs = (file: string, asOf: string, extra: ReadonlyArray<string> = []) => [
  "ingest",
  "address-list",
  file,
  "--list",
  "watch",
  "--category",
  "sanctions",
  "--as-of",
  asOf,
  ...extra
]

/** Runs `vigil <args>` to completion. */
export const runVigil = (cwd: string, env: Record<string, string | undefined>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: environment(env) })
    children.push(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npm test runs tsc -b before vitest)`)
})

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL")
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Starts `vigil <args>` without waiting; the child is killed after the test if still running. */
export const spawnVigil = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) => {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: environment(env), stdio: "ignore" })
  children.push(child)
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, exited }
}
