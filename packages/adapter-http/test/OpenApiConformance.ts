/**
 * Every answer a Vigil server gives the test suite must be one its own `/openapi.json` describes: a documented
 * status for the operation, a body of the documented media type that validates against the documented schema
 * (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses), and no header beyond HTTP's own that the response does not
 * declare (declared required headers must be present).
 *
 * `installFetchCheck` wraps `fetch` for a whole test file (the vitest setup file does it): every response from
 * an origin that serves a Vigil OpenAPI document is checked, and a response the document does not describe makes
 * the `fetch` call fail with what is wrong. Tests that speak raw HTTP call {@link assertConforms} themselves. Paths no
 * operation names (`/openapi.json`, `/docs`, unknown routes) are not checked.
 */
import { Ajv2020 } from "ajv/dist/2020.js"

interface Operation {
  readonly responses: Record<string, ResponseObject | undefined>
}
interface ResponseObject {
  readonly content?: Record<string, { readonly schema?: unknown }>
  readonly headers?: Record<string, { readonly required?: boolean; readonly schema?: unknown }>
}
interface Document {
  readonly openapi: string
  readonly info: { readonly title: string }
  readonly paths: Record<string, Record<string, Operation | undefined>>
  readonly webhooks?: Record<
    string,
    {
      readonly post: {
        readonly parameters: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema: unknown }>
        readonly requestBody: { readonly content: Record<string, { readonly schema: unknown }> }
      }
    }
  >
}

/** Headers of HTTP itself, which no operation documents. */
const transportHeaders = new Set([
  "content-type",
  "content-length",
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding"
])

const pointer = (...parts: ReadonlyArray<string>) =>
  "#/" + parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")

/** A compiled document: finds the operation of a request and validates an answer against it. */
export const compile = (document: Document) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  ajv.addSchema(document as object, "openapi")
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const validator = (ref: string) => {
    let v = validators.get(ref)
    if (v === undefined) {
      v = ajv.compile({ $ref: `openapi${ref}` })
      validators.set(ref, v)
    }
    return v
  }
  const templates = Object.keys(document.paths)
    .map((template) => ({
      template,
      literal: !template.includes("{"),
      pattern: new RegExp("^" + template.replace(/\{[^/]+\}/g, "[^/]+") + "$")
    }))
    // Literal paths first, so `/api/v2/webhooks/stats` is not taken for `/api/v2/webhooks/{webhookId}`.
    .sort((a, b) => Number(b.literal) - Number(a.literal))

  const validate = (ref: string, value: unknown, what: string): ReadonlyArray<string> => {
    const v = validator(ref)
    return v(value)
      ? []
      : [`${what}: ${ajv.errorsText(v.errors, { dataVar: what.startsWith("header") ? "header" : "body" })}`]
  }

  /** What is wrong with an answer to `method path` (empty when it conforms). */
  return (
    method: string,
    url: string,
    status: number,
    headers: ReadonlyMap<string, string>,
    text: string
  ): ReadonlyArray<string> => {
    const path = url.split("?")[0] ?? url
    const m = method.toLowerCase()
    const template = templates.find((t) => t.pattern.test(path) && document.paths[t.template]?.[m] !== undefined)
    if (template === undefined) return []
    const operation = document.paths[template.template]![m]!
    const response = operation.responses[String(status)]
    if (response === undefined) {
      return [`status ${status} is not documented (documented: ${Object.keys(operation.responses).join(", ")})`]
    }
    const problems: Array<string> = []
    const base = ["paths", template.template, m, "responses", String(status)]
    const declared = response.headers ?? {}
    for (const name of headers.keys()) {
      if (!transportHeaders.has(name) && declared[name] === undefined) {
        problems.push(`header ${name} is not documented for ${status}`)
      }
    }
    for (const [name, spec] of Object.entries(declared)) {
      const value = headers.get(name)
      if (value === undefined) {
        if (spec.required === true) problems.push(`documented header ${name} is missing`)
      } else if (spec.schema !== undefined) {
        problems.push(...validate(pointer(...base, "headers", name, "schema"), value, `header ${name}`))
      }
    }
    const contentType = (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase()
    const content = response.content
    if (content === undefined) {
      if (text !== "") problems.push(`a body was sent but ${status} documents none`)
      return problems
    }
    // Documented media types may carry parameters (`text/plain; version=0.0.4`); the type itself must match.
    const documented = Object.keys(content).find((key) => key.split(";")[0]!.trim().toLowerCase() === contentType)
    if (documented === undefined) {
      problems.push(`content type "${contentType}" is not documented (documented: ${Object.keys(content).join(", ")})`)
      return problems
    }
    if (content[documented]?.schema === undefined) return problems
    let body: unknown = text
    if (contentType === "application/json") {
      try {
        body = JSON.parse(text)
      } catch {
        return [...problems, "the body is not JSON"]
      }
    }
    return [...problems, ...validate(pointer(...base, "content", documented, "schema"), body, "body")]
  }
}

