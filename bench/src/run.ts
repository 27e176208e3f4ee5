/** `npm run bench [-- scenario... --duration S --rounds N --connections C]`: runs scenarios, prints tables, writes JSON. */
import { parseArgs } from "node:util"
import { table, writeDocs, writeResult, type Scenario } from "./Harness.ts"
import { pinSelf } from "./Load.ts"
import * as Calibration from "./scenarios/Calibration.ts"
import * as ColdStores from "./scenarios/ColdStores.ts"
import * as ExposureScenario from "./scenarios/Exposure.ts"
import * as FollowScale from "./scenarios/FollowScale.ts"
import * as Health from "./scenarios/Health.ts"
import * as Historical from "./scenarios/Historical.ts"
import * as Ingest from "./scenarios/Ingest.ts"
import * as KeyTiming from "./scenarios/KeyTiming.ts"
import * as Intel from "./scenarios/Intel.ts"
import * as Live from "./scenarios/Live.ts"
import * as RulesScenario from "./scenarios/Rules.ts"
import * as Screen from "./scenarios/Screen.ts"
import * as Soak from "./scenarios/Soak.ts"
import * as Webhooks from "./scenarios/Webhooks.ts"

const scenarios: ReadonlyArray<Scenario> = [
  Health.scenario,
  Intel.scenario,
  Calibration.scenario,
  ExposureScenario.scenario,
  Webhooks.scenario,
  Screen.scenario,
  Ingest.scenario,
  RulesScenario.scenario,
  Historical.scenario,
  Live.scenario,
  FollowScale.scenario,
  Soak.scenario,
  KeyTiming.scenario,
  ColdStores.scenario
]

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    list: { type: "boolean", default: false }
  }
})

if (values.list) {
  for (const s of scenarios) console.log(`${s.name}\t${s.description}`)
  process.exit(0)
}

const positive = (name: string, text: string) => {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a positive whole number, got "${text}"`)
    process.exit(2)
  }
  return n
}
const options = {
  durationSeconds: positive("duration", values.duration),
  rounds: positive("rounds", values.rounds),
  connections: positive("connections", values.connections)
}

const unknown = positionals.filter((p) => !scenarios.some((s) => s.name === p))
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(", ")}; known: ${scenarios.map((s) => s.name).join(", ")}`)
  process.exit(2)
}
const selected = positionals.length === 0 ? scenarios : scenarios.filter((s) => positionals.includes(s.name))

pinSelf()
for (const scenario of selected) {
  console.log(`\n# ${scenario.name}\n${scenario.description}\n`)
  if (scenario.available?.() === false) {
    console.log("skipped: its input data (../shared/data) is not on this machine")
    continue
  }
  const result = await scenario.run(options)
  writeResult(scenario, result)
  console.log(table(result))
}
writeDocs()
console.log("\nWrote bench/results/*.json and docs/bench.md")
