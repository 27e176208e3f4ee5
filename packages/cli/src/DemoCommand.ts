/**
 * `vigil demo`: from nothing to a first alert on this machine. It starts a local chain (the anvil `npm ci` installs),
 * `vigil serve` on it, a receiver for webhooks, deploys a token, registers it with its ABI, opens a channel to the
 * receiver, creates a bot, makes a transfer and prints the alert as it arrives. Every step is printed as the command
 * or API call that does it by hand; the requests' bodies are written to the demo's folder.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Console, Effect, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import * as AbiConstructor from "ox/AbiConstructor"
import * as AbiFunction from "ox/AbiFunction"
import { CommandFailed } from "./CommandFailed.ts"

const require = createRequire(import.meta.url)

/** The demo's token, compiled from `demo/DemoToken.sol`. */
const token = Schema.decodeUnknownSync(
  Schema.fromJsonString(
    Schema.Struct({
      abi: Schema.Array(Schema.Unknown),
      bytecode: Schema.TemplateLiteral(["0x", Schema.String])
    })
  )
)(readFileSync(fileURLToPath(new URL("../demo/DemoToken.json", import.meta.url)), "utf8"))

/** What `vigil keys create` prints. */
const decodeIssued = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Struct({ key: Schema.String })))

/** The anvil binary of this platform, as `npm ci` installs it with the dev dependencies; undefined without it. */
const anvilBinary = (): string | undefined => {
  try {
    const arch = process.arch === "x64" ? "amd64" : process.arch
    return join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), "bin", "anvil")
  } catch {
    return undefined
  }
}

/** Resolves with the first match of `pattern` in a child's output, or rejects when it exits first. */
const awaitOutput = (child: ChildProcess, pattern: RegExp, what: string) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    let seen = ""
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const m = pattern.exec(seen)
      if (m !== null) resolve(m)
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before it was ready: ${seen.trim()}`)))
    child.once("error", (e) => reject(new Error(`${what} could not start: ${e.message}`)))
  })

/** What the demo starts, to stop it at the end. */
interface Running {
  readonly children: Array<ChildProcess>
  receiver?: Server
}

const stopAll = (running: Running) => {
  for (const child of running.children) if (child.exitCode === null) child.kill("SIGTERM")
  running.receiver?.close()
}

/** One JSON-RPC call to the local chain. */
const rpc = async <A>(url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<A> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  const body = (await response.json()) as { result?: A; error?: { message: string } }
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
  return body.result as A
}

/** Sends a transaction from the chain's first account and waits for it to be mined; its hash and block. */
const transact = async (url: string, tx: { readonly to?: string; readonly data: string }) => {
  const [from] = await rpc<ReadonlyArray<string>>(url, "eth_accounts")
  const hash = await rpc<string>(url, "eth_sendTransaction", [{ from, ...tx }])
  for (;;) {
    const receipt = await rpc<{ status: string; blockNumber: string; contractAddress: string | null } | null>(
      url,
      "eth_getTransactionReceipt",
      [hash]
    )
    if (receipt !== null) {
      if (receipt.status !== "0x1") throw new Error(`transaction ${hash} failed`)
      return { hash, block: Number(BigInt(receipt.blockNumber)), contractAddress: receipt.contractAddress }
    }
    await new Promise((done) => setTimeout(done, 50))
  }
}

/** The demo, step by step; `say` prints a line. */
const demo = async (say: (line: string) => void, keep: boolean, timeoutMillis: number) => {
  const anvil = anvilBinary()
  if (anvil === undefined)
    throw new Error(
      "vigil demo needs anvil, which `npm ci` installs with the repository's dev dependencies (@foundry-rs/anvil)"
    )
  const dir = mkdtempSync(join(tmpdir(), "vigil-demo-"))
  const running: Running = { children: [] }
  const bin = fileURLToPath(new URL("./bin.js", import.meta.url))
  try {
    const chainUrl = await startChain(anvil, running)
    say(`1. A local chain (chain id 31337), its blocks mined as transactions arrive:`)
    say(`   $ ${anvil} --chain-id 31337 --port ${new URL(chainUrl).port}`)

    const db = join(dir, "demo.db")
    const env = {
      ...process.env,
      VIGIL_DB: db,
      VIGIL_HOST: "127.0.0.1",
      VIGIL_PORT: "0",
      VIGIL_RPC_URL_31337: chainUrl,
      VIGIL_CONFIRMATIONS_31337: "0",
      VIGIL_FOLLOW_POLL_MS: "250",
      VIGIL_WEBHOOK_LOOPBACK_HTTP: "1",
      VIGIL_SOURCIFY_URL: "",
      VIGIL_ETHERSCAN_URL: ""
    }
    const server = spawn(process.execPath, [bin, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] })
    running.children.push(server)
    const base = (await awaitOutput(server, /listening on (http:\/\/[^\s]+)/, "vigil serve"))[1]!
    say(`2. Vigil on it, following the chain and allowed plain-HTTP webhooks to this machine:`)
    say(
      `   $ VIGIL_DB=${db} VIGIL_RPC_URL_31337=${chainUrl} VIGIL_CONFIRMATIONS_31337=0 VIGIL_WEBHOOK_LOOPBACK_HTTP=1 npx vigil serve --port ${new URL(base).port}`
    )

    const issued = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, "keys", "create", "--name", "demo"], { env })
      let out = ""
      child.stdout.on("data", (c: Buffer) => (out += c.toString()))
      child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`vigil keys create exited ${code}`))))
    })
    const key = decodeIssued(issued).key
    say(`3. An API key (printed once; only its hash is stored):`)
    say(`   $ VIGIL_DB=${db} npx vigil keys create --name demo`)

    const supply = 10n ** 24n
    const deployed = await transact(chainUrl, {
      data: AbiConstructor.encode(AbiConstructor.fromAbi(token.abi as never), {
        bytecode: token.bytecode,
        args: [supply] as never
      })
    })
    const tokenAddress = deployed.contractAddress!
    say(`4. A token on the chain: DemoToken (DEMO, 18 decimals) at ${tokenAddress}, block ${deployed.block}.`)

    const call = async (method: string, path: string, file: string, body: unknown) => {
      writeFileSync(join(dir, file), JSON.stringify(body, null, 2))
      say(
        `   $ curl -X ${method} ${base}${path} -H "x-api-key: ${key}" -H "Content-Type: application/json" -d @${join(dir, file)}`
      )
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const answer = (await response.json()) as Record<string, unknown>
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`)
      return answer
    }
    say(`5. The token registered with its ABI, under the label DemoToken:`)
    await call("POST", "/v1/contracts", "contract.json", {
      chainId: 31337,
      contractAddress: tokenAddress,
      label: "DemoToken",
      ABI: token.abi
    })

    const alerts: Array<unknown> = []
    let arrived: (() => void) | undefined
    running.receiver = createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        res.writeHead(req.method === "POST" ? 200 : 404).end()
        if (req.method !== "POST") return
        try {
          alerts.push(JSON.parse(body))
        } catch {
          alerts.push(body)
        }
        arrived?.()
      })
    })
    await new Promise<void>((resolve) => running.receiver!.listen(0, "127.0.0.1", resolve))
    const receiverUrl = `http://127.0.0.1:${(running.receiver.address() as AddressInfo).port}/alerts`
    say(`6. A receiver for webhooks at ${receiverUrl}, and a channel to it:`)
    const channel = (await call("POST", "/v1/notifications", "channel.json", {
      type: "webhook",
      name: "demo receiver",
      url: receiverUrl
    })) as { channel: { id: string } }

    const rule = "system.uintCompare(tx1.DemoToken.E.Transfer.value, >, 1000000000000000000000)"
    say(`7. A bot: alert on every DemoToken transfer of more than 1,000 DEMO (${rule}):`)
    const bot = (await call("POST", "/v1/bots", "bot.json", {
      botName: "large DEMO transfers",
      chainId: 31337,
      severity: "High",
      watchRule: { expressions: [rule] },
      notifications: [channel.channel.id]
    })) as { bot: { id: string } }

    const [, recipient] = await rpc<ReadonlyArray<string>>(chainUrl, "eth_accounts")
    const sent = await transact(chainUrl, {
      to: tokenAddress,
      data: AbiFunction.encodeData(AbiFunction.fromAbi(token.abi as never, "transfer" as never), [
        recipient as `0x${string}`,
        5_000n * 10n ** 18n
      ] as never)
    })
    say(`8. A transfer of 5,000 DEMO to ${recipient}: transaction ${sent.hash}, block ${sent.block}.`)

    const waited = new Promise<void>((resolve) => {
      arrived = resolve
      if (alerts.length > 0) resolve()
    })
    const timer = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), timeoutMillis).unref())
    if ((await Promise.race([waited, timer])) === "late")
      throw new Error(`no alert within ${timeoutMillis / 1000} s; the server's log: vigil serve on ${db}`)
    say(`9. The alert, as the receiver got it (signed; the channel's secret verifies it):`)
    say(JSON.stringify(alerts[0]))
    say(`   The bot's alerts are also kept:`)
    say(`   $ curl ${base}/v1/bots/${bot.bot.id}/alerts -H "x-api-key: ${key}"`)
    if (!keep)
      say(
        `Everything the demo started is stopped now; vigil demo --keep leaves it running, to repeat these calls by hand.`
      )
    if (keep) {
      say(`Everything keeps running; Ctrl-C stops it (the demo's files are in ${dir}).`)
      await new Promise<void>((resolve) => process.once("SIGINT", resolve))
    }
  } finally {
    stopAll(running)
    if (!keep) rmSync(dir, { recursive: true, force: true })
  }
}

