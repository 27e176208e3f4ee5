/** `GET /v1/lists` on the real server: every stored list with its versions and state, to any key, never without one. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"

const A = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96"
const B = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

describe("GET /v1/lists", () => {
  it.live("lists every stored list with its versions, dates, authority and counts", () =>
    Effect.gen(function* () {
      yield* TestServer.ingest("watch", "sanctions", [A, B], "2025-01-01")
      yield* TestServer.ingest("watch", "sanctions", [A], "2025-02-01", { allowShrink: true })
      yield* TestServer.ingest("feed", "phishing", [B], "2025-01-15", { authority: "scraped" })
      const key = yield* TestServer.issue({ name: "Acme" })
      for (const headers of [{ "x-api-key": key }, { authorization: `Bearer ${key}` }]) {
        const r = yield* TestServer.call("GET", "/v1/lists", { headers })
        assert.strictEqual(r.status, 200, r.text)
        const body = r.json as any
        assert.isTrue(body.success)
        assert.deepStrictEqual(
          body.lists.map((l: any) => [
            l.list,
            l.authority,
            l.version,
            l.asOf,
            l.since,
            l.versions,
            l.active,
            l.delisted
          ]),
          [
            ["feed", "scraped", 1, "2025-01-15", "2025-01-15", ["2025-01-15"], 1, 0],
            ["watch", "official", 2, "2025-02-01", "2025-01-01", ["2025-01-01", "2025-02-01"], 1, 1]
          ]
        )
      }
      const refused = yield* TestServer.call("GET", "/v1/lists")
      assert.strictEqual(refused.status, 401)
    }).pipe(Effect.provide(TestServer.layer()))
  )
})
