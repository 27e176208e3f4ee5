/** Child process of the ingest scenario: ingests (or only decompresses) one file and prints time and peak RSS. */
import { IngestCommand, Store } from "@vigil/cli"
import { Input } from "@vigil/engine"
import { Effect, Stream } from "effect"

const [mode, file, db] = process.argv.slice(2)
const started = performance.now()
const program: Effect.Effect<number, unknown> =
  mode === "decompress"
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
