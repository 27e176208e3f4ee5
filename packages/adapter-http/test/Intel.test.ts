/** The intelligence routes on the real server (SQLite file, ephemeral port): every field, error and limit. */
import { assert, describe, it } from "@effect/vitest"
import { Schemas } from "@vigil/adapter-http"
import { ApiKeys, ApiKeyStore, Chain, IntelIndex } from "@vigil/core"
import { Effect, Schema } from "effect"
import { modelOf } from "@vigil/core-test/CalibrationModels.ts"
import * as TestServer from "./TestServer.ts"

const { call, v2, v3, issue, ingest } = TestServer

/** OFAC-listed (Lazarus Group, Ronin bridge theft). */
const LAZARUS = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const CLEAN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
const MIXER = "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c"
const TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
const BITCOIN = "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"

/** A server with two lists ingested: LAZARUS sanctioned, MIXER a mixer. */
const withLists = Effect.gen(function* () {
  yield* ingest("test-sanctions", "sanctions", [LAZARUS], "2022-04-14")
  yield* ingest("test-mixers", "mixer", [MIXER], "2023-01-01")
})

const live = (title: string, body: () => Effect.Effect<void, unknown, any>, timeout?: number) =>
  it.live(title, () => body().pipe(Effect.provide(TestServer.layer())) as Effect.Effect<void, unknown>, timeout)

