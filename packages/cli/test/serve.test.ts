/** End to end: the built `vigil` executable as a child process, on a real port and a real database file. */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { createServer, connect } from "node:net"
import { request } from "node:http"
import { Anvil, Solidity } from "@vigil/testkit"
import { caller, runVigil, serve, spawnVigil, tempDir } from "./VigilProcess.ts"

describe("vigil serve", () => {
  it("serves /health on the embedded default database and creates ./.vigil/vigil.db", async () => {
    const cwd = tempDir()
    const { VIGIL_DB: _, ...env } = process.env
    const running = await serve(cwd, { ...env } as Record<string, string>)
    assert.match(
      running.output(),
      /Vigil 0\.1\.0 listening on http:\/\/127\.0\.0\.1:\d+ \(storage: sqlite \.\/\.vigil\/vigil\.db\)/
    )
    assert.strictEqual(running.output().trim().split("\n").length, 1)
    const response = await fetch(`${running.url}/health`)
    assert.strictEqual(response.status, 200)
    const body = (await response.json()) as { status: string; storage: { kind: string } }
    assert.strictEqual(body.status, "ok")
    assert.strictEqual(body.storage.kind, "sqlite")
    assert.isTrue(existsSync(join(cwd, ".vigil", "vigil.db")))
    running.child.kill("SIGTERM")
    assert.strictEqual(await running.exited, 0)
  })

  it("answers every request sent from the moment its port accepts connections", async () => {
    const cwd = tempDir()
    // A free port, known before the server starts, so requests can be sent before it says it listens.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const running = spawnVigil(cwd, ["serve", "--port", String(port), "--db", "v.db"])
    let exited = false
    void running.exited.then(() => (exited = true))
    // Knock until the port accepts a connection (the server may not have attached its handler yet).
    for (;;) {
      if (exited) throw new Error("vigil serve exited before listening")
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.destroy()
          resolve(true)
        })
        socket.on("error", () => resolve(false))
      })
      if (open) break
    }
    const send = (method: string, path: string, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, method, path, agent: false, timeout: 20_000 }, (res) => {
          res.resume()
          res.on("end", () => resolve(res.statusCode ?? 0))
        })
        req.on("timeout", () => reject(new Error(`${method} ${path} got no answer`)))
        req.on("error", reject)
        req.end(body)
      })
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => [
        send("GET", "/health"),
        send("GET", "/api/v2/status"),
        send("POST", "/api/v3/intel/batch", "{}"),
        send("GET", "/api/v2/webhooks"),
        send("POST", "/api/v3/intel", "{}")
      ]).flat()
    )
    for (const status of statuses) assert.oneOf(status, [200, 401, 503])
    assert.strictEqual(await send("GET", "/health"), 200)
  }, 60_000)

  it("shuts down cleanly on SIGINT: exit 0, listener closed, database checkpointed and closed", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "data/custom.db" })
    assert.strictEqual((await fetch(`${running.url}/health`)).status, 200)
    running.child.kill("SIGINT")
    assert.strictEqual(await running.exited, 0)
    assert.isTrue(existsSync(join(cwd, "data", "custom.db")))
    assert.isFalse(existsSync(join(cwd, "data", "custom.db-wal")), "WAL is folded back in when the last handle closes")
    const refused = await fetch(`${running.url}/health`).then(
      () => false,
      () => true
    )
    assert.isTrue(refused)
  })

  it("takes --db, --host and --port over the environment", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "ignored.db", VIGIL_PORT: "1" }, ["--db", "flag.db", "--port", "0"])
    assert.match(running.output(), /storage: sqlite flag\.db/)
    assert.strictEqual((await fetch(`${running.url}/health`)).status, 200)
    assert.isTrue(existsSync(join(cwd, "flag.db")))
    assert.isFalse(existsSync(join(cwd, "ignored.db")))
    running.child.kill("SIGTERM")
    await running.exited
  })

  it("refuses a file that is not a database with one clear line, exit 1, and leaves the file alone", async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, "notes.db"), "my notes\n")
    const result = await runVigil(cwd, { VIGIL_DB: "notes.db", VIGIL_PORT: "0" }, ["serve"])
    assert.strictEqual(result.code, 1)
    assert.strictEqual(
      result.stderr.trim(),
      "vigil: cannot use the database notes.db: Corrupt: SQLITE_NOTADB: file is not a database"
    )
    assert.strictEqual(readFileSync(join(cwd, "notes.db"), "utf8"), "my notes\n")
  })

  it("refuses a port that is taken, naming it", async () => {
    const cwd = tempDir()
    const first = await serve(cwd, { VIGIL_DB: "a.db" })
    const port = new URL(first.url).port
    const second = await runVigil(cwd, { VIGIL_DB: "b.db", VIGIL_HOST: "127.0.0.1", VIGIL_PORT: port }, ["serve"])
    assert.strictEqual(second.code, 1)
    assert.match(second.stderr, new RegExp(`^vigil: cannot listen on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`))
    first.child.kill("SIGTERM")
    await first.exited
  })

  it("rejects an out-of-range port and a malformed VIGIL_PORT", async () => {
    const cwd = tempDir()
    const flag = await runVigil(cwd, {}, ["serve", "--port", "70000"])
    assert.strictEqual(flag.code, 2)
    assert.strictEqual(flag.stdout, "")
    assert.match(flag.stderr, /^vigil serve: invalid value for flag --port: "70000"\. .*; see vigil serve --help\n$/)
    // A bad environment value names the variable, the value and what is expected.
    const env = await runVigil(cwd, { VIGIL_PORT: "eighty" }, ["serve"])
    assert.strictEqual(env.code, 2)
    assert.strictEqual(env.stdout, "")
    assert.strictEqual(
      env.stderr,
      'vigil serve: invalid VIGIL_PORT "eighty" (the --port setting): expected a number; see vigil serve --help\n'
    )
    assert.isFalse(existsSync(join(cwd, ".vigil")), "nothing is created when the configuration is invalid")
  })

  it("takes VIGIL_HOT_ROUTES=off (every request through the router) and refuses other values in one line", async () => {
    const cwd = tempDir()
    const running = await serve(cwd, { VIGIL_DB: "v.db", VIGIL_HOT_ROUTES: "off" })
    const response = await fetch(`${running.url}/api/v3/intel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" })
    })
    assert.strictEqual(response.status, 401)
    assert.deepStrictEqual(await response.json(), { error: "Unauthorized", message: "Invalid or missing API key" })
    running.child.kill("SIGTERM")
    assert.strictEqual(await running.exited, 0)
    const bad = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_PORT: "0", VIGIL_HOT_ROUTES: "maybe" }, ["serve"])
    assert.strictEqual(bad.code, 1)
    assert.strictEqual(bad.stderr.trim(), "vigil: invalid VIGIL_HOT_ROUTES: expected on or off")
  })

  it("refuses a monitoring URL that is not http(s) (ws(s) for new heads), a suffix that is not a chain id, and a websocket without its HTTP URL, in one line", async () => {
    const cwd = tempDir()
    const cases: Array<readonly [Record<string, string>, string]> = [
      [{ VIGIL_SOURCIFY_URL: "ftp://mirror" }, "vigil: invalid VIGIL_SOURCIFY_URL: ftp://mirror is not an http(s) URL"],
      [{ VIGIL_ETHERSCAN_URL: "explorer" }, "vigil: invalid VIGIL_ETHERSCAN_URL: explorer is not an http(s) URL"],
      [{ VIGIL_RPC_URL_1: "localhost:8545" }, "vigil: invalid VIGIL_RPC_URL_1: localhost:8545 is not an http(s) URL"],
      [
        { VIGIL_RPC_URL_MAINNET: "http://127.0.0.1:8545" },
        "vigil: invalid VIGIL_RPC_URL_MAINNET: the suffix must be a chain id (a whole number)"
      ],
      [
        { VIGIL_RPC_URL_1: "http://127.0.0.1:8545", VIGIL_RPC_WS_URL_1: "http://127.0.0.1:8545" },
        "vigil: invalid VIGIL_RPC_WS_URL_1: http://127.0.0.1:8545 is not a ws(s) URL"
      ],
      [
        { VIGIL_RPC_WS_URL_5: "ws://127.0.0.1:8545" },
        "vigil: invalid VIGIL_RPC_WS_URL_5: chain 5 has no VIGIL_RPC_URL_5 (blocks are read over HTTP)"
      ]
    ]
    for (const [env, expected] of cases) {
      const bad = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_PORT: "0", ...env }, ["serve"])
      assert.strictEqual(bad.code, 1, JSON.stringify(env))
      assert.strictEqual(bad.stderr.trim(), expected)
    }
  })

  it("follows the chains of a chains file (node, websocket, confirmations), a variable overriding it; a bad file is refused in one line", async () => {
    const cwd = tempDir()
    const write = (name: string, body: unknown) => {
      writeFileSync(join(cwd, name), typeof body === "string" ? body : JSON.stringify(body))
      return name
    }
    const cases: Array<readonly [unknown, string]> = [
      ["{", "invalid chains file bad.json: expected a valid JSON string"],
      [{ chains: [{ chainId: 1 }] }, "invalid chains file bad.json: chains[0].rpcUrl: missing key"],
      [
        { chains: [{ chainId: 1, rpcUrl: "http://127.0.0.1:8545", rpc: "x" }] },
        "invalid chains file bad.json: chains[0].rpc: expected no excess property"
      ],
      [
        { chains: [{ chainId: 1, rpcUrl: "127.0.0.1:8545" }] },
        "invalid chains file bad.json: chains[0].rpcUrl: 127.0.0.1:8545 is not an http(s) URL"
      ],
      [
        { chains: [{ chainId: 1, rpcUrl: "http://127.0.0.1:8545", wsUrl: "http://127.0.0.1:8545" }] },
        "invalid chains file bad.json: chains[0].wsUrl: http://127.0.0.1:8545 is not a ws(s) URL"
      ],
      [
        { chains: [{ chainId: 1, rpcUrl: "http://127.0.0.1:8545", confirmations: 1001 }] },
        "invalid chains file bad.json: chains[0].confirmations: expected a value between 0 and 1000"
      ],
      [
        {
          chains: [
            { chainId: 5, rpcUrl: "http://127.0.0.1:8545" },
            { chainId: 5, rpcUrl: "http://127.0.0.1:8546" }
          ]
        },
        "invalid chains file bad.json: chains[1].chainId: chain 5 is listed twice"
      ]
    ]
    for (const [body, expected] of cases) {
      const bad = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_PORT: "0" }, [
        "serve",
        "--chains",
        write("bad.json", body)
      ])
      assert.strictEqual(bad.code, 1, JSON.stringify(body))
      assert.strictEqual(bad.stderr.trim(), `vigil: ${expected}`)
    }
    const missing = await runVigil(cwd, { VIGIL_DB: "v.db", VIGIL_CHAINS_FILE: "none.json" }, ["serve"])
    assert.strictEqual(missing.code, 1)
    assert.match(missing.stderr.trim(), /^vigil: cannot read the chains file none\.json: ENOENT/)

    const node = await Anvil.start()
    try {
      const key = JSON.parse((await runVigil(cwd, {}, ["keys", "create", "--db", "v.db", "--name", "Acme"])).stdout)
        .key as string
      const chains = write("chains.json", {
        chains: [{ chainId: 31337, rpcUrl: node.url, wsUrl: node.url.replace(/^http/, "ws"), confirmations: 1 }]
      })
      // The file says one confirmation; the variable says two, and wins.
      const server = await serve(
        cwd,
        { VIGIL_DB: "v.db", VIGIL_CHAINS_FILE: chains, VIGIL_CONFIRMATIONS_31337: "2", VIGIL_FOLLOW_POLL_MS: "50" },
        []
      )
      try {
        const call = caller(() => server.url, key)
        await call("POST", "/v1/contracts", {
          chainId: 31337,
          contractAddress: node.accounts[0],
          label: "Token",
          ABI: Solidity.fixtures().Token.abi
        })
        const bot = await call("POST", "/v1/bots", {
          botName: "b",
          chainId: 31337,
          watchRule: { expressions: ["system.emitted(tx1.Token.E.Transfer)"] }
        })
        assert.strictEqual(bot.status, 201, JSON.stringify(bot.json))
        await node.mine(5)
        const head = await node.head()
        let follow: any
        for (let i = 0; i < 400; i++) {
          follow = (await call("GET", "/health")).json.follow?.[0]
          if (follow?.heads === "subscribed" && follow.cursor === head - 2) break
          await new Promise((done) => setTimeout(done, 25))
        }
        assert.deepStrictEqual(
          [follow.chainId, follow.heads, follow.cursor, follow.lag],
          [31337, "subscribed", head - 2, 2]
        )
      } finally {
        server.child.kill("SIGTERM")
        await server.exited
      }
    } finally {
      await node.stop()
    }
  })
})
