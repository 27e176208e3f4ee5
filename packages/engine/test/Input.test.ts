/** Opening ingest inputs: what is read is counted as stored, so progress over a .bz2 ends at 100%. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Input } from "@vigil/engine"
import { Effect, Stream } from "effect"
import { afterAll, assert, describe, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "vigil-input-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const drain = (input: Input.Input) =>
  Effect.runPromise(
    Stream.runFold(
      input.bytes,
      () => 0,
      (n, chunk) => n + chunk.length
    )
  )

describe("Input.open", () => {
  it("counts the compressed bytes of a .bz2 as read, and hands on the decompressed ones", async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`).join("\n")
    const plain = join(dir, "list.txt")
    writeFileSync(plain, text)
    execFileSync("bzip2", ["-k", plain])
    const compressed = `${plain}.bz2`
    const input = await Effect.runPromise(Input.open(compressed))
    assert.strictEqual(input.size, statSync(compressed).size)
    assert.strictEqual(input.read(), 0)
    const decoded = await drain(input)
    assert.strictEqual(decoded, text.length)
    assert.strictEqual(input.read(), input.size, "progress ends at the size it started from")
    assert.isBelow(input.size!, decoded)
  })

  it("counts a plain file as it is", async () => {
    const file = join(dir, "small.txt")
    writeFileSync(file, "abc\n")
    const input = await Effect.runPromise(Input.open(file))
    assert.strictEqual(await drain(input), 4)
    assert.strictEqual(input.read(), 4)
  })
})
