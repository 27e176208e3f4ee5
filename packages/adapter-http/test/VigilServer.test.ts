import { assert, describe, it } from "@effect/vitest"
import { SqliteDatabase, SqliteMigrations } from "@vigil/adapter-sqlite"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"

const serverOnTempDatabase = TestServer.layer()

const get = (path: string) =>
  Effect.map(TestServer.call("GET", path), (r) => ({
    status: r.status,
    type: r.headers.get("content-type"),
    body: r.text
  }))

describe("VigilServer", () => {
  it.live("answers /health with the storage it really reached", () =>
    Effect.gen(function* () {
      const health = yield* get("/health")
      assert.strictEqual(health.status, 200)
      assert.strictEqual(health.type, "application/json")
      const body = JSON.parse(health.body)
      assert.strictEqual(body.status, "ok")
      assert.strictEqual(body.version, "0.1.0")
      assert.deepStrictEqual(body.storage, {
        kind: "sqlite",
        schema_version: SqliteMigrations.migrations.at(-1)!.version
      })
      assert.isTrue(Number.isInteger(body.uptime_seconds) && body.uptime_seconds >= 0)
    }).pipe(Effect.provide(serverOnTempDatabase))
  )

  it.live("answers /health with 503 and the reason once storage stops answering", () =>
    Effect.gen(function* () {
      const database = yield* SqliteDatabase.SqliteDatabase
      yield* database.use("test.close", (db) => db.close())
      const health = yield* get("/health")
      assert.strictEqual(health.status, 503)
      assert.deepStrictEqual(JSON.parse(health.body), {
        status: "unavailable",
        version: "0.1.0",
        reason: "Unavailable",
        message: "the database is closed"
      })
    }).pipe(Effect.provide(serverOnTempDatabase))
  )

  it.live("serves an OpenAPI 3.1 document of its routes and a docs page", () =>
    Effect.gen(function* () {
      const openapi = yield* get("/openapi.json")
      assert.strictEqual(openapi.status, 200)
      const document = JSON.parse(openapi.body)
      assert.match(document.openapi, /^3\.1/)
      assert.strictEqual(document.info.title, "Vigil")
      assert.property(document.paths, "/health")
      assert.deepStrictEqual(Object.keys(document.paths["/health"].get.responses).sort(), ["200", "503"])
      const docs = yield* get("/docs")
      assert.strictEqual(docs.status, 200)
      assert.match(docs.type ?? "", /text\/html/)
    }).pipe(Effect.provide(serverOnTempDatabase))
  )
})
