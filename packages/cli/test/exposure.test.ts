/** End to end: `vigil screen --exposure` reading transfers from a real node (anvil), and refusing without one. */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Anvil } from "@vigil/testkit"
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

describe("vigil screen --exposure", () => {
  it("names the listed counterparty and its transaction, with the window read", async () => {
    const node = await Anvil.start()
    try {
      const cwd = tempDir()
      const db = join(cwd, "vigil.db")
      const listed = node.accounts[2]!
      const recipient = "0x00000000000000000000000000000000000e0002"
      const sent = await node.rpc<string>("eth_sendTransaction", [{ from: listed, to: recipient, value: "0x20" }])
      await node.mine(1)
      writeFileSync(join(cwd, "listed.txt"), `${listed}\n`)
      const ingested = await runVigil(cwd, {}, [
        "ingest",
        "address-list",
        "listed.txt",
        "--list",
        "ours",
        "--category",
        "sanctions",
        "--authority",
        "official",
        "--db",
        db
      ])
      assert.strictEqual(ingested.code, 0, ingested.stderr)
      // 32 wei: counted only with the floor for the native coin set to 0 (its default is 0.1).
      const env = {
        [`VIGIL_RPC_URL_${node.chainId}`]: node.url,
        VIGIL_EXPOSURE_BLOCKS: "50",
        VIGIL_EXPOSURE_DUST_NATIVE: "0"
      }
      const screened = await runVigil(cwd, env, ["screen", recipient, "--exposure", "--db", db])
      assert.strictEqual(screened.code, 0, screened.stderr)
      const result = JSON.parse(screened.stdout)
      assert.strictEqual(result.signals[0].type, "exposure_sanctioned")
      assert.deepStrictEqual(result.signals[0].evidence.exposure.transactions, [sent])
      const head = await node.head()
      assert.deepStrictEqual(result.metadata.exposure.windows, [
        { network: "chain-31337", from_block: Math.max(0, head - 49), to_block: head, transfers: 1, native: true }
      ])
      const bad = await runVigil(cwd, { ...env, VIGIL_EXPOSURE_BLOCKS: "0" }, [
        "screen",
        recipient,
        "--exposure",
        "--db",
        db
      ])
      assert.strictEqual(bad.code, 1)
      assert.strictEqual(
        bad.stderr.trim(),
        "vigil: invalid VIGIL_EXPOSURE_BLOCKS: 0 is not a whole number from 1 to 10000000"
      )
      const floor = await runVigil(cwd, { ...env, VIGIL_EXPOSURE_DUST_NATIVE: "1e-3" }, [
        "screen",
        recipient,
        "--exposure",
        "--db",
        db
      ])
      assert.strictEqual(floor.code, 1)
      assert.strictEqual(
        floor.stderr.trim(),
        "vigil: invalid VIGIL_EXPOSURE_DUST_NATIVE: 1e-3 is not an amount in whole units (e.g. 0.1)"
      )
    } finally {
      await node.stop()
    }
  }, 60_000)

  it("refuses with one line when no node is configured", async () => {
    const cwd = tempDir()
    const r = await runVigil(cwd, {}, [
      "screen",
      "0x00000000000000000000000000000000000e0003",
      "--exposure",
      "--db",
      join(cwd, "v.db")
    ])
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      r.stderr.trim(),
      "vigil: --exposure reads transfers from a node: set VIGIL_RPC_URL_<chainId> for at least one chain"
    )
  })
})
