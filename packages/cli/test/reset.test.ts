/** End to end: `vigil follow reset` re-anchors a chain's follower on a real node, and refuses bad input in one line. */
import { Anvil } from "@vigil/testkit"
import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

describe("vigil follow reset", () => {
  it("sets the cursor at the node's head (or --at) and says what it did; one clear line for what it cannot do", async () => {
    const cwd = tempDir()
    const noNode = await runVigil(cwd, {}, ["follow", "reset", "--db", "v.db", "--chain", "31337"])
    assert.strictEqual(noNode.code, 1)
    assert.strictEqual(
      noNode.stderr.trim(),
      "vigil: no node for chain 31337: give --rpc URL or set VIGIL_RPC_URL_31337"
    )
    const node = await Anvil.start()
    try {
      await node.mine(5)
      const head = await node.head()
      const reset = await runVigil(cwd, { VIGIL_RPC_URL_31337: node.url }, [
        "follow",
        "reset",
        "--db",
        "v.db",
        "--chain",
        "31337"
      ])
      assert.strictEqual(reset.code, 0, reset.stderr)
      const done = JSON.parse(reset.stdout)
      assert.deepStrictEqual(
        [done.chainId, done.cursor.number, done.kept, done.retracted, done.unverified],
        [31337, head, 0, 0, 0]
      )
      assert.match(done.cursor.hash, /^0x[0-9a-f]{64}$/)
      const at = await runVigil(cwd, {}, [
        "follow",
        "reset",
        "--db",
        "v.db",
        "--chain",
        "31337",
        "--rpc",
        node.url,
        "--at",
        "2"
      ])
      assert.strictEqual(JSON.parse(at.stdout).cursor.number, 2)
      const beyond = await runVigil(cwd, {}, [
        "follow",
        "reset",
        "--db",
        "v.db",
        "--chain",
        "31337",
        "--rpc",
        node.url,
        "--at",
        String(head + 10)
      ])
      assert.strictEqual(beyond.code, 1)
      assert.strictEqual(
        beyond.stderr.trim(),
        `vigil: block ${head + 10} is not on the node of chain 31337 (its head is ${head})`
      )
    } finally {
      await node.stop()
    }
  }, 60_000)
})
