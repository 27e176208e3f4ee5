/**
 * The SDN parser passes over the elements it learns nothing from (locations, identity documents, relationships,
 * parties without a digital-currency feature). On a whole published SDN Advanced XML, decompressed as an ingest
 * reads it, it gives exactly what reading every element gives.
 */
import { Ingestion } from "@vigil/core"
import { Effect, Stream } from "effect"
import { assert, describe, it } from "vitest"
import { hasSharedData, missingSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { Input } from "../src/index.ts"

const file = sharedData("sanctions/ofac-sdn-advanced-xml-history/sdn_advanced.2025-03-04.xml.bz2")

describe.skipIf(!hasSharedData)(`SDN Advanced XML${hasSharedData ? "" : ` (${missingSharedData})`}`, () => {
  it("of 2025-03-04, whole: passing over elements gives every record, date and skip that reading them all gives", async () => {
    const passing = Ingestion.OfacSdnXml.make()
    const reading = Ingestion.OfacSdnXml.make({ passOver: false })
    let chars = 0
    await Effect.runPromise(
      Effect.flatMap(Input.open(file), (input) =>
        Stream.runForEach(Stream.decodeText(input.bytes), (chunk) =>
          Effect.sync(() => {
            chars += chunk.length
            passing.write(chunk)
            reading.write(chunk)
          })
        )
      )
    )
    const passed = passing.end()
    const read = reading.end()
    assert.isAbove(chars, 100_000_000, "the whole file")
    assert.strictEqual(passing.asOf(), "2025-03-04")
    assert.isAbove(read.length, 600)
    assert.deepStrictEqual(passed, read)
    assert.strictEqual(passing.asOf(), reading.asOf())
    assert.deepStrictEqual(passing.skipped(), reading.skipped())
  }, 120_000)
})
