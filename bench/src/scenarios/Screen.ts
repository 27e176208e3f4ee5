/** In-process screening throughput on a SQLite file holding the shared OFAC and Tether data, beside Map.get. */
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { IngestCommand } from "@vigil/cli"
import { Chain, type Intel, IntelIndex, Screening } from "@vigil/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Papa from "papaparse"
import { ratiosTo, type Scenario } from "../Harness.ts"
import { hasSharedData, sharedData } from "../SharedData.ts"

const brave = "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses"

const addresses = (): Array<string> => {
  const listed = readdirSync(sharedData(brave))
    .filter((f) => /^sanctioned_addresses_[A-Z]+\.txt$/.test(f))
    .flatMap((f) => readFileSync(sharedData(`${brave}/${f}`), "utf8").split(/\r?\n/))
    .filter((a) => Chain.detect(a).valid)
  const events = Papa.parse<Record<string, string | undefined>>(
    readFileSync(sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv"), "utf8"),
    { header: true, skipEmptyLines: "greedy" }
  ).data
  const frozen = events.flatMap((e) => (e.event_name === "AddedBlackList" && e._user ? [e._user] : []))
  const clean = Array.from(
    { length: 1_000 },
    (_, i) => `0x${(i * 2654435761).toString(16).padStart(40, "0").slice(-40)}`
  )
  return [...listed, ...frozen, ...clean]
}

/** Runs `step` over all keys repeatedly for about `seconds`; returns operations per second. */
const throughput = async (
  keys: ReadonlyArray<string>,
  seconds: number,
  step: (keys: ReadonlyArray<string>) => Promise<void> | void
) => {
  let ops = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    await step(keys)
    ops += keys.length
  }
  return Math.round(ops / ((performance.now() - start) / 1000))
}

/** The scenario. */
export const scenario: Scenario = {
  name: "screen-in-process",
  description:
    "`Screening.screen` in process over a SQLite file holding the newest SDN (digital-currency parties) and the USDT freeze history, for every listed address on a screened network, every USDT-frozen address and 1,000 clean ones, looped; beside a bare `Map.get` over the same normalised keys in a Map built from the same records. One Effect run per pass over all keys.",
  available: hasSharedData,
  run: async ({ durationSeconds, rounds }) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-screen-"))
    const runtime = ManagedRuntime.make(
      Screening.Screening.layer.pipe(Layer.provideMerge(SqliteAdapter.layer({ filename: join(dir, "vigil.db") })))
    )
    try {
      await runtime.runPromise(
        Effect.forEach(
          [
            { kind: "ofac-sdn-xml" as const, input: sharedData(`${brave}/sdn_advanced.digital-currency-subset.xml`) },
            {
              kind: "usdt-events" as const,
              input: sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv")
            }
          ],
          (spec) => IngestCommand.ingestOne(spec)
        )
      )
      const keys = addresses()
      const normalized = keys.map((a) => (Chain.detect(a) as Chain.Valid).normalized)
      const records = await runtime.runPromise(
        Effect.flatMap(Effect.service(IntelIndex.IntelIndex), (i) => i.lookup(normalized))
      )
      const map = new Map<string, Array<Intel.IntelRecord>>()
      for (const r of records) map.set(r.address, [...(map.get(r.address) ?? []), r])
      const screening = await runtime.runPromise(Effect.service(Screening.Screening))
      let sink = 0
      const bare: Array<number> = []
      const vigil: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        bare.push(
          await throughput(normalized, durationSeconds, (ks) => {
            for (const k of ks) sink += map.get(k)?.length ?? 0
          })
        )
        vigil.push(
          await throughput(keys, durationSeconds, (ks) =>
            runtime.runPromise(Effect.forEach(ks, (k) => screening.screen(k), { discard: true }))
          )
        )
      }
      if (sink < 0) throw new Error("unreachable")
      const med = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
      const measurements = [
        {
          subject: "Map.get (bare)",
          figures: { "ops/s": med(bare), "µs/op": Math.round((1e6 / med(bare)) * 1000) / 1000 }
        },
        {
          subject: "Screening.screen",
          figures: { "ops/s": med(vigil), "µs/op": Math.round((1e6 / med(vigil)) * 1000) / 1000 }
        }
      ]
      return {
        settings: { durationSeconds, rounds, addresses: keys.length, records: records.length },
        measurements,
        baseline: "Map.get (bare)",
        ratios: ratiosTo("Map.get (bare)", measurements),
        notes: [
          "Screening.screen validates the address checksum, queries SQLite, filters by date, scores and builds the full v3 result; Map.get does only the lookup."
        ]
      }
    } finally {
      await runtime.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