/** A test against the real server on a stepped clock (`TestServer.skip` crosses a window without waiting). */
const clocked = (title: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.live(
    title,
    () => TestServer.withSteppedClock(body().pipe(Effect.provide(TestServer.layer()))) as Effect.Effect<void, unknown>
  )

const decodes = <S extends Schema.Top>(schema: S, value: unknown) =>
  assert.doesNotThrow(() => Schema.decodeUnknownSync(schema as any)(value), undefined, JSON.stringify(value))

describe("POST /api/v3/intel", () => {
  live("screens an EVM address in any case, and a mixed case that breaks its checksum with a typo warning", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      const typo = LAZARUS.replace("B716", "b716")
      for (const address of [LAZARUS.toLowerCase(), LAZARUS.toUpperCase().replace("0X", "0x"), typo]) {
        const r = yield* v3(key, { address })
        assert.strictEqual(r.status, 200, address)
        assert.deepStrictEqual(
          [r.json.address, r.json.flags.sanctioned, r.json.recommendation.action],
          [LAZARUS.toLowerCase(), true, "BLOCK"],
          address
        )
        if (address === typo) {
          assert.deepStrictEqual(r.json.metadata.warnings, [Chain.eip55Mismatch])
          assert.notInclude(JSON.stringify(r.json), LAZARUS, "no 'corrected' form is suggested")
        } else assert.notProperty(r.json.metadata, "warnings")
      }
      const batch = yield* call("POST", "/api/v3/intel/batch", {
        headers: { authorization: `Bearer ${key}` },
        json: { addresses: [typo] }
      })
      assert.deepStrictEqual(batch.json.results[0].metadata.warnings, [Chain.eip55Mismatch])
      assert.strictEqual((yield* v2(key, typo)).json.data.address, LAZARUS.toLowerCase())
    })
  )

  live("screens a sanctioned address with every field of the v3 result", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      const r = yield* v3(key, { address: LAZARUS, options: { enable_agentic: true } })
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("content-type"), "application/json")
      decodes(Schemas.V3Result, r.json)
      const body = r.json
      assert.strictEqual(body.address, LAZARUS.toLowerCase(), "EVM addresses are answered lowercase")
      assert.notProperty(body.metadata, "warnings")
      assert.strictEqual(body.score, 100)
      assert.strictEqual(body.risk_level, "critical")
      assert.isTrue(body.confidence > 0 && body.confidence <= 1)
      assert.deepStrictEqual(body.flags, {
        sanctioned: true,
        blacklisted: false,
        threat_actor: false,
        smart_money: false
      })
      assert.deepStrictEqual(
        body.signals.map((s: any) => [s.type, s.weight, s.source]),
        [["sanctions_match", 100, "TEST"]]
      )
      assert.strictEqual(body.signals[0].evidence.list, "test-sanctions")
      assert.isArray(body.labels)
      assert.isAbove(body.labels.length, 0)
      assert.strictEqual(body.recommendation.action, "BLOCK")
      assert.isFalse(body.recommendation.ai_enhanced, "no calibration model ran")
      assert.isString(body.recommendation.summary)
      assert.include(body.recommendation.details, "test-sanctions")
      assert.strictEqual(body.metadata.version, "v3")
      assert.isTrue(body.metadata.is_complete)
      assert.strictEqual(body.metadata.sources_used, 2)
      assert.isAtLeast(body.metadata.latency_ms, 0)
      assert.match(body.metadata.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.strictEqual(body.metadata.chain.normalized, LAZARUS.toLowerCase())
      assert.notProperty(body, "details")
    })
  )

  live("adds details with the raw records and the score breakdown on request", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      const r = yield* v3(key, { address: LAZARUS, options: { include_details: true, chain: "ethereum" } })
      assert.strictEqual(r.status, 200)
      decodes(Schemas.V3Result, r.json)
      assert.deepStrictEqual(
        r.json.details.records.map((x: any) => [x.list, x.category, x.address]),
        [["test-sanctions", "sanctions", LAZARUS.toLowerCase()]]
      )
      assert.deepStrictEqual(
        r.json.details.breakdown.map((b: any) => [b.type, b.weight, b.contribution]),
        [["sanctions_match", 100, 100]]
      )
      assert.isString(r.json.details.formula)
    })
  )

  live("answers a clean address as minimal and complete, and a high-risk one as review", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      const clean = yield* v3(key, { address: CLEAN })
      assert.deepStrictEqual(
        [clean.json.score, clean.json.risk_level, clean.json.recommendation.action, clean.json.metadata.is_complete],
        [0, "minimal", "ALLOW", true]
      )
      const mixer = yield* v3(key, { address: MIXER })
      assert.deepStrictEqual([mixer.json.risk_level, mixer.json.recommendation.action], ["high", "REVIEW"])
    })
  )

  live("refuses bad input with 400, the field path and a precise message, without charging", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme", daily: 100 })
      const auth = { authorization: `Bearer ${key}` }
      const cases: ReadonlyArray<[string, { body?: string; json?: unknown }, string, RegExp]> = [
        ["malformed JSON", { body: '{"address":' }, "body", /malformed JSON/],
        ["no body", { body: "" }, "body", /./],
        ["missing address", { json: {} }, "address", /required/],
        ["address of the wrong type", { json: { address: 5 } }, "address", /string/i],
        ["short address", { json: { address: "0x12" } }, "address", /26 to 128/],
        ["long address", { json: { address: "0x" + "a".repeat(127) } }, "address", /26 to 128/],
        ["no network's format", { json: { address: "zz" + "9".repeat(30) } }, "address", /./],
        [
          "address of another network than asked",
          { json: { address: LAZARUS, options: { chain: "bitcoin" } } },
          "address",
          /bitcoin/
        ],
        ["unknown chain", { json: { address: LAZARUS, options: { chain: "dogechain" } } }, "options.chain", /Expected/],
        [
          "options of the wrong type",
          { json: { address: LAZARUS, options: { include_details: "yes" } } },
          "options.include_details",
          /boolean/i
        ],
        ["array body", { json: [LAZARUS] }, "body", /./],
        [
          "an unknown option (misspelt as_of)",
          { json: { address: LAZARUS, options: { asOf: "2022-01-01" } } },
          "options.asOf",
          /^options\.asOf: is not an option \(options: include_details, chain, enable_agentic, as_of, exposure\)$/
        ]
      ]
      for (const [name, request, field, message] of cases) {
        const r = yield* call("POST", "/api/v3/intel", {
          headers: { ...auth, "content-type": "application/json" },
          ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : { body: request.body ?? "" })
        })
        assert.strictEqual(r.status, 400, name)
        assert.strictEqual(r.json.error, "Validation Error", name)
        assert.strictEqual(r.json.details.field, field, name)
        assert.match(r.json.message, message, name)
        assert.isTrue(r.json.message.startsWith(`${field}: `), name)
        decodes(Schemas.ValidationError, r.json)
      }
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.json.usage.dailyUsed, 0, "refused requests are not counted")
    })
  )
})

