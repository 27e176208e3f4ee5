/**
 * Every start of the CLI pays for the modules it loads, so a command loads what it runs: the HTTP server for
 * `vigil serve` only, the PostgreSQL client for a store on PostgreSQL only, the SMTP client for a configured relay
 * only, and the subpaths of ox and @effect/platform-node it uses rather than their whole packages.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

/** Runs `vigil <args>` in a new folder; its outcome and the URL of every module it loaded, by a module hook. */
const loadedBy = async (args: ReadonlyArray<string>) => {
  const dir = tempDir()
  const log = join(dir, "loaded.txt")
  const hooks = join(dir, "hooks.mjs")
  const preload = join(dir, "preload.mjs")
  writeFileSync(log, "")
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + "\\n")
  return next(url, context)
}
`
  )
  writeFileSync(
    preload,
    `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`
  )
  const run = await runVigil(dir, { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` }, args)
  return {
    run,
    loaded: readFileSync(log, "utf8")
      .split("\n")
      .filter((url) => url !== "")
  }
}

/** What no command but the one needing it loads. */
const unwanted: ReadonlyArray<readonly [string, RegExp]> = [
  ["the HTTP server", /\/adapter-http\/(dist|src)\/(?!Limits\.)/],
  ["the PostgreSQL adapter", /\/adapter-postgres\//],
  ["the PostgreSQL client", /\/node_modules\/(pg|@effect\/sql-pg)\//],
  ["the SMTP client", /\/node_modules\/nodemailer\//],
  ["all of ox", /\/node_modules\/ox\/dist\/index\.js$/],
  ["all of @effect/platform-node", /\/node_modules\/@effect\/platform-node\/dist\/index\.js$/],
  ["Redis", /\/node_modules\/(@redis|redis)\//]
]

const assertLean = (loaded: ReadonlyArray<string>, what: string) => {
  // The hook saw the command's own modules: an empty record would pass the rest for nothing.
  assert.isTrue(
    loaded.some((url) => /\/cli\/(dist|src)\/Cli\./.test(url)),
    `${what}: the record holds the CLI's modules`
  )
  for (const [name, pattern] of unwanted) {
    const found = loaded.filter((url) => pattern.test(url))
    assert.deepStrictEqual(found, [], `${what} loads ${name}`)
  }
}

describe("a command's start", () => {
  it("loads neither the server nor PostgreSQL, SMTP or whole packages for a command on a SQLite file", async () => {
    const { run, loaded } = await loadedBy(["keys", "list", "--db", "v.db"])
    assert.strictEqual(run.code, 0, run.stderr)
    assertLean(loaded, "vigil keys list")
    // It did open its SQLite store.
    assert.isTrue(loaded.some((url) => /\/adapter-sqlite\//.test(url)))
  })

  it("loads none of them for the help of vigil serve", async () => {
    const { run, loaded } = await loadedBy(["serve", "--help"])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /--max-body-bytes/)
    assertLean(loaded, "vigil serve --help")
  })
})
