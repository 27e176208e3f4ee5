/**
 * A client generated from the served `/openapi.json` (openapi-typescript, as a team embedding Vigil would make one)
 * can send and read what monitoring speaks: `options.literalDefs` values, an alert's and a historical match's
 * evidence, and the `details` of an error. The program below is compiled against the generated types with strict
 * TypeScript: its lines marked `@ts-expect-error` must be refused, so a bare `{type: "object"}` (typed
 * `Record<string, never>`, where any read passes as `never`) fails the test. The compiled program then runs
 * against the same server through openapi-fetch.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createRequire } from "node:module"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import createClient from "openapi-fetch"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import * as TestServer from "./TestServer.ts"

const require = createRequire(import.meta.url)
const openapiFetchTypes = join(dirname(require.resolve("openapi-fetch/package.json")), "dist/index.d.mts")

/** The program a team would write: typed sends and reads, and the wrong uses the types must refuse. */
const program = `
import type createClient from "openapi-fetch"
import type { components, paths } from "./api.js"

type Schemas = components["schemas"]

export const run = async (make: typeof createClient, baseUrl: string, key: string) => {
  const client = make<paths>({ baseUrl, headers: { "x-api-key": key } })
  const literalDefs: NonNullable<NonNullable<paths["/v1/bots"]["post"]["requestBody"]>["content"]["application/json"]["options"]>["literalDefs"] =
    { min: 1e21, token: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", strict: true }
  // @ts-expect-error a literal's value is a number, a string or a boolean, never an object
  const wrongLiteral: typeof literalDefs = { min: { value: 1 } }
  void wrongLiteral

  const refused = await client.POST("/v1/bots", {
    body: {
      botName: "typed client",
      chainId: 1,
      watchRule: { expressions: ["system.uintCompare(tx1.USDC.E.Transfer.value, >, \${min})"] },
      options: { literalDefs }
    }
  })
  const details: Schemas["ErrorDetails"] | undefined = refused.error?.details
  const problems = details?.problems ?? []
  const offsets: Array<number> = problems.map((p) => p.offset)
  const candidates: Array<string> = problems.flatMap((p) => p.candidates)
  const messages: Array<string> = problems.map((p) => p.message)
  // @ts-expect-error a problem's offset is a number
  const wrongOffset: string | undefined = problems[0]?.offset
  void wrongOffset

  const evidence = (e: Schemas["Evidence"]) => {
    const hashes: Array<string> = Object.values(e.transactions).map((t) => t.hash)
    const blocks: Array<number> = Object.values(e.transactions).map((t) => t.blockNumber)
    const args: Array<Schemas["AbiValue"]> = Object.values(e.occurrences).map((o) => o.args)
    const logIndexes: Array<number | undefined> = Object.values(e.occurrences).map((o) => o.logIndex)
    // @ts-expect-error a transaction's block number is a number
    const wrongBlock: string | undefined = Object.values(e.transactions)[0]?.blockNumber
    void wrongBlock
    return { hashes, blocks, args, logIndexes, held: e.held }
  }
  const alerts = await client.GET("/v1/bots/{botId}/alerts", { params: { path: { botId: "bot_1764000000000_abcdefghi" } } })
  const alertEvidence = (alerts.data?.alerts ?? []).map((a) => evidence(a.evidence))
  const missing = alerts.error?.details?.id
  const history = await client.POST("/v1/bots/{botId}/execute-historical-query", {
    params: { path: { botId: "bot_1764000000000_abcdefghi" } },
    body: { chainId: 1 }
  })
  const historyEvidence = (history.data?.matches ?? []).map((m) => evidence(m.evidence))
  return {
    status: refused.response.status,
    field: details?.field,
    offsets,
    candidates,
    messages,
    alertEvidence,
    missing,
    historyStatus: history.response.status,
    historyEvidence
  }
}
`

/** Compiles the program against `types` with strict TypeScript: the diagnostics, as text. */
const compile = (dir: string, types: string): ReadonlyArray<string> => {
  writeFileSync(join(dir, "api.d.ts"), types)
  writeFileSync(join(dir, "program.ts"), program)
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    paths: { "openapi-fetch": [openapiFetchTypes] },
    types: []
  }
  const compiled = ts.createProgram([join(dir, "program.ts")], options)
  return ts.getPreEmitDiagnostics(compiled).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}

/** The paths of the object schemas in `document` that say nothing of their properties. */
const bareObjects = (value: unknown, path = ""): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null) return []
  const node = value as Record<string, unknown>
  const here =
    node.type === "object" &&
    node.properties === undefined &&
    node.patternProperties === undefined &&
    (node.additionalProperties === undefined ||
      node.additionalProperties === true ||
      (typeof node.additionalProperties === "object" && Object.keys(node.additionalProperties as object).length === 0))
      ? [path]
      : []
  return [...here, ...Object.entries(node).flatMap(([k, v]) => bareObjects(v, `${path}/${k}`))]
}

describe("a typed client generated from /openapi.json", () => {
  it.live("finds every object of the document described, property by property", () =>
    Effect.gen(function* () {
      const document = yield* TestServer.call("GET", "/openapi.json")
      assert.deepStrictEqual(bareObjects(JSON.parse(document.text)), [])
      assert.deepStrictEqual(bareObjects({ a: { type: "object" }, b: { type: "object", properties: {} } }), ["/a"])
    }).pipe(Effect.provide(TestServer.layer()))
  )

  it.live("sends literalDefs and reads evidence and error details with their types, and runs", () =>
    Effect.gen(function* () {
      const url = yield* TestServer.baseUrl
      const key = yield* TestServer.issue({ name: "typed client" })
      const document = yield* TestServer.call("GET", "/openapi.json")
      assert.strictEqual(document.status, 200)
      const types = yield* Effect.promise(() => openapiTS(document.text).then(astToString))

      const dir = mkdtempSync(join(tmpdir(), "vigil-typed-client-"))
      try {
        assert.deepStrictEqual(compile(dir, types), [])
        // The same program against a document whose details are a bare object: the types see nothing.
        const bare = JSON.parse(document.text)
        bare.components.schemas.ErrorDetails = { type: "object" }
        const blind = yield* Effect.promise(() => openapiTS(bare).then(astToString))
        const problems = compile(dir, blind)
        assert.isTrue(
          problems.some((p) => p.includes("does not exist on type 'never'")),
          problems.join("\n")
        )

        const output = ts.transpileModule(program, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
        }).outputText
        const file = join(dir, "program.mjs")
        writeFileSync(file, output)
        const { run } = (yield* Effect.promise(() => import(file))) as {
          run: (make: typeof createClient, baseUrl: string, key: string) => Promise<Record<string, unknown>>
        }
        const answer = yield* Effect.promise(() => run(createClient, url, key))
        // No contract named USDC on chain 1 for this key: the rule is refused with where and what.
        assert.strictEqual(answer.status, 400)
        assert.strictEqual(answer.field, "watchRule.expressions")
        assert.deepStrictEqual(answer.offsets, [23])
        assert.deepStrictEqual(answer.messages, ["no contract labelled USDC on this chain (none is registered)"])
        assert.strictEqual(answer.missing, "bot_1764000000000_abcdefghi")
        assert.strictEqual(answer.historyStatus, 404)
        assert.deepStrictEqual(answer.alertEvidence, [])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(TestServer.layer()))
  )
})