describe("authentication", () => {
  live("answers 401 with the exact body for a missing, malformed, unknown or revoked key", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const revoked = yield* issue({ name: "Gone" })
      const keys = yield* ApiKeys.ApiKeys
      yield* keys.revoke(revoked.split("_")[1]!)
      const presented: ReadonlyArray<Record<string, string>> = [
        {},
        { authorization: "Bearer " },
        { authorization: `Basic ${key}` },
        { authorization: "Bearer nope" },
        { "x-api-key": key.slice(0, -2) },
        { authorization: `Bearer ${revoked}` }
      ]
      for (const headers of presented) {
        for (const r of [
          yield* call("POST", "/api/v3/intel", { headers, json: { address: LAZARUS } }),
          yield* call("POST", "/api/v3/intel/batch", { headers, json: { addresses: [LAZARUS] } })
        ]) {
          assert.strictEqual(r.status, 401, JSON.stringify(headers))
          assert.deepStrictEqual(r.json, { error: "Unauthorized", message: "Invalid or missing API key" })
        }
        // v2 and webhook routes: spec §7's failure shape, success:false and a timestamp.
        for (const r of [
          yield* call("GET", `/api/v2/intel?address=${LAZARUS}`, { headers }),
          yield* call("GET", "/api/v2/webhooks", { headers }),
          yield* call("POST", "/api/v2/webhooks", { headers, json: { url: "https://hooks.example.com/x" } }),
          yield* call("POST", "/api/v2/intel/webhook", { headers, json: { address: LAZARUS } })
        ]) {
          assert.strictEqual(r.status, 401, JSON.stringify(headers))
          const { timestamp, ...rest } = r.json
          assert.deepStrictEqual(rest, { success: false, error: "Unauthorized", message: "Invalid or missing API key" })
          assert.match(timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        }
      }
    })
  )

  live("accepts both headers on every intelligence route", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      for (const headers of [
        { authorization: `Bearer ${key}` },
        { "x-api-key": key },
        { authorization: `bearer  ${key}` }
      ]) {
        assert.strictEqual((yield* call("POST", "/api/v3/intel", { headers, json: { address: CLEAN } })).status, 200)
        assert.strictEqual((yield* call("GET", `/api/v2/intel?address=${CLEAN}`, { headers })).status, 200)
      }
    })
  )

  live("tells an expired key it has expired, and the status route says expired", () =>
    Effect.gen(function* () {
      const store = yield* ApiKeyStore.ApiKeyStore
      const key = `vgl_00000000000000aa_${"1".repeat(44)}`
      yield* store.insert({
        id: "00000000000000aa",
        name: "Lapsed Ltd",
        hash: ApiKeys.hashKey(key),
        qps: 5,
        daily: 50,
        monthly: 500,
        createdAt: "2025-01-01T00:00:00.000Z",
        expiresAt: "2026-01-01T00:00:00.000Z"
      })
      const r = yield* v3(key, { address: CLEAN })
      assert.strictEqual(r.status, 401)
      assert.deepStrictEqual(r.json, { error: "Unauthorized", message: "API key expired" })
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.status, 200)
      assert.strictEqual(status.json.status, "expired")
      assert.deepStrictEqual(status.json.client, { name: "Lapsed Ltd", qps: 5, dailyLimit: 50, monthlyLimit: 500 })
    })
  )
})

describe("point in time over HTTP (options.as_of)", () => {
  live("screens against the lists of a past day, single and batch, and refuses a future or impossible day", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      const before = yield* v3(key, { address: LAZARUS, options: { as_of: "2022-04-13" } })
      assert.strictEqual(before.status, 200)
      // The day before the list's only version (2022-04-14): it cannot vouch that the address was not on it.
      assert.deepStrictEqual(
        [
          before.json.flags.sanctioned,
          before.json.recommendation.action,
          before.json.metadata.as_of,
          before.json.metadata.is_complete
        ],
        [false, "REVIEW", "2022-04-13", false]
      )
      assert.match(
        before.json.metadata.warnings.join("\n"),
        /^test-sanctions has no stored version on or before 2022-04-13 \(its oldest is of 2022-04-14\)/m
      )
      const on = yield* v3(key, { address: LAZARUS, options: { as_of: "2022-04-14" } })
      assert.deepStrictEqual([on.json.flags.sanctioned, on.json.recommendation.action], [true, "BLOCK"])
      const today = yield* v3(key, { address: LAZARUS })
      assert.isTrue(today.json.flags.sanctioned)
      const batch = yield* call("POST", "/api/v3/intel/batch", {
        headers: { authorization: `Bearer ${key}` },
        json: { addresses: [LAZARUS, MIXER], options: { as_of: "2022-12-31" } }
      })
      assert.deepStrictEqual(
        batch.json.results.map((r: any) => [r.risk_level, r.metadata.as_of]),
        [
          ["critical", "2022-12-31"],
          ["minimal", "2022-12-31"]
        ]
      )
      const used = (yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })).json.usage.dailyUsed
      for (const [asOf, message] of [
        ["2999-01-01", /^options\.as_of: 2999-01-01 is after today \(\d{4}-\d\d-\d\d\)$/],
        ["2024-02-30", /^options\.as_of: 2024-02-30 is not a calendar date$/],
        ["2024-13-45", /^options\.as_of: 2024-13-45 is not a calendar date$/],
        ["yesterday", /^options\.as_of: Expected a date as YYYY-MM-DD$/]
      ] as const) {
        for (const r of [
          yield* v3(key, { address: LAZARUS, options: { as_of: asOf } }),
          yield* call("POST", "/api/v3/intel/batch", {
            headers: { authorization: `Bearer ${key}` },
            json: { addresses: [LAZARUS], options: { as_of: asOf } }
          })
        ]) {
          assert.strictEqual(r.status, 400, asOf)
          assert.match(r.json.message, message, asOf)
          assert.strictEqual(r.json.details.field, "options.as_of")
        }
      }
      const after = (yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })).json.usage.dailyUsed
      assert.strictEqual(after, used, "a refused day is not charged")
    })
  )
})

