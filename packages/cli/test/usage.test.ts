/**
 * Command-line habits, over every command: a usage error (an unknown command or flag, a missing argument or
 * subcommand, a bad value) prints one line on stderr naming it and the help to read, nothing on stdout, and exits 2;
 * the help states the defaults and ends with examples.
 */
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

/** Every command that runs something, by its path. */
const commands = [
  "serve",
  "detect",
  "ingest",
  "refresh",
  "calibrate",
  "screen",
  "lists",
  "migrate-store",
  "keys create",
  "keys list",
  "keys revoke",
  "check",
  "rules check",
  "monitor backtest",
  "follow reset",
  "demo"
]

/**
 * How long a test that starts a process per command may take before it counts as hung: longer than a test's default
 * limit, as each process loads the program and a dozen of them on a loaded two-core machine once took past 30 s.
 */
const manyProcesses = 120_000

/** Runs every case, four at a time. */
const all = async <A, B>(items: ReadonlyArray<A>, f: (a: A) => Promise<B>) => {
  const out: Array<B> = []
  for (let i = 0; i < items.length; i += 4) out.push(...(await Promise.all(items.slice(i, i + 4).map(f))))
  return out
}

const expectUsage = (run: { code: number | null; stdout: string; stderr: string }, path: string, problem: RegExp) => {
  assert.strictEqual(run.code, 2, `${path}: ${run.stderr}`)
  assert.strictEqual(run.stdout, "", `${path}: nothing on stdout`)
  const lines = run.stderr.trimEnd().split("\n")
  assert.lengthOf(lines, 1, `${path}: one line: ${run.stderr}`)
  assert.match(lines[0]!, new RegExp(`^vigil ${path}: `), path)
  assert.match(lines[0]!, problem, path)
  assert.isTrue(lines[0]!.endsWith(`; see vigil ${path} --help`), lines[0])
}

describe("usage errors", () => {
  it(
    "an unknown flag on every command",
    async () => {
      const cwd = tempDir()
      const runs = await all(commands, (path) =>
        runVigil(cwd, {}, [...path.split(" "), "--no-such-flag", "--db", "v.db"])
      )
      runs.forEach((run, i) => expectUsage(run, commands[i]!, /unrecognized flag: --no-such-flag/))
    },
    manyProcesses
  )

  it(
    "a missing argument, flag or subcommand, and an unknown command",
    async () => {
      const cwd = tempDir()
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string, RegExp]> = [
        [[], "", /unknown subcommand "nope"/],
        [["detect"], "detect", /missing required argument: address/],
        [["ingest"], "ingest", /give <kind> <file-or-url>/],
        [["screen"], "screen", /give addresses to screen/],
        [["keys"], "keys", /a subcommand is required \(create, list, revoke\)/],
        [["keys", "create"], "keys create", /missing required flag: --name/],
        [["keys", "revoke"], "keys revoke", /missing required argument: id/],
        [["rules"], "rules", /a subcommand is required \(check\)/],
        [["rules", "check", "x"], "rules check", /missing required flag: --contracts/],
        [["monitor"], "monitor", /a subcommand is required \(backtest\)/],
        [["monitor", "backtest", "x"], "monitor backtest", /missing required flag/],
        [["follow"], "follow", /a subcommand is required \(reset\)/],
        [["follow", "reset"], "follow reset", /missing required flag: --chain/],
        [["migrate-store"], "migrate-store", /missing required flag/]
      ]
      const runs = await all(cases, ([args]) => runVigil(cwd, {}, args.length === 0 ? ["nope"] : [...args]))
      runs.forEach((run, i) => {
        const [, path, problem] = cases[i]!
        if (path === "") {
          assert.strictEqual(run.code, 2)
          assert.strictEqual(run.stdout, "")
          assert.strictEqual(run.stderr.trimEnd(), 'vigil: unknown subcommand "nope" for "vigil"; see vigil --help')
        } else expectUsage(run, path, problem)
      })
    },
    manyProcesses
  )

  it(
    "a bad value, from a flag or from its environment variable",
    async () => {
      const cwd = tempDir()
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Record<string, string>, string, RegExp]> = [
        [["serve", "--port", "eighty"], {}, "serve", /invalid value for flag --port: "eighty"/],
        [
          ["serve"],
          { VIGIL_PORT: "eighty" },
          "serve",
          /invalid VIGIL_PORT "eighty" \(the --port setting\): expected a number/
        ],
        [
          ["serve"],
          { VIGIL_MAX_BODY_BYTES: "12" },
          "serve",
          /invalid VIGIL_MAX_BODY_BYTES "12" \(the --max-body-bytes setting\): expected a value between 1024 and 1048576/
        ],
        [["detect", "--chain", "litecoin", "x"], {}, "detect", /--chain/],
        [["screen", "--as-of", "2024-02-30", "x"], {}, "screen", /2024-02-30 is not a calendar date/],
        [["calibrate", "--l2", "0"], {}, "calibrate", /--l2 must be from 0\.01 to 100, not 0/],
        [["demo", "--timeout", "soon"], {}, "demo", /invalid value for flag --timeout: "soon"/]
      ]
      const runs = await all(cases, ([args, env]) => runVigil(cwd, env, [...args]))
      runs.forEach((run, i) => expectUsage(run, cases[i]![2], cases[i]![3]))
    },
    manyProcesses
  )

  it("a failure of the command itself is exit 1, not a usage error", async () => {
    const run = await runVigil(tempDir(), {}, ["keys", "revoke", "0000000000000000", "--db", "v.db"])
    assert.strictEqual(run.code, 1)
    assert.strictEqual(run.stderr.trimEnd(), "vigil: no API key with id 0000000000000000")
  })
})

describe("help", () => {
  it("states the defaults of serve's settings, marks what is required, and ends with examples", async () => {
    const cwd = tempDir()
    const [serve, keys, root] = await Promise.all([
      runVigil(cwd, {}, ["serve", "--help"]),
      runVigil(cwd, {}, ["keys", "create", "--help"]),
      runVigil(cwd, {}, [])
    ])
    assert.strictEqual(serve.code, 0)
    assert.match(serve.stdout, /--host .*default 127\.0\.0\.1/)
    assert.match(serve.stdout, /--port .*default 8080/)
    assert.match(serve.stdout, /--db .*default \.\/\.vigil\/vigil\.db/)
    assert.match(keys.stdout, /--name .*\(required\)/)
    for (const help of [serve.stdout, keys.stdout]) assert.match(help, /EXAMPLES\n(.+\n)+/)
    // `vigil` alone is the help, on stdout.
    assert.strictEqual(root.code, 0)
    assert.match(root.stdout, /SUBCOMMANDS/)
  })

  it(
    "every command has examples",
    async () => {
      const cwd = tempDir()
      const runs = await all(commands, (path) => runVigil(cwd, {}, [...path.split(" "), "--help"]))
      runs.forEach((run, i) => {
        assert.strictEqual(run.code, 0, commands[i])
        assert.match(
          run.stdout,
          new RegExp(
            `EXAMPLES\\n(.*\\n)*\\s+vigil ${commands[i]}|EXAMPLES\\n(.*\\n)*\\s+\\S+=\\S+ vigil ${commands[i]}`
          ),
          commands[i]
        )
      })
    },
    manyProcesses
  )
})
