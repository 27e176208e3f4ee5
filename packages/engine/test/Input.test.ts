/** Opening ingest inputs: what is read is counted as stored, so progress over a .bz2 ends at 100%. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Ingestion } from "@vigil/core"
import { Input } from "@vigil/engine"
import fc from "fast-check"
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

  it("decodes a .bz2 of many blocks byte for byte, fails a broken one with the decoder's reason, and lets a reader stop early", async () => {
    const text = Array.from({ length: 200_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`).join("\n")
    const plain = join(dir, "big.txt")
    writeFileSync(plain, text)
    execFileSync("bzip2", ["-k", "-f", plain])
    const compressed = readFileSync(`${plain}.bz2`)
    // The stream's header kept, a block's bytes overwritten.
    const broken = Buffer.from(compressed)
    broken.fill(0x55, 100, 400)
    writeFileSync(join(dir, "broken.txt.bz2"), broken)
    const failed = await Effect.runPromise(
      Effect.flip(Effect.flatMap(Input.open(join(dir, "broken.txt.bz2")), (input) => Stream.runDrain(input.bytes)))
    )
    assert.match(failed.message, /^cannot read .*broken\.txt\.bz2: bzip2: /)
    // Decoded whole, byte for byte.
    const whole = await Effect.runPromise(
      Effect.flatMap(Input.open(`${plain}.bz2`), (input) => Stream.runCollect(input.bytes))
    )
    assert.isTrue(Buffer.concat(whole).equals(Buffer.from(text)), "the decoded bytes are the original's")
    // Two decoded pieces taken, then the reader stops: the decoder is stopped with it.
    const taken = await Effect.runPromise(
      Effect.flatMap(Input.open(`${plain}.bz2`), (input) => Stream.runCollect(Stream.take(input.bytes, 2)))
    )
    assert.strictEqual(taken.length, 2)
    assert.strictEqual(Buffer.concat(taken).toString("utf8"), text.slice(0, Buffer.concat(taken).length))
  })

  it("decodes what bzip2 makes of any bytes, byte for byte: runs longer than a block, several streams end to end", async () => {
    const decode = async (name: string, compressed: Uint8Array) => {
      writeFileSync(join(dir, name), compressed)
      return Buffer.concat(
        await Effect.runPromise(Effect.flatMap(Input.open(join(dir, name)), (input) => Stream.runCollect(input.bytes)))
      )
    }
    const bzip2 = (bytes: Uint8Array) => execFileSync("bzip2", ["-c", "-1"], { input: bytes })
    // 3 MB of one byte: each 100 kB block of bzip2 -1 decodes to far more than 100 kB.
    const runs = Buffer.alloc(3_000_000, 0x61)
    assert.isTrue((await decode("runs.bz2", bzip2(runs))).equals(runs))
    // Two streams one after the other (as parallel compressors write them) are one input.
    const first = Buffer.from("first stream\n".repeat(20_000))
    const second = Buffer.from("second stream\n".repeat(30_000))
    const joined = await decode("two.bz2", Buffer.concat([bzip2(first), bzip2(second)]))
    assert.isTrue(joined.equals(Buffer.concat([first, second])))
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.uint8Array({ maxLength: 2_000 }), fc.integer({ min: 0, max: 255 })), { maxLength: 60 }),
        async (parts) => {
          // Random bytes mixed with runs of one byte, up to 60 kB long.
          const bytes = Buffer.concat(
            parts.map((p) => (typeof p === "number" ? Buffer.alloc((p + 1) * 240, p) : Buffer.from(p)))
          )
          assert.isTrue((await decode("any.bz2", bzip2(bytes))).equals(bytes))
        }
      ),
      { numRuns: 25 }
    )
  })

  it("fails a .bz2 cut short with the decoder's reason, and a file that is not bzip2 at all", async () => {
    const text = Buffer.from("0x0000000000000000000000000000000000000001\n".repeat(50_000))
    const compressed = execFileSync("bzip2", ["-c"], { input: text })
    writeFileSync(join(dir, "cut.txt.bz2"), compressed.subarray(0, compressed.length - 20))
    writeFileSync(join(dir, "plain.txt.bz2"), text)
    for (const name of ["cut.txt.bz2", "plain.txt.bz2"]) {
      const failed = await Effect.runPromise(
        Effect.flip(Effect.flatMap(Input.open(join(dir, name)), (input) => Stream.runDrain(input.bytes)))
      )
      assert.match(failed.message, new RegExp(`^cannot read .*${name.replace(/\./g, "\\.")}: bzip2: \\S`))
    }
  })

  it("decodes a .bz2 served over http in small pieces, and counts its compressed bytes as read", async () => {
    const text = Buffer.from(
      Array.from({ length: 150_000 }, (_, i) => `0x${(i * 7919).toString(16).padStart(40, "0")}`).join("\n")
    )
    const compressed = execFileSync("bzip2", ["-c"], { input: text })
    // Sent in pieces of 1,000 bytes, each written once the last has been taken up.
    const server = createServer(async (_, res) => {
      res.writeHead(200, { "content-length": String(compressed.length) })
      for (let i = 0; i < compressed.length; i += 1_000) {
        if (!res.write(compressed.subarray(i, i + 1_000))) await new Promise((drained) => res.once("drain", drained))
      }
      res.end()
    })
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
    try {
      const { port } = server.address() as AddressInfo
      const input = await Effect.runPromise(Input.open(`http://127.0.0.1:${port}/lists/sdn.txt.bz2`))
      assert.strictEqual(input.size, compressed.length)
      const decoded = await Effect.runPromise(Stream.runCollect(input.bytes))
      assert.isTrue(Buffer.concat(decoded).equals(text), "the decoded bytes are the original's")
      assert.strictEqual(input.read(), compressed.length)
    } finally {
      server.close()
    }
  })

  it("counts a plain file as it is", async () => {
    const file = join(dir, "small.txt")
    writeFileSync(file, "abc\n")
    const input = await Effect.runPromise(Input.open(file))
    assert.strictEqual(await drain(input), 4)
    assert.strictEqual(input.read(), 4)
  })
})

describe("Input.sha256", () => {
  it("gives the digest the core's own SHA-256 gives, over any split of any bytes", async () => {
    const core = await Effect.runPromise(Effect.service(Ingestion.Ingest.ContentHashing))
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }), (chunks) => {
        const native = Input.sha256()
        const own = core()
        for (const chunk of chunks) {
          native.update(chunk)
          own.update(chunk)
        }
        const hex = native.hex()
        assert.match(hex, /^[0-9a-f]{64}$/)
        assert.strictEqual(hex, own.hex())
      })
    )
    // A known vector: SHA-256 of "abc".
    const abc = Input.sha256()
    abc.update(new TextEncoder().encode("abc"))
    assert.strictEqual(abc.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})