describe("calibration over HTTP (options.enable_agentic)", () => {
  const PHISH = "0x00000000000000000000000000000000000000f1"
  /** A model that finds the scraped list `scraped-phish` borne out for 5% of the addresses it names. */
  const model = modelOf("2025-01-01", ["bias", "list:scraped-phish"], [0, Math.log(0.05 / 0.95)])
  const withModel = Effect.gen(function* () {
    yield* withLists
    yield* ingest("scraped-phish", "phishing", [PHISH], "2024-12-01", { authority: "scraped" })
    yield* Effect.flatMap(Effect.service(IntelIndex.Administration), (index) => index.storeModel(model))
  })

  live(
    "calibrates an answer that rests on scraped labels alone by default, single, batch and v2 alike; false gives the rule-based one",
    () =>
      Effect.gen(function* () {
        yield* withModel
        const key = yield* issue({ name: "Acme" })
        const calibrated = (yield* v3(key, { address: PHISH, options: { include_details: true } })).json
        assert.deepStrictEqual(
          [calibrated.score, calibrated.risk_level, calibrated.confidence, calibrated.recommendation.action],
          [65, "high", 0.75, "REVIEW"]
        )
        assert.isTrue(calibrated.recommendation.ai_enhanced)
        assert.include(
          calibrated.recommendation.details,
          "Calibration (model 1, fitted on the lists as of 2025-01-01) moves the score from 90 to 65"
        )
        assert.deepInclude(calibrated.details.calibration, {
          model: 1,
          model_as_of: "2025-01-01",
          probability: 0.05,
          rule_score: 90,
          score: 65
        })
        decodes(Schemas.V3Result, calibrated)
        const rules = (yield* v3(key, { address: PHISH, options: { enable_agentic: false } })).json
        assert.deepStrictEqual(
          [rules.score, rules.risk_level, rules.recommendation.action, rules.recommendation.ai_enhanced],
          [90, "critical", "BLOCK", false]
        )
        const batch = (yield* call("POST", "/api/v3/intel/batch", {
          headers: { authorization: `Bearer ${key}` },
          json: { addresses: [PHISH, LAZARUS] }
        })).json
        assert.deepStrictEqual(
          batch.results.map((r: any) => [r.score, r.recommendation.action, r.recommendation.ai_enhanced]),
          [
            [65, "REVIEW", true],
            [100, "BLOCK", false]
          ]
        )
        const batchRules = (yield* call("POST", "/api/v3/intel/batch", {
          headers: { authorization: `Bearer ${key}` },
          json: { addresses: [PHISH], options: { enable_agentic: false } }
        })).json
        assert.deepStrictEqual(batchRules.results[0].score, 90)
        const old = (yield* v2(key, PHISH)).json
        assert.deepStrictEqual(old.data.risk_assessment, { risk_score: 65, risk_level: "high" })
        // An official sanctions match is not graded: BLOCK with or without calibration.
        const listed = (yield* v3(key, { address: LAZARUS })).json
        assert.deepStrictEqual(
          [listed.score, listed.recommendation.action, listed.recommendation.ai_enhanced],
          [100, "BLOCK", false]
        )
      })
  )
})

