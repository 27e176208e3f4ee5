/**
 * Child process of the ingest scenario: ingests one file, or only decompresses it, and prints time and peak RSS.
 * Modes: `stock` pipes the file through unbzip2-stream's own stream (the bare decompression, in one thread);
 * `decompress` reads it as an ingest does (`Input.open`: Vigil's decoder, on a worker thread); `ingest` ingests it.
 */
import { IngestCommand, Store } from "@vigil/cli"
import { Input } from "@vigil/engine"
import { Effect, Stream } from "effect"
import { createReadStream } from "node:fs"
import { pipeline } from "node:stream/promises"
import unbzip2 from "unbzip2-stream"

const [mode, file, db] = process.argv.slice(2)
const started = performance.now()

const stock = async () => {
  let n = 0
  await pipeline(createReadStream(file!), unbzip2(), async (decoded: AsyncIterable<Uint8Array>) => {
    for await (const chunk of decoded) n += chunk.length
  })
  return n
}

const program: Effect.Effect<number, unknown> =
  mode === "stock"
    ? Effect.promise(stock)
    : mode === "decompress"
      ? Effect.flatMap(Input.open(file!), (input) =>
          Stream.runFold(
            input.bytes,
            () => 0,
            (n, c) => n + c.length
          )
        )
      : IngestCommand.ingestOne({ kind: "ofac-sdn-xml", input: file! }).pipe(
          Effect.map((o) => o.records),
          // A SQLite file or a postgres:// URL, opened as the CLI opens it.
          Effect.provide(Store.all(db!))
        )
const count = await Effect.runPromise(program)
console.log(
  JSON.stringify({
    ms: Math.round(performance.now() - started),
    maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    count
  })
)
