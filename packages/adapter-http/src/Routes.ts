/**
 * The route tables of the edge, derived from the API itself (one walk of `VigilApi` with `HttpApi.reflect`), so a
 * route is declared once, in `Api.ts`: the metrics label of a path, the flavour of error body it gets, and the
 * paths the hot-routes lane and the edge's special cases name by their endpoint.
 */
import { Context } from "effect"
import { HttpApi } from "effect/http-api"
import { VigilApi } from "./Api.ts"
import * as Responses from "./Responses.ts"

/** Where the document and its browsable page are served. */
export const openapiPath = "/openapi.json"
export const docsPath = "/docs"

/** A route of the API: its method, path template (`:name` segments), group, endpoint and error flavour. */
export interface Route {
  readonly method: string
  readonly path: string
  readonly group: string
  readonly endpoint: string
  readonly flavour: Responses.Flavour
}

/** Every route of the API, in declaration order. */
export const all: ReadonlyArray<Route> = (() => {
  const routes: Array<Route> = []
  HttpApi.reflect(VigilApi, {
    onGroup: () => undefined,
    onEndpoint: ({ group, endpoint, mergedAnnotations }) =>
      void routes.push({
        method: endpoint.method,
        path: endpoint.path,
        group: group.identifier,
        endpoint: endpoint.identifier,
        flavour: Context.get(mergedAnnotations, Responses.FlavourOfGroup)
      })
  })
  return routes
})()

/** The path of endpoint `endpoint` of group `group`; a name the API does not declare is a bug here. */
export const path = (group: string, endpoint: string): string => {
  const route = all.find((r) => r.group === group && r.endpoint === endpoint)
  if (route === undefined) throw new Error(`the API declares no endpoint ${group}.${endpoint}`)
  return route.path
}

const templated = (template: string) => template.includes(":")
const patternOf = (template: string) => new RegExp(`^${template.replace(/:[A-Za-z]+/g, "[^/]+")}$`)

/** Paths the metrics distinguish without a pattern: every literal route, the document and its page. */
const literal = new Set([...all.filter((r) => !templated(r.path)).map((r) => r.path), openapiPath, docsPath])
/** Routes with ids in their paths, each with the pattern of its template (a `:name` segment is any one segment). */
const patterns: ReadonlyArray<readonly [RegExp, string]> = [
  ...new Set(all.filter((r) => templated(r.path)).map((r) => r.path))
].map((template) => [patternOf(template), template])

/** The metrics label of a path: itself when a route's, its route's template when it has an id, else `unmatched`. */
export const label = (path: string): string =>
  literal.has(path) ? path : (patterns.find(([re]) => re.test(path))?.[1] ?? "unmatched")

/** The version prefix of a path (`/api/v2/`, `/v1/`): through its first `v<digits>` segment. */
const versionPrefix = (path: string) => /^(?:\/[^/?]+)*?\/v\d+\//.exec(path)?.[0]

/** The flavour of each route template, and the version prefixes whose routes all take v2's. */
const flavours = new Map(all.map((r) => [r.path, r.flavour]))
const v2Prefixes = new Set(all.filter((r) => r.flavour === "v2").map((r) => versionPrefix(r.path) ?? r.path))
for (const r of all) if (r.flavour === "v3") v2Prefixes.delete(versionPrefix(r.path) ?? r.path)

/**
 * Which flavour of error body a path gets: its route's; for a path no route has (a 404), that of the routes under
 * its version prefix.
 */
export const flavourOf = (url: string): Responses.Flavour => {
  const q = url.indexOf("?")
  const p = q === -1 ? url : url.slice(0, q)
  const known = flavours.get(label(p))
  if (known !== undefined) return known
  const prefix = versionPrefix(p)
  return prefix !== undefined && v2Prefixes.has(prefix) ? "v2" : "v3"
}