describe("POST /api/v3/intel/batch", () => {
  clocked("screens mixed networks in input order, with failed items and band counts", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      yield* TestServer.alignToSecond
      const addresses = [CLEAN, LAZARUS, "not-an-address-at-all-really", TRON, MIXER, BITCOIN]
      const r = yield* call("POST", "/api/v3/intel/batch", {
        headers: { authorization: `Bearer ${key}` },
        json: { addresses, options: { batch_size: 2 } }
      })
      assert.strictEqual(r.status, 200)
      decodes(Schemas.BatchResult, r.json)
      assert.deepStrictEqual(
        r.json.results.map((x: any) => x.address),
        addresses.map((a) => (a.startsWith("0x") ? a.toLowerCase() : a))
      )
      assert.deepStrictEqual(
        r.json.results.map((x: any) => x.risk_level ?? x.error.code),
        ["minimal", "critical", "invalid_address", "minimal", "high", "minimal"]
      )
      assert.deepStrictEqual(r.json.summary, {
        total: 6,
        successful: 5,
        failed: 1,
        critical: 1,
        high: 1,
        medium: 0,
        low: 0,
        minimal: 3
      })
      assert.strictEqual(r.json.metadata.version, "v3")
      assert.match(r.json.metadata.correlation_id, /^req_[0-9a-z]+_[0-9a-f]{12}$/)
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.json.usage.dailyUsed, 5, "one unit per address screened; the invalid one is free")
      assert.strictEqual(status.json.usage.recentRequests, 1, "one request for the rate")
    })
  )

  live("refuses an empty or oversized batch and a batch_size outside 1-10", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ addresses: [] }, "addresses"],
        [{ addresses: Array.from({ length: 26 }, () => CLEAN) }, "addresses"],
        [{ addresses: [CLEAN], options: { batch_size: 0 } }, "options.batch_size"],
        [{ addresses: [CLEAN], options: { batch_size: 11 } }, "options.batch_size"],
        [{ addresses: [CLEAN], options: { batch_size: 2.5 } }, "options.batch_size"],
        [{ addresses: [CLEAN], options: { concurrency: 2 } }, "options.concurrency"],
        [{ addresses: "0xabc" }, "addresses"],
        [{ addresses: [CLEAN, 7] }, "addresses.1"]
      ]
      for (const [json, field] of cases) {
        const r = yield* call("POST", "/api/v3/intel/batch", { headers: { authorization: `Bearer ${key}` }, json })
        assert.strictEqual(r.status, 400, JSON.stringify(json))
        assert.strictEqual(r.json.details.field, field, JSON.stringify(json))
      }
      const ok = yield* call("POST", "/api/v3/intel/batch", {
        headers: { authorization: `Bearer ${key}` },
        json: { addresses: Array.from({ length: 25 }, () => CLEAN), options: { batch_size: 10 } }
      })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.json.summary.total, 25)
    })
  )
})

describe("GET /api/v2/intel and /api/v2/status", () => {
  live("answers the v2 envelope exactly", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme Exchange" })
      const r = yield* v2(key, LAZARUS)
      assert.strictEqual(r.status, 200)
      decodes(Schemas.V2Result, r.json)
      assert.deepStrictEqual(Object.keys(r.json).sort(), ["client", "data", "message", "success", "timestamp"])
      assert.strictEqual(r.json.success, true)
      assert.strictEqual(r.json.message, "Address intelligence processed successfully")
      assert.strictEqual(r.json.client, "Acme Exchange")
      const d = r.json.data
      assert.deepStrictEqual(Object.keys(d).sort(), [
        "address",
        "chains_with_activity",
        "classification",
        "entity",
        "labels",
        "priority",
        "recommendation",
        "risk_assessment",
        "risk_tags",
        "warnings"
      ])
      // The spec's fields, and one of ours: with no node configured, activity was not checked, and it says so.
      assert.deepStrictEqual(d.warnings, [
        "every network: on-chain activity not checked (no node is configured (VIGIL_RPC_URL_<chainId>))"
      ])
      assert.strictEqual(d.address, LAZARUS.toLowerCase())
      assert.deepStrictEqual(d.risk_assessment, { risk_score: 100, risk_level: "critical" })
      assert.strictEqual(d.entity.type, "sanctioned")
      assert.strictEqual(d.priority, "URGENT")
      assert.isString(d.risk_tags)
      const clean = yield* v2(key, CLEAN)
      assert.deepStrictEqual(clean.json.data.risk_assessment, { risk_score: 0, risk_level: "clean" })
      assert.deepStrictEqual([clean.json.data.entity, clean.json.data.labels], [{ type: "unknown", name: null }, []])
    })
  )

  live("refuses a missing or invalid address with a v2 error body", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      for (const path of [
        "/api/v2/intel",
        "/api/v2/intel?address=",
        `/api/v2/intel?address=${LAZARUS.slice(0, -1)}x`
      ]) {
        const r = yield* call("GET", path, { headers: { "x-api-key": key } })
        assert.strictEqual(r.status, 400, path)
        assert.strictEqual(r.json.success, false)
        assert.strictEqual(r.json.error, "Validation Error")
        assert.strictEqual(r.json.details.field, "address")
        assert.isString(r.json.timestamp)
      }
    })
  )

  live("reports the key's limits and usage, and 'invalid' for an unknown key", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme", qps: 7, daily: 70, monthly: 700 })
      yield* v2(key, CLEAN)
      yield* v3(key, { address: CLEAN })
      const r = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(r.status, 200)
      decodes(Schemas.StatusResult, r.json)
      assert.strictEqual(r.json.status, "authenticated")
      assert.deepStrictEqual(r.json.client, { name: "Acme", qps: 7, dailyLimit: 70, monthlyLimit: 700 })
      assert.deepStrictEqual(
        { ...r.json.usage, recentRequests: undefined },
        { dailyUsed: 2, monthlyUsed: 2, recentRequests: undefined, dailyRemaining: 68, monthlyRemaining: 698 }
      )
      for (const headers of [{}, { "x-api-key": "vgl_nope" }]) {
        const invalid = yield* call("GET", "/api/v2/status", { headers })
        assert.strictEqual(invalid.status, 200)
        assert.strictEqual(invalid.json.status, "invalid")
        decodes(Schemas.StatusResult, invalid.json)
      }
    })
  )
})

