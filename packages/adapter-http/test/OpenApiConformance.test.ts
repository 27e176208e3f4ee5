/** The checker every test answer goes through must itself refuse what the document does not describe. */
import { describe, expect, it } from "vitest"
import { Api, VigilServer } from "@vigil/adapter-http"
import { OpenApi } from "effect/http-api"
import { compile } from "./OpenApiConformance.ts"

const check = compile(OpenApi.fromApi(Api.VigilApi) as unknown as Parameters<typeof compile>[0])

const json = (extra: Record<string, string> = {}) =>
  new Map([["content-type", "application/json"], ...Object.entries(extra)])
const v3Error = JSON.stringify({
  error: "Validation Error",
  message: "address: required",
  details: { field: "address" }
})

describe("OpenAPI conformance checker", () => {
  it("accepts a documented answer", () => {
    expect(check("POST", "/api/v3/intel", 400, json(), v3Error)).toEqual([])
    expect(
      check(
        "DELETE",
        "/api/v2/webhooks/wh_1_abc",
        404,
        json(),
        '{"success":false,"error":"Webhook not found","timestamp":"2026-11-22T10:00:01.000Z"}'
      )
    ).toEqual([])
  })

  it("refuses an undocumented status", () => {
    expect(check("POST", "/api/v3/intel", 418, json(), v3Error)).toEqual([
      "status 418 is not documented (documented: 200, 400, 401, 408, 413, 415, 429, 500, 503)"
    ])
  })

  it("refuses a body the schema forbids, naming what is wrong", () => {
    const problems = check(
      "POST",
      "/api/v3/intel",
      400,
      json(),
      JSON.stringify({ error: "Validation Error", message: 1 })
    )
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^body: .*message must be string/)
    expect(check("GET", "/api/v2/intel", 400, json(), v3Error)[0]).toMatch(/must have required property 'success'/)
  })

  it("refuses an undocumented header and a missing required one", () => {
    expect(check("POST", "/api/v3/intel", 400, json({ "x-cache": "HIT" }), v3Error)).toEqual([
      "header x-cache is not documented for 400"
    ])
    expect(
      check("POST", "/api/v3/intel", 401, json(), JSON.stringify({ error: "Unauthorized", message: "m" }))
    ).toEqual(["documented header www-authenticate is missing"])
  })

  it("refuses an undocumented content type and a header of the wrong form", () => {
    expect(check("POST", "/api/v3/intel", 400, new Map([["content-type", "text/html"]]), "<p>")).toEqual([
      'content type "text/html" is not documented (documented: application/json)'
    ])
    const limited = json({
      "x-ratelimit-limit": "1",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1",
      "retry-after": "1",
      "www-authenticate": "Basic"
    })
    const tooMany = JSON.stringify({ error: "Too Many Requests", message: "m" })
    expect(check("POST", "/api/v3/intel", 429, limited, tooMany)).toEqual([
      "header www-authenticate is not documented for 429"
    ])
    const unauthorized = JSON.stringify({ error: "Unauthorized", message: "m" })
    expect(check("POST", "/api/v3/intel", 401, json({ "www-authenticate": "Basic" }), unauthorized)[0]).toMatch(
      /^header www-authenticate: header must be equal to one of the allowed values/
    )
  })

  it("tells the literal path from a templated one", () => {
    const stats = JSON.stringify({ success: true })
    expect(check("GET", "/api/v2/webhooks/stats", 200, json(), stats)[0]).toMatch(/required property 'stats'/)
  })
})

describe("the document's own additions", () => {
  const document = OpenApi.fromApi(Api.VigilApi) as unknown as {
    paths: Record<string, Record<string, { parameters?: Array<any>; responses: Record<string, any> }>>
    webhooks: Record<string, any>
    components: { schemas: Record<string, unknown> }
  }
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation }))
  )

  it("gives query numbers as the integers the routes take", () => {
    const query = (path: string, name: string) =>
      document.paths[path]!.get!.parameters!.find((p) => p.in === "query" && p.name === name).schema
    expect(query("/v1/bots/{botId}/alerts", "limit").type).toBe("integer")
    expect(query("/v1/contracts", "chainId").type).toBe("integer")
    expect(query("/v1/bots", "chainId")).toMatchObject({ type: "integer", description: "Only the bots of this chain" })
    // No number travels as a pattern-checked string any more.
    const texts = operations.flatMap(({ operation }) =>
      (operation.parameters ?? []).filter((p) => p.schema?.type === "string" && /\\d/.test(p.schema?.pattern ?? ""))
    )
    expect(texts).toEqual([])
  })

  it("documents on every route the 408 the server's request timeout answers, with its default", () => {
    const seconds = VigilServer.limits.requestTimeoutMillis.default / 1000
    for (const { path, method, operation } of operations)
      expect(operation.responses["408"]?.description, `${method} ${path}`).toContain(`default ${seconds} s`)
  })

  it("describes what Vigil sends receivers, with the Standard Webhooks headers, in `webhooks`", () => {
    expect(Object.keys(document.webhooks).sort()).toEqual(["channelMessage", "intelligence"])
    for (const hook of Object.values(document.webhooks)) {
      const ref = hook.post.requestBody.content["application/json"].schema.$ref as string
      expect(document.components.schemas[ref.replace("#/components/schemas/", "")]).toBeDefined()
      expect(hook.post.parameters.map((p: { name: string }) => p.name)).toEqual([
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature"
      ])
    }
  })
})