/**
 * A compiled document's `webhooks`: what is wrong with a request Vigil sent a receiver as the webhook `name` (its
 * headers by lower-case name, its body as text), empty when the document describes it.
 */
export const compileWebhooks = (document: Document) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  ajv.addSchema(document as object, "openapi")
  return (name: string, headers: Readonly<Record<string, unknown>>, text: string): ReadonlyArray<string> => {
    const hook = document.webhooks?.[name]
    if (hook === undefined) return [`the document has no webhook ${name}`]
    const problems: Array<string> = []
    const check = (ref: string, value: unknown, what: string) => {
      const v = ajv.compile({ $ref: `openapi${ref}` })
      if (!v(value)) problems.push(`${what}: ${ajv.errorsText(v.errors, { dataVar: what })}`)
    }
    for (const [i, p] of hook.post.parameters.entries()) {
      if (p.in !== "header") continue
      const value = headers[p.name]
      if (typeof value !== "string") problems.push(`header ${p.name} is missing`)
      else check(pointer("webhooks", name, "post", "parameters", String(i), "schema"), value, `header ${p.name}`)
    }
    const contentType = String(headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
    if (hook.post.requestBody.content[contentType] === undefined)
      return [...problems, `content type "${contentType}" is not documented`]
    check(pointer("webhooks", name, "post", "requestBody", "content", contentType, "schema"), JSON.parse(text), "body")
    return problems
  }
}

type Check = ReturnType<typeof compile>

/** Documents by origin; null when the origin serves no Vigil document (a receiver, a web host without one). */
const documents = new Map<string, Promise<Check | null>>()

const documentOf = (origin: string, plainFetch: typeof fetch): Promise<Check | null> => {
  let found = documents.get(origin)
  if (found === undefined) {
    found = plainFetch(`${origin}/openapi.json`)
      .then(async (response) => {
        if (response.status !== 200) return null
        const document = (await response.json()) as Document
        return typeof document.openapi === "string" && document.info?.title === "Vigil" ? compile(document) : null
      })
      .catch(() => null)
    documents.set(origin, found)
  }
  return found
}

let plain: typeof fetch = globalThis.fetch

/** Throws when an answer does not conform, naming the request and every problem. */
export const assertConforms = async (
  origin: string,
  method: string,
  path: string,
  status: number,
  headers: ReadonlyMap<string, string>,
  text: string
) => {
  const check = await documentOf(origin, plain)
  const problems = check === null ? [] : check(method, path, status, headers, text)
  if (problems.length > 0) {
    throw new Error(
      `${method.toUpperCase()} ${path} answered ${status}, which ${origin}/openapi.json does not describe:\n  ${problems.join("\n  ")}\n  body: ${text.slice(0, 500)}`
    )
  }
}

/** Wraps `fetch` so that every answer of a Vigil server is checked against its document. */
export const installFetchCheck = () => {
  plain = globalThis.fetch
  const original = plain
  globalThis.fetch = async (input, init) => {
    const response = await original(input, init)
    const url = new URL(input instanceof Request ? input.url : input)
    const method = init?.method ?? (input instanceof Request ? input.method : "GET")
    if (url.protocol !== "http:" && url.protocol !== "https:") return response
    const text = await response.clone().text()
    const headers = new Map<string, string>()
    response.headers.forEach((value, name) => headers.set(name.toLowerCase(), value))
    await assertConforms(url.origin, method, url.pathname + url.search, response.status, headers, text)
    return response
  }
}