describe("quotas", () => {
  clocked("refuses past the per-second rate with 429 and the rate-limit headers, then grants again", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme", qps: 1 })
      yield* TestServer.alignToSecond
      const first = yield* v3(key, { address: CLEAN })
      const second = yield* v3(key, { address: CLEAN })
      assert.strictEqual(first.status, 200)
      assert.strictEqual(second.status, 429)
      assert.strictEqual(second.json.error, "Too Many Requests")
      assert.strictEqual(second.json.details.limit, "qps")
      assert.strictEqual(second.headers.get("retry-after"), "1")
      assert.strictEqual(second.headers.get("x-ratelimit-limit"), "1")
      assert.strictEqual(second.headers.get("x-ratelimit-remaining"), "0")
      assert.strictEqual(second.headers.get("x-ratelimit-reset"), "1")
      decodes(Schemas.TooManyRequests.schema, second.json)
      yield* TestServer.skip(1_000)
      assert.strictEqual((yield* v3(key, { address: CLEAN })).status, 200)
      const status = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": key } })
      assert.strictEqual(status.json.usage.dailyUsed, 2, "the refused request was not counted")
    })
  )

  live("exhausts the daily quota per address, counts nothing refused, and keeps keys apart", () =>
    Effect.gen(function* () {
      const a = yield* issue({ name: "A", daily: 3 })
      const b = yield* issue({ name: "B", daily: 3 })
      const batch = (key: string, n: number) =>
        call("POST", "/api/v3/intel/batch", {
          headers: { authorization: `Bearer ${key}` },
          json: { addresses: Array.from({ length: n }, () => CLEAN) }
        })
      const granted = yield* batch(a, 2)
      assert.strictEqual(granted.status, 200)
      assert.deepStrictEqual(
        [granted.headers.get("x-ratelimit-limit"), granted.headers.get("x-ratelimit-remaining")],
        ["3", "1"]
      )
      const refused = yield* batch(a, 2)
      assert.strictEqual(refused.status, 429)
      assert.strictEqual(refused.json.details.limit, "daily")
      assert.isAbove(Number(refused.headers.get("retry-after")), 0)
      assert.strictEqual((yield* v2(a, CLEAN)).status, 200, "the last unit is still there")
      assert.strictEqual((yield* v2(a, CLEAN)).status, 429)
      const tooBig = yield* batch(b, 4)
      assert.strictEqual(tooBig.status, 429)
      assert.match(tooBig.json.message, /needs 4 addresses/)
      assert.strictEqual((yield* batch(b, 3)).status, 200, "A's use never touched B")
      const statusA = yield* call("GET", "/api/v2/status", { headers: { "x-api-key": a } })
      assert.deepStrictEqual([statusA.json.usage.dailyUsed, statusA.json.usage.dailyRemaining], [3, 0])
    })
  )
})

