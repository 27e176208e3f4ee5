/** What the generated OpenAPI document is completed with: integer query numbers, the 408, and `webhooks`. */
import { Schema } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"

/** The Standard Webhooks headers every delivery carries (spec §6), in the document's `webhooks`. */
const signatureHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The delivery's id (msg_…), the same on every retry: receivers deduplicate by it",
    schema: { type: "string" }
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "Unix seconds when this attempt was signed; refuse one too far from your clock",
    schema: { type: "string", pattern: "^[0-9]+$" }
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "v1,<base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` keyed by the secret after its whsec_ prefix, base64-decoded>",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}$" }
  }
]

/** A webhook of the document: what Vigil POSTs to a receiver, and what each answer makes of the delivery. */
const outboundHook = (operationId: string, summary: string, description: string, schema: string) => ({
  post: {
    operationId,
    summary,
    description,
    parameters: signatureHeaders,
    requestBody: {
      required: true,
      content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } }
    },
    responses: {
      "2XX": { description: "Delivered: nothing more is sent for this delivery" },
      "410": { description: "Gone: the destination is disabled, nothing more is sent to it" },
      default: {
        description:
          "Anything else (or no answer within the delivery timeout) is retried with backoff, then dead-lettered"
      }
    }
  }
})

/** The 408 Node's server itself answers to a request not received in full in time (VIGIL_REQUEST_TIMEOUT_MS). */
const requestTimeout = {
  description:
    "The request was not received in full within the server's request timeout (VIGIL_REQUEST_TIMEOUT_MS, default 30 s): no body, and the connection is closed"
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** What the transform reads and writes of an operation of the generated document. */
interface DocOperation {
  readonly parameters?: ReadonlyArray<{ readonly in: string; readonly name: string; readonly schema?: unknown }>
  readonly responses?: Record<string, unknown>
}

/**
 * What the generator does not say by itself: query numbers as the integers the routes take (a query is text on
 * the wire, so the generator writes the encoded side), the 408 of the server's request timeout on every route, and
 * the `webhooks` Vigil sends, so a receiver can generate its types.
 */
export const completeDocument =
  <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  (spec: Record<string, unknown>): Record<string, unknown> => {
    const integers = new Map<string, Record<string, unknown>>()
    HttpApi.reflect(api, {
      onGroup: () => undefined,
      onEndpoint: ({ endpoint }) => {
        if (endpoint.query === undefined) return
        const typed = Schema.toJsonSchemaDocument(Schema.toType(endpoint.query)).schema as {
          properties?: Record<string, Record<string, unknown>>
        }
        for (const [name, property] of Object.entries(typed.properties ?? {}))
          if (property.type === "integer")
            integers.set(
              `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")} ${name}`,
              property
            )
      }
    })
    const paths: Record<string, Record<string, DocOperation>> = {}
    for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, DocOperation>>)) {
      const operations: Record<string, DocOperation> = {}
      for (const [method, operation] of Object.entries(item)) {
        if (!methods.includes(method)) {
          operations[method] = operation
          continue
        }
        operations[method] = {
          ...operation,
          ...(operation.parameters === undefined
            ? {}
            : {
                parameters: operation.parameters.map((p) =>
                  p.in === "query" && integers.has(`${method} ${path} ${p.name}`)
                    ? { ...p, schema: integers.get(`${method} ${path} ${p.name}`) }
                    : p
                )
              }),
          responses: { ...operation.responses, "408": requestTimeout }
        }
      }
      paths[path] = operations
    }
    return {
      ...spec,
      paths,
      webhooks: {
        intelligence: outboundHook(
          "webhook.intelligence",
          "An asynchronous screening's result, to each webhook of the key (/api/v2/webhooks)",
          "Sent once per webhook for every POST /api/v2/webhooks/intel, after the screening; retried with backoff until a 2xx (at most 5 webhooks per key).",
          "IntelligenceDelivery"
        ),
        channelMessage: outboundHook(
          "webhook.channelMessage",
          "An alert, its retraction or unverified notice, or a test, to a `webhook` notification channel",
          "Sent for each alert of a bot that notifies the channel; a retraction (its block left the chain) and an unverified notice carry the alert's id in correlation_id and data.id. Slack, Discord, Telegram and email channels receive their service's own format instead.",
          "ChannelWebhookMessage"
        )
      }
    }
  }
