/**
 * End to end: `vigil calibrate` on real public lists (official, curated and scraped) in a real database file: the
 * evaluation is the same every time, the model is stored and used by `vigil screen`, and bad input is one line.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import { assert, describe, it } from "vitest"
import { hasSharedData, sharedData } from "@vigil/core-test/SharedData.ts"
import { runVigil, tempDir } from "./VigilProcess.ts"

const day = "2025-12-01"
const pack = (name: string) => ({
  kind: "graphsense",
  input: sharedData(`labels/graphsense-tagpacks/packs/${name}.yaml`),
  list: `graphsense-${name}`,
  asOf: day
})
const labels = (list: string, source: string, path: string) => ({
  kind: "labels",
  input: sharedData(path),
  list,
  source,
  asOf: day
})

/** Official and curated lists (the ground truth) and scraped label sets (what is calibrated). */
const sources = [
  {
    kind: "ofac-sdn-xml",
    input: sharedData(
      "sanctions/brave-intl-ofac-sanctioned-digital-currency-addresses/sdn_advanced.digital-currency-subset.xml"
    )
  },
  { kind: "usdt-events", input: sharedData("stablecoin-blacklists/bhemen-usdt-ethereum-events/data/usdt_configs.csv") },
  pack("etherscamdb_tagpack"),
  pack("defi-fraud-masterthesis"),
  pack("hacks"),
  pack("usdt_blacklist"),
  labels("forta-malicious", "Forta", "threat/forta-labelled-datasets/labels/1/etherscan_malicious_labels.csv"),
  labels("forta-phishing", "Forta", "threat/forta-labelled-datasets/labels/1/phishing_scams.csv"),
  labels("scamsniffer", "ScamSniffer", "threat/scamsniffer-scam-database/blacklist/address.json"),
  labels("mew-darklist", "MyEtherWallet", "threat/mew-ethereum-lists-darklist/src/addresses/addresses-darklist.json")
]