describe("caching", () => {
  live("caches high-risk v3 results, never clean ones, and drops them when a list changes", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      assert.strictEqual((yield* v3(key, { address: LAZARUS })).headers.get("x-cache"), "MISS")
      const hit = yield* v3(key, { address: LAZARUS })
      assert.strictEqual(hit.headers.get("x-cache"), "HIT")
      assert.strictEqual(hit.json.score, 100)
      assert.strictEqual((yield* v3(key, { address: CLEAN })).headers.get("x-cache"), "MISS")
      assert.strictEqual(
        (yield* v3(key, { address: CLEAN })).headers.get("x-cache"),
        "MISS",
        "score < 60 is not cached"
      )
      yield* ingest("test-sanctions", "sanctions", [CLEAN], "2025-03-21", { allowShrink: true })
      const delisted = yield* v3(key, { address: LAZARUS })
      assert.strictEqual(delisted.headers.get("x-cache"), "MISS")
      assert.strictEqual(delisted.json.risk_level, "minimal", "de-listed on the newer snapshot's date")
    })
  )

  clocked("answers from the cache with the same bytes as a fresh answer, but its own latency and timestamp", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      for (const details of [false, true]) {
        const body = { address: LAZARUS, options: { include_details: details } }
        const miss = yield* v3(key, body)
        yield* TestServer.skip(5)
        const hit = yield* v3(key, body)
        assert.strictEqual(hit.headers.get("x-cache"), "HIT")
        // The cached answer is exactly JSON.stringify of the result with its two fields refreshed.
        const expected = JSON.stringify({
          ...miss.json,
          metadata: {
            ...miss.json.metadata,
            latency_ms: hit.json.metadata.latency_ms,
            timestamp: hit.json.metadata.timestamp
          }
        })
        assert.strictEqual(hit.text, expected)
        assert.isAbove(Date.parse(hit.json.metadata.timestamp), Date.parse(miss.json.metadata.timestamp))
        assert.isAtLeast(hit.json.metadata.latency_ms, 0)
      }
      const v2Miss = yield* v2(key, LAZARUS)
      const v2Hit = yield* v2(key, LAZARUS)
      assert.strictEqual(v2Hit.headers.get("x-cache"), "HIT")
      assert.strictEqual(v2Hit.text, JSON.stringify({ ...v2Miss.json, timestamp: v2Hit.json.timestamp }))
    })
  )

  live("caches v2 results for a day, yet a newly listed address is never answered from the cache", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme" })
      assert.strictEqual((yield* v2(key, CLEAN)).json.data.risk_assessment.risk_level, "clean")
      const cached = yield* v2(key, CLEAN)
      assert.strictEqual(cached.headers.get("x-cache"), "HIT")
      yield* ingest("test-sanctions", "sanctions", [LAZARUS, CLEAN], "2025-01-01")
      const listed = yield* v2(key, CLEAN)
      assert.strictEqual(listed.headers.get("x-cache"), "MISS")
      assert.strictEqual(listed.json.data.risk_assessment.risk_level, "critical")
    })
  )
})

