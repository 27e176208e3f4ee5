/** The edge's route tables come from the API: labels, error flavours and named paths, and they agree with it. */
import { Api, Routes } from "@vigil/adapter-http"
import { OpenApi } from "effect/http-api"
import { describe, expect, it } from "vitest"

describe("Routes", () => {
  it("labels a path by its route: itself when literal, its template when it has an id, else unmatched", () => {
    expect(Routes.label("/api/v3/intel")).toBe("/api/v3/intel")
    expect(Routes.label("/v1/bots/bot_1_abc/alerts")).toBe("/v1/bots/:botId/alerts")
    expect(Routes.label("/v1/bots/bot_1_abc/alerts/al_9/redeliver")).toBe("/v1/bots/:botId/alerts/:alertId/redeliver")
    expect(Routes.label("/api/v2/webhooks/stats")).toBe("/api/v2/webhooks/stats")
    expect(Routes.label("/api/v2/webhooks/wh_1_abc")).toBe("/api/v2/webhooks/:webhookId")
    expect(Routes.label(Routes.openapiPath)).toBe("/openapi.json")
    expect(Routes.label("/v1/bots/a/b/c/d")).toBe("unmatched")
    expect(Routes.label("/wp-admin")).toBe("unmatched")
  })

  it("gives every route of the document a label of its own", () => {
    const document = OpenApi.fromApi(Api.VigilApi)
    for (const path of Object.keys(document.paths)) {
      const example = path.replace(/\{[^}]+\}/g, "x_1")
      expect(Routes.label(example), path).toBe(path.replace(/\{([^}]+)\}/g, ":$1"))
    }
  })

  it("flavours a route's errors as its group is annotated, which is the shape its documented errors have", () => {
    const document = OpenApi.fromApi(Api.VigilApi) as unknown as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>
      >
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
    }
    for (const route of Routes.all) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")]![route.method.toLowerCase()]!
      const refusal = operation.responses["500"]!.content!["application/json"]!.schema!.$ref!
      const shape = document.components.schemas[refusal.replace("#/components/schemas/", "")]!
      expect("timestamp" in (shape.properties ?? {}) ? "v2" : "v3", `${route.method} ${route.path}`).toBe(route.flavour)
      expect(Routes.flavourOf(route.path.replace(/:\w+/g, "x_1")), route.path).toBe(route.flavour)
    }
  })

  it("flavours a path no route has by the routes under its version prefix", () => {
    expect(Routes.flavourOf("/api/v2/nope")).toBe("v2")
    expect(Routes.flavourOf("/v1/nope/deeper")).toBe("v2")
    expect(Routes.flavourOf("/api/v3/nope")).toBe("v3")
    expect(Routes.flavourOf("/nope")).toBe("v3")
    expect(Routes.flavourOf("/api/v2/intel?address=0x00")).toBe("v2")
  })

  it("names an endpoint's path, and refuses a name the API does not declare", () => {
    expect(Routes.path("webhooks", "register")).toBe("/api/v2/webhooks")
    expect(Routes.path("v3", "intel")).toBe("/api/v3/intel")
    expect(() => Routes.path("v3", "nope")).toThrow("the API declares no endpoint v3.nope")
  })
})
