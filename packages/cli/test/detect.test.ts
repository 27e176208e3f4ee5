import { assert, describe, it } from "vitest"
import { runVigil, tempDir } from "./VigilProcess.ts"

describe("vigil detect", () => {
  it("prints one JSON line per address, valid or not, and exits 0", async () => {
    const result = await runVigil(tempDir(), {}, [
      "detect",
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
      "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMh"
    ])
    assert.strictEqual(result.code, 0)
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    assert.strictEqual(lines.length, 3)
    assert.strictEqual(lines[0].family, "evm")
    assert.strictEqual(lines[0].networks.length, 13)
    assert.strictEqual(lines[0].normalized, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
    assert.deepStrictEqual(lines[1], {
      address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
      valid: true,
      family: "tron",
      networks: ["tron"],
      normalized: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
      format: "base58"
    })
    assert.deepStrictEqual(lines[2], {
      address: "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMh",
      valid: false,
      reason: "base58check checksum failure"
    })
  })

  it("narrows to --chain and rejects an unknown chain name", async () => {
    const narrowed = await runVigil(tempDir(), {}, [
      "detect",
      "--chain",
      "base",
      "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
    ])
    assert.deepStrictEqual(JSON.parse(narrowed.stdout).networks, ["base"])
    const unknown = await runVigil(tempDir(), {}, ["detect", "--chain", "litecoin", "x"])
    assert.strictEqual(unknown.code, 2)
    assert.strictEqual(unknown.stdout, "")
    assert.match(unknown.stderr, /^vigil detect: .*--chain.*; see vigil detect --help\n$/)
  })
})
