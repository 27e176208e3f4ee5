#!/usr/bin/env node
/**
 * Rebuilds Vigil's built-in official lists (packages/engine/builtin/official-lists.json) from the publishers' files,
 * read by the same parsers `vigil ingest` uses:
 *
 *   npm run builtin-lists -- --sdn sdn_advanced.xml.bz2 --usdt usdt_events.csv [--out FILE]
 *
 * --sdn   OFAC's SDN Advanced XML (https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_ADVANCED.XML),
 *         plain or .bz2; its digital-currency addresses are kept.
 * --usdt  Tether's USDT blacklist events on Ethereum as a CSV export (event_name, block_number, log_index, timestamp,
 *         txhash, _user), read from the contract's deployment; the freezes and their ends are kept.
 * Run `npm run build` first (the script uses the built packages).
 */
import { Ingestion } from "@vigil/core"
import { Effect, Stream } from "effect"
import { createHash } from "node:crypto"
import { writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Input } from "../dist/index.js"

const { values } = parseArgs({
  options: {
    sdn: { type: "string" },
    usdt: { type: "string" },
    out: {
      type: "string",
      default: join(dirname(fileURLToPath(import.meta.url)), "..", "builtin", "official-lists.json")
    }
  }
})
if (values.sdn === undefined || values.usdt === undefined) {
  console.error(
    "usage: node scripts/build-builtin-lists.mjs --sdn SDN_ADVANCED.XML[.bz2] --usdt USDT_EVENTS.CSV [--out FILE]"
  )
  process.exit(2)
}

/** Feeds a file (decompressed) through `parser`; its records, its date and the SHA-256 of the text it read. */
const read = (file, parser) =>
  Effect.gen(function* () {
    const input = yield* Input.open(file)
    const hash = createHash("sha256")
    yield* input.bytes.pipe(
      Stream.tap((chunk) => Effect.sync(() => hash.update(chunk))),
      Stream.decodeText,
      Stream.runForEach((text) =>
        Effect.sync(() => {
          parser.write(text)
        })
      )
    )
    const records = parser.end()
    const skipped = parser.skipped()
    if (skipped.count > 0)
      console.error(`${basename(file)}: passed over ${skipped.count} (first: ${skipped.reasons[0]})`)
    return { records, sha256: hash.digest("hex"), asOf: parser.asOf() }
  })

const build = Effect.gen(function* () {
  const sdn = yield* read(values.sdn, Ingestion.OfacSdnXml.make())
  const events = Ingestion.UsdtEvents.make({ label: Ingestion.Freezes.usdt.token })
  const usdt = yield* read(values.usdt, events)
  // The last block the export read: its newest freeze event's.
  const last = events.lastBlock()
  const byAddress = (a, b) =>
    a.address < b.address ? -1 : a.address > b.address ? 1 : a.reference < b.reference ? -1 : 1
  return {
    format: 1,
    lists: [
      {
        list: "ofac-sdn",
        kind: "ofac-sdn-xml",
        source: "OFAC",
        asOf: sdn.asOf,
        origin: `OFAC SDN Advanced XML of ${sdn.asOf} (sha256 ${sdn.sha256}), its digital-currency addresses`,
        records: [...sdn.records].sort(byAddress)
      },
      {
        list: Ingestion.Freezes.usdt.list,
        kind: Ingestion.Freezes.usdt.kind,
        source: Ingestion.Freezes.usdt.publisher,
        asOf: usdt.asOf,
        origin: Ingestion.Freezes.origin(
          Ingestion.Freezes.usdt,
          Ingestion.Freezes.usdt.deployBlock,
          last,
          `an event export, sha256 ${usdt.sha256}`
        ),
        records: [...usdt.records].sort(byAddress)
      }
    ]
  }
})

const snapshot = await Effect.runPromise(build)
writeFileSync(values.out, Ingestion.Builtin.encode(snapshot))
for (const l of snapshot.lists) console.log(`${l.list}: ${l.records.length} records as of ${l.asOf}`)
console.log(`wrote ${values.out}`)