describe.skipIf(!hasSharedData)("vigil calibrate on the shared data", () => {
  it("fits the same model and figures every time, stores it, and screens scraped-only answers with it", async () => {
    const cwd = tempDir()
    const db = join(cwd, "vigil.db")
    const config = join(cwd, "sources.json")
    writeFileSync(config, JSON.stringify({ sources }))
    const ingested = await runVigil(cwd, {}, ["ingest", "--config", config, "--db", db, "--calibrate"])
    assert.strictEqual(ingested.code, 0, ingested.stderr)
    // `--calibrate` fitted a model of today's lists once everything was in.
    assert.match(ingested.stdout, /calibration model 1, fitted on the lists as of \d{4}-\d{2}-\d{2}, stored/)

    const dry = ["calibrate", "--as-of", day, "--dry-run", "--json", "--db", db]
    const first = await runVigil(cwd, {}, dry)
    const second = await runVigil(cwd, {}, dry)
    assert.strictEqual(first.code, 0, first.stderr)
    const model = JSON.parse(first.stdout)
    const { fittedAt: _a, ...firstFigures } = model
    const { fittedAt: _b, ...secondFigures } = JSON.parse(second.stdout)
    assert.deepStrictEqual(secondFigures, firstFigures)
    assert.notProperty(model, "version", "a dry run stores nothing")
    const e = model.evaluation
    assert.isAtLeast(e.examples, 1_000)
    assert.isAbove(e.positives, 0)
    assert.isBelow(e.positives, e.examples)
    // What calibration is for, measured on addresses it did not learn from: better probabilities, and fewer
    // BLOCKs that no reviewed list bears out.
    assert.isBelow(e.brier, e.brierRules)
    assert.isAbove(e.block.precision, e.blockRules.precision)
    assert.strictEqual(
      e.reliability.reduce((n: number, b: { count: number }) => n + b.count, 0),
      e.examples
    )

    const plot = join(cwd, "reliability.svg")
    const stored = await runVigil(cwd, {}, ["calibrate", "--as-of", day, "--plot", plot, "--db", db])
    assert.strictEqual(stored.code, 0, stored.stderr)
    assert.match(stored.stdout, new RegExp(`^calibration model 2, fitted on the lists as of ${day}, stored`))
    assert.include(stored.stdout, "BLOCK (score >= 85)")
    const svg = readFileSync(plot, "utf8")
    assert.match(svg, /^<svg /)
    assert.include(svg, "<circle")

    // An address only scamsniffer names (no reviewed list): graded by the model of that day.
    const file = new Database(db, { readonly: true })
    const { address } = file
      .prepare(
        `SELECT address FROM intel_records r WHERE list = 'scamsniffer'
           AND NOT EXISTS (SELECT 1 FROM intel_records o WHERE o.address = r.address AND o.list <> 'scamsniffer')
         ORDER BY address LIMIT 1`
      )
      .get() as { address: string }
    file.close()
    const screened = await runVigil(cwd, {}, ["screen", address, "--as-of", day, "--details", "--db", db])
    const calibrated = JSON.parse(screened.stdout)
    assert.isTrue(calibrated.recommendation.ai_enhanced)
    assert.strictEqual(calibrated.details.calibration.model, 2)
    assert.strictEqual(calibrated.details.calibration.rule_score, 90)
    assert.strictEqual(calibrated.score, calibrated.details.calibration.score)
    assert.include(calibrated.recommendation.details, "Calibration (model 2")
    const rules = JSON.parse(
      (await runVigil(cwd, {}, ["screen", address, "--as-of", day, "--rule-based", "--db", db])).stdout
    )
    assert.isFalse(rules.recommendation.ai_enhanced)
    assert.strictEqual(rules.score, 90)
    // The day before any model: rule-based.
    const before = JSON.parse(
      (await runVigil(cwd, {}, ["screen", address, "--as-of", "2025-11-30", "--db", db])).stdout
    )
    assert.isFalse(before.recommendation.ai_enhanced)
  }, 120_000)

  it("fits docs/calibration.md's figures on its sources with its ties, and without the ties the copies would count", async () => {
    const cwd = tempDir()
    const db = join(cwd, "docs.db")
    const docs = fileURLToPath(new URL("../../../docs/", import.meta.url))
    const ingested = await runVigil(cwd, {}, ["ingest", "--config", join(docs, "calibration/sources.json"), "--db", db])
    assert.strictEqual(ingested.code, 0, ingested.stderr)
    const fit = async (...extra: Array<string>) => {
      const r = await runVigil(cwd, {}, ["calibrate", "--as-of", day, "--dry-run", "--json", "--db", db, ...extra])
      assert.strictEqual(r.code, 0, r.stderr)
      return JSON.parse(r.stdout)
    }
    const model = await fit("--provenance", join(docs, "calibration/provenance.json"))
    const e = model.evaluation
    const n = (x: number) => x.toLocaleString("en-US")
    const page = readFileSync(join(docs, "calibration.md"), "utf8")
    // Every figure the page states, as this fit gives it.
    for (const stated of [
      `learned from ${n(model.training.examples)} addresses`,
      `${n(model.training.positives)} named for a risk by an official or curated list on its own`,
      `${n(model.training.copied)} more named only by entries that copy their own features`,
      `held out: ${n(e.examples)} addresses, ${n(e.positives)} of them`,
      `precision ${e.block.precision.toFixed(3)} | precision ${e.blockRules.precision.toFixed(3)}`,
      `recall ${e.block.recall.toFixed(3)}    | recall ${e.blockRules.recall.toFixed(3)}`,
      `${n(e.block.flagged)} flagged     | ${n(e.blockRules.flagged)} flagged`,
      `| Brier score                | ${e.brier.toFixed(4)}          | ${e.brierRules.toFixed(4)} (score/100) |`,
      `Calibration takes ${n(e.blockRules.flagged - e.block.flagged)} addresses from BLOCK to REVIEW`
    ])
      assert.include(page.replace(/\s+/g, " "), stated.replace(/\s+/g, " "), stated)
    const readme = readFileSync(join(docs, "../README.md"), "utf8").replace(/\s+/g, " ")
    assert.include(
      readme,
      `${n(e.examples)} held-out addresses, ${n(e.positives)} confirmed on a reviewed list's own word), BLOCK precision rises from ${e.blockRules.precision.toFixed(3)} to ${e.block.precision.toFixed(3)} (recall ${e.blockRules.recall.toFixed(3)} → ${e.block.recall.toFixed(3)}) and the Brier score falls from ${e.brierRules.toFixed(3)} to ${e.brier.toFixed(3)}`
    )
    assert.isBelow(e.brier, e.brierRules)
    assert.isAbove(e.block.precision, e.blockRules.precision)
    // The copies are most of what the reviewed lists seemed to confirm; read as truth, they would be positives.
    assert.isAbove(model.training.copied, 10 * model.training.positives)
    const naive = await fit()
    assert.isAbove(naive.training.positives, model.training.positives + 4_000)
  }, 180_000)

  it("refuses with one line when there is nothing to learn from, or a penalty out of range", async () => {
    const cwd = tempDir()
    const db = join(cwd, "empty.db")
    const empty = await runVigil(cwd, {}, ["calibrate", "--db", db])
    assert.strictEqual(empty.code, 1)
    assert.match(
      empty.stderr.trim(),
      /^vigil: no scraped list names an address on \d{4}-\d{2}-\d{2}: there is nothing to calibrate/
    )
    assert.strictEqual(empty.stderr.trim().split("\n").length, 1)
    const l2 = await runVigil(cwd, {}, ["calibrate", "--l2", "0", "--db", db])
    // A flag's bad value is a usage error: exit 2, one line naming it and the help.
    assert.strictEqual(l2.code, 2)
    assert.strictEqual(
      l2.stderr.trim(),
      "vigil calibrate: --l2 must be from 0.01 to 100, not 0; see vigil calibrate --help"
    )
  })
})
