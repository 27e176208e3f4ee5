/**
 * Test helper: a real EVM node (anvil, from npm `@foundry-rs/anvil`) on loopback, and the few JSON-RPC calls tests
 * make of it: deploy, send, mine. The node mines only when told: each deployment or send is mined in its own block. The platform binary is spawned directly (the npm wrapper would leave the node
 * running when killed); a watchdog stops the node if the test process dies without stopping it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as AbiConstructor from "ox/AbiConstructor"
import * as AbiFunction from "ox/AbiFunction"
import type { Compiled } from "./Solidity.ts"

const require = createRequire(import.meta.url)

/** The anvil binary of this platform's package. */
const binary = () =>
  join(
    dirname(
      require.resolve(
        `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}/package.json`
      )
    ),
    "bin",
    "anvil"
  )

/** The data of a transaction creating `contract` with its constructor's `args`. */
const creationData = (contract: Compiled, args: ReadonlyArray<unknown>) =>
  contract.abi.some((i) => (i as { type?: string }).type === "constructor")
    ? AbiConstructor.encode(AbiConstructor.fromAbi(contract.abi as never), {
        bytecode: contract.bytecode,
        args: args as never
      })
    : contract.bytecode

/** The sender's next nonce, counted up. */
const next = (nonces: Map<string, number>, from: string) => {
  const n = nonces.get(from)!
  nonces.set(from, n + 1)
  return n
}

/** A transaction for `submitAll`: a call, or a contract creation; always with its gas. */
export type Transaction = {
  readonly from: `0x${string}`
  readonly gas: number
} & (
  | {
      readonly contract: { readonly abi: ReadonlyArray<unknown>; readonly address: `0x${string}` }
      readonly fn: string
      readonly args: ReadonlyArray<unknown>
    }
  | { readonly deploy: Compiled; readonly args: ReadonlyArray<unknown> }
)

/** A running node. */
export interface Anvil {
  readonly url: string
  readonly chainId: number
  /** The node's unlocked dev accounts. */
  readonly accounts: ReadonlyArray<`0x${string}`>
  readonly rpc: <A = unknown>(method: string, params?: ReadonlyArray<unknown>) => Promise<A>
  /** Deploys a compiled contract; its address. */
  readonly deploy: (
    contract: Compiled,
    args?: ReadonlyArray<unknown>,
    from?: `0x${string}`
  ) => Promise<{ readonly address: `0x${string}`; readonly hash: string; readonly block: number }>
  /**
   * Sends a call of `fn` (by name in the ABI) and waits for its receipt; the block it was mined in and its status.
   * With `gas`, no estimate is made (a call that reverts is sent and mined as failed).
   */
  readonly send: (
    contract: { readonly abi: ReadonlyArray<unknown>; readonly address: `0x${string}` },
    fn: string,
    args: ReadonlyArray<unknown>,
    options?: { readonly from?: `0x${string}`; readonly gas?: number }
  ) => Promise<{ readonly hash: string; readonly block: number; readonly status: boolean }>
  /** Sends a call of `fn` without mining it (it waits in the pool for the next `mine`); its hash. */
  readonly submit: (
    contract: { readonly abi: ReadonlyArray<unknown>; readonly address: `0x${string}` },
    fn: string,
    args: ReadonlyArray<unknown>,
    options?: { readonly from?: `0x${string}`; readonly gas?: number }
  ) => Promise<string>
  /**
   * Sends many transactions in one JSON-RPC batch without mining them (they wait in the pool for the next `mine`):
   * calls of `fn` (by name in the ABI) or creations of `deploy`; their hashes in order. No gas estimate is made.
   */
  readonly submitAll: (transactions: ReadonlyArray<Transaction>) => Promise<ReadonlyArray<string>>
  /** Mines `blocks` blocks (the first holds the pending transactions). */
  readonly mine: (blocks: number) => Promise<void>
  readonly head: () => Promise<number>
  readonly stop: () => Promise<void>
}