/** Starts anvil on a free loopback port and waits until it answers; its URL. */
const startChain = async (anvil: string, running: Running) => {
  const child = spawn(anvil, ["--host", "127.0.0.1", "--port", "0", "--chain-id", "31337"], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.children.push(child)
  const m = await awaitOutput(child, /Listening on (127\.0\.0\.1:\d+)/, "anvil")
  child.stdout?.resume()
  child.stderr?.resume()
  return `http://${m[1]}`
}

/** The command. */
export const command = Command.make(
  "demo",
  {
    keep: Flag.Boolean("keep").pipe(
      Flag.withDescription("Keep the chain, the server and the receiver running after the first alert (Ctrl-C stops)"),
      Flag.withDefault(false)
    ),
    timeout: Flag.Int("timeout").pipe(
      Flag.withDescription("Seconds to wait for the alert (default 60)"),
      Flag.withDefault(60)
    )
  },
  ({ keep, timeout }) =>
    Effect.gen(function* () {
      yield* Effect.tryPromise({
        try: () => demo((line) => void process.stdout.write(`${line}\n`), keep, timeout * 1000),
        catch: (e) => new CommandFailed({ message: `demo: ${(e as Error).message}` })
      })
      yield* Console.log("Done: that is monitoring end to end. docs/monitoring.md walks through the same steps.")
    })
).pipe(
  Command.withDescription(
    "From nothing to a first alert: a local chain (anvil), a server, a token, a bot and a webhook receiver, each step printed as the call that does it"
  ),
  Command.withExamples([
    { command: "vigil demo", description: "A first alert on this machine" },
    { command: "vigil demo --keep", description: "The same, left running to try more" }
  ])
)
