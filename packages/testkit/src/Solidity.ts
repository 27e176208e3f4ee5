/** Test helper: Solidity sources compiled with solc-js (the npm compiler), for contracts deployed on a test node. */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const require = createRequire(import.meta.url)

/** A compiled contract: its ABI (JSON) and creation bytecode. */
export interface Compiled {
  readonly abi: ReadonlyArray<unknown>
  readonly bytecode: `0x${string}`
}

/**
 * The fixtures chain tests deploy (`contracts/Fixtures.sol`): Token (an ERC-20), Router (calls it internally),
 * Noisy (emits, then reverts), Proxy (EIP-1967), Spray (emits `Transfer` logs for any senders), and TetherFreezes and
 * CircleFreezes (emit USDT's and USDC's freeze events).
 */
export const fixtures = (): Readonly<
  Record<"Token" | "Router" | "Noisy" | "Proxy" | "Spray" | "TetherFreezes" | "CircleFreezes", Compiled>
> => {
  const compiled = compile(fileURLToPath(new URL("../contracts/Fixtures.sol", import.meta.url)))
  const pick = (name: string) => {
    const c = compiled[name]
    if (c === undefined) throw new Error(`Fixtures.sol has no contract ${name}`)
    return c
  }
  return {
    Token: pick("Token"),
    Router: pick("Router"),
    Noisy: pick("Noisy"),
    Proxy: pick("Proxy"),
    Spray: pick("Spray"),
    TetherFreezes: pick("TetherFreezes"),
    CircleFreezes: pick("CircleFreezes")
  }
}

/** Compiles one source file; the contracts by name. Fails with solc's errors. */
export const compile = (path: string): Readonly<Record<string, Compiled>> => {
  const solc = require("solc") as { compile: (input: string) => string }
  const input = {
    language: "Solidity",
    sources: { [path]: { content: readFileSync(path, "utf8") } },
    settings: {
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: ReadonlyArray<{ severity: string; formattedMessage: string }>
    contracts: Record<string, Record<string, { abi: ReadonlyArray<unknown>; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  return Object.fromEntries(
    Object.entries(output.contracts[path] ?? {}).map(([name, c]) => [
      name,
      { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as const }
    ])
  )
}