/** Starts a node on a free loopback port. */
export const start = async (
  options: {
    readonly chainId?: number
    /** The genesis block's timestamp (Unix seconds); default now. */
    readonly timestamp?: number
    /** The genesis block's number; default 0 (a chain standing in for one long under way starts higher). */
    readonly number?: number
  } = {}
): Promise<Anvil> => {
  const chainId = options.chainId ?? 31337
  const child: ChildProcess = spawn(
    binary(),
    [
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--chain-id",
      String(chainId),
      "--no-mining",
      ...(options.timestamp === undefined ? [] : ["--timestamp", String(options.timestamp)]),
      ...(options.number === undefined ? [] : ["--number", String(options.number)])
    ],
    {
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const watchdog = spawn(
    "sh",
    ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; kill -9 ${child.pid} 2>/dev/null`],
    { stdio: "ignore", detached: true }
  )
  watchdog.unref()
  const stopNow = () => {
    child.kill("SIGKILL")
    watchdog.kill("SIGKILL")
  }
  process.once("exit", stopNow)
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString()
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(seen)
      if (m !== null) resolve(`http://${m[1]}`)
    })
    child.once("exit", (code) => reject(new Error(`anvil exited (${code}) before listening: ${seen}`)))
    child.once("error", reject)
  })
  child.stdout!.resume()
  child.stderr!.resume()
  let id = 0
  const rpc = async <A>(method: string, params: ReadonlyArray<unknown> = []): Promise<A> => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })
    })
    const body = (await response.json()) as { result?: A; error?: { message: string } }
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
    return body.result as A
  }
  const accounts = await rpc<ReadonlyArray<`0x${string}`>>("eth_accounts")
  /** Mines the pending transaction (the node mines only when told, so each send is its own block) and reads its receipt. */
  const receipt = async (hash: string) => {
    await rpc("evm_mine")
    const r = await rpc<{ blockNumber: string; status: string; contractAddress: `0x${string}` | null }>(
      "eth_getTransactionReceipt",
      [hash]
    )
    return { block: Number(BigInt(r.blockNumber)), status: r.status === "0x1", contractAddress: r.contractAddress }
  }
  const anvil: Anvil = {
    url,
    chainId,
    accounts,
    rpc,
    deploy: async (contract, args = [], from = accounts[0]!) => {
      const hash = await rpc<string>("eth_sendTransaction", [{ from, data: creationData(contract, args) }])
      const r = await receipt(hash)
      if (!r.status || r.contractAddress === null) throw new Error("deployment failed")
      return { address: r.contractAddress, hash, block: r.block }
    },
    send: async (contract, fn, args, options = {}) => {
      const hash = await anvil.submit(contract, fn, args, options)
      const r = await receipt(hash)
      return { hash, block: r.block, status: r.status }
    },
    submit: (contract, fn, args, options = {}) =>
      rpc<string>("eth_sendTransaction", [
        {
          from: options.from ?? accounts[0]!,
          to: contract.address,
          data: AbiFunction.encodeData(AbiFunction.fromAbi(contract.abi as never, fn as never), args as never),
          ...(options.gas === undefined ? {} : { gas: `0x${options.gas.toString(16)}` })
        }
      ]),
    submitAll: async (transactions) => {
      if (transactions.length === 0) return []
      // The node may take a batch's requests at once: each sender's nonces are given here, in order.
      const nonces = new Map<string, number>()
      for (const from of new Set(transactions.map((tx) => tx.from)))
        nonces.set(from, Number(BigInt(await rpc<string>("eth_getTransactionCount", [from, "pending"]))))
      const body = transactions.map((tx, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendTransaction",
        params: [
          {
            from: tx.from,
            gas: `0x${tx.gas.toString(16)}`,
            nonce: `0x${next(nonces, tx.from).toString(16)}`,
            ...("deploy" in tx
              ? { data: creationData(tx.deploy, tx.args) }
              : {
                  to: tx.contract.address,
                  data: AbiFunction.encodeData(
                    AbiFunction.fromAbi(tx.contract.abi as never, tx.fn as never),
                    tx.args as never
                  )
                })
          }
        ]
      }))
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const answers = (await response.json()) as Array<{ id: number; result?: string; error?: { message: string } }>
      const hashes = new Array<string>(transactions.length)
      for (const a of answers) {
        if (a.error !== undefined || a.result === undefined)
          throw new Error(`eth_sendTransaction ${a.id}: ${a.error?.message ?? "no hash"}`)
        hashes[a.id] = a.result
      }
      return hashes
    },
    mine: async (blocks) => {
      await rpc("anvil_mine", [`0x${blocks.toString(16)}`])
    },
    head: async () => Number(BigInt(await rpc<string>("eth_blockNumber"))),
    stop: async () => {
      process.removeListener("exit", stopNow)
      watchdog.kill("SIGKILL")
      if (child.exitCode !== null) return
      // SIGKILL: a node that stopped answering (anvil 1.7.1 can, when call traces are read while it mines)
      // ignores SIGTERM, and nothing of its state is wanted.
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGKILL")
      })
    }
  }
  return anvil
}