describe("edges", () => {
  live("answers 404, 405-as-404, 415 and 413 with JSON bodies", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const notFound = yield* call("GET", "/api/v9/nothing")
      assert.deepStrictEqual([notFound.status, notFound.json.error], [404, "Not Found"])
      const wrongMethod = yield* call("GET", "/api/v3/intel", { headers: { authorization: `Bearer ${key}` } })
      assert.deepStrictEqual([wrongMethod.status, wrongMethod.json.error], [404, "Not Found"])
      const text = yield* call("POST", "/api/v3/intel", {
        headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" },
        body: LAZARUS
      })
      assert.deepStrictEqual([text.status, text.json.error], [415, "Unsupported Media Type"])
      const big = yield* call("POST", "/api/v3/intel", {
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ address: CLEAN, padding: "x".repeat(70_000) })
      })
      assert.strictEqual(big.status, 413)
      decodes(Schemas.PayloadTooLarge, big.json)
    })
  )

  live("answers 413 to a chunked body that grows past the limit", () =>
    Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const url = yield* TestServer.baseUrl
      const status = yield* Effect.promise(async () => {
        const chunks = async function* () {
          yield new TextEncoder().encode(`{"address":"${CLEAN}","padding":"`)
          for (let i = 0; i < 80; i++) yield new TextEncoder().encode("x".repeat(1000))
          yield new TextEncoder().encode('"}')
        }
        const response = await fetch(`${url}/api/v3/intel`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: ReadableStream.from(chunks()),
          duplex: "half"
        } as RequestInit)
        return response.status
      })
      assert.strictEqual(status, 413)
    })
  )

  it.live("answers 503 with the reason when storage stops answering, and says so in its log", () => {
    const logs: Array<string> = []
    return Effect.gen(function* () {
      const key = yield* issue({ name: "Acme" })
      const { SqliteDatabase } = yield* Effect.promise(() => import("@vigil/adapter-sqlite"))
      const database = yield* SqliteDatabase.SqliteDatabase
      yield* database.use("test.close", (db) => db.close())
      for (const r of [yield* v3(key, { address: CLEAN }), yield* v2(key, CLEAN)]) {
        assert.strictEqual(r.status, 503)
        assert.strictEqual(r.json.error, "Service Unavailable")
        assert.strictEqual(r.json.details.reason, "Unavailable")
      }
      assert.isTrue(
        logs.some((l) => /^Warn: storage: .* failed: Unavailable: the database is closed/.test(l)),
        logs.join("\n")
      )
    }).pipe(Effect.provide(TestServer.layer({ logs }))) as Effect.Effect<void, unknown>
  })

  clocked("exposes Prometheus metrics of requests, latency, quota rejections and the cache", () =>
    Effect.gen(function* () {
      yield* withLists
      const key = yield* issue({ name: "Acme", qps: 1 })
      yield* TestServer.alignToSecond
      yield* v3(key, { address: LAZARUS })
      yield* v3(key, { address: LAZARUS })
      yield* TestServer.skip(1_000)
      yield* v3(key, { address: LAZARUS })
      yield* call("GET", "/nowhere")
      const m = yield* call("GET", "/metrics")
      assert.strictEqual(m.status, 200)
      assert.match(m.headers.get("content-type") ?? "", /^text\/plain/)
      assert.include(m.text, 'vigil_http_requests_total{method="POST",route="/api/v3/intel",status="200"} 2')
      assert.include(m.text, 'vigil_http_requests_total{method="POST",route="/api/v3/intel",status="429"} 1')
      assert.include(m.text, 'vigil_http_requests_total{method="GET",route="unmatched",status="404"} 1')
      assert.include(m.text, 'vigil_http_request_duration_seconds_count{method="POST",route="/api/v3/intel"} 3')
      assert.include(m.text, 'vigil_quota_rejections_total{limit="qps"} 1')
      assert.include(m.text, "vigil_result_cache_hits_total 1")
      for (const [family, type] of [
        ["vigil_build_info", "gauge"],
        ["vigil_http_requests_total", "counter"],
        ["vigil_http_request_duration_seconds", "histogram"],
        ["vigil_quota_rejections_total", "counter"],
        ["vigil_result_cache_entries", "gauge"]
      ]) {
        assert.include(m.text, `# TYPE ${family} ${type}\n`)
        assert.strictEqual(m.text.split(`# TYPE ${family} `).length, 2, `${family} is declared once`)
      }
      assert.include(m.text, 'vigil_quota_rejections_total{limit="daily"} 0')
      assert.include(
        m.text,
        'vigil_http_request_duration_seconds_bucket{method="POST",route="/api/v3/intel",le="+Inf"} 3'
      )
    })
  )

  live("labels each request to a route with an id in its path by the route's template in the metrics", () =>
    Effect.gen(function* () {
      const doc = (yield* call("GET", "/openapi.json")).json as { paths: Record<string, Record<string, unknown>> }
      const templated = Object.entries(doc.paths).flatMap(([path, operations]) =>
        path.includes("{") ? Object.keys(operations).map((method) => [method.toUpperCase(), path] as const) : []
      )
      assert.isAbove(templated.length, 10)
      // Without an API key every one of them answers 401 at once: nothing is read or written.
      for (const [method, path] of templated)
        assert.strictEqual((yield* call(method, path.replace(/\{(\w+)\}/g, "$1_1"))).status, 401, `${method} ${path}`)
      const m = (yield* call("GET", "/metrics")).text
      for (const [method, path] of templated) {
        const route = path.replace(/\{(\w+)\}/g, ":$1")
        assert.include(m, `vigil_http_requests_total{method="${method}",route="${route}",status="401"} 1`)
      }
    })
  )

  live("serves OpenAPI 3.1 with every route, both security schemes and examples", () =>
    Effect.gen(function* () {
      const doc = (yield* call("GET", "/openapi.json")).json
      assert.match(doc.openapi, /^3\.1/)
      for (const [path, method] of [
        ["/health", "get"],
        ["/metrics", "get"],
        ["/api/v3/intel", "post"],
        ["/api/v3/intel/batch", "post"],
        ["/api/v2/intel", "get"],
        ["/api/v2/status", "get"],
        ["/api/v2/webhooks", "post"],
        ["/api/v2/webhooks", "get"],
        ["/api/v2/webhooks/stats", "get"],
        ["/api/v2/webhooks/{webhookId}", "delete"],
        ["/api/v2/intel/webhook", "post"]
      ] as const) {
        assert.property(doc.paths[path] ?? {}, method, path)
      }
      const schemes = Object.values(doc.components.securitySchemes) as Array<any>
      assert.deepInclude(schemes, { type: "http", scheme: "Bearer" })
      assert.deepInclude(schemes, { type: "apiKey", name: "x-api-key", in: "header" })
      assert.deepStrictEqual(doc.paths["/api/v3/intel"].post.security, [{ bearer: [] }])
      assert.deepStrictEqual(doc.paths["/api/v2/intel"].get.security, [{ apiKey: [] }])
      const address = doc.components.schemas.V3IntelRequest.properties.address
      assert.deepStrictEqual([address.minLength, address.maxLength], [26, 128])
      assert.includeMembers(Object.keys(doc.paths["/api/v3/intel"].post.responses), [
        "200",
        "400",
        "401",
        "413",
        "429",
        "503"
      ])
      assert.include(
        JSON.stringify(doc),
        "0x8589427373d6d84e98730d7795d8f6f8731fda16",
        "request examples are published"
      )
    })
  )
})
