/** The console's files on the real server: its page and assets with a strict policy, and nothing else from its folder. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Console } from "@vigil/adapter-http"
import { Effect } from "effect"
import * as TestServer from "./TestServer.ts"

describe("GET /console", () => {
  it.live("serves the page and its assets with the content-security-policy, and no other file", () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-console-build-"))
    mkdirSync(join(dir, "assets"))
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>console</title>")
    writeFileSync(join(dir, "assets", "index-abc.js"), "console.log(1)")
    writeFileSync(join(dir, "secret.txt"), "not served")
    return Effect.gen(function* () {
      for (const path of ["/console", "/console/"]) {
        const page = yield* TestServer.call("GET", path)
        assert.strictEqual(page.status, 200, path)
        assert.strictEqual(page.text, "<!doctype html><title>console</title>")
        assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
        assert.strictEqual(page.headers.get("content-security-policy"), Console.contentSecurityPolicy)
        assert.strictEqual(page.headers.get("cache-control"), "no-cache")
      }
      const script = yield* TestServer.call("GET", "/console/assets/index-abc.js")
      assert.strictEqual(script.status, 200)
      assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
      assert.strictEqual(script.headers.get("x-content-type-options"), "nosniff")
      assert.include(script.headers.get("cache-control") ?? "", "immutable")
      for (const path of ["/console/assets/nope.js", "/console/assets/..%2Fsecret.txt", "/console/secret.txt"]) {
        const missing = yield* TestServer.call("GET", path)
        assert.strictEqual(missing.status, 404, path)
        assert.notInclude(missing.text, "not served", path)
      }
    }).pipe(
      Effect.provide(TestServer.layer({ consoleDir: dir })),
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  })

  it.live("is not there when no console was built", () =>
    Effect.map(TestServer.call("GET", "/console"), (r) => assert.strictEqual(r.status, 404)).pipe(
      Effect.provide(TestServer.layer())
    )
  )
})
