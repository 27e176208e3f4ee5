/**
 * One POST of a JSON-RPC body to a chain's node on Node's fetch, as the account and transfer readers make it: the
 * answer's text, or `failed`'s error for an unreachable node or a non-2xx answer. No retry: their callers' budgets
 * are short, and a node that does not answer makes an answer partial, not late.
 */
import { Effect, Schema } from "effect"

const encodeJson = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

/** Posts `body` (JSON) to `url`; the answer's text. */
export const post = <E>(url: string, body: unknown, failed: (message: string) => E): Effect.Effect<string, E> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: encodeJson(body),
        signal
      })
      if (!response.ok) throw new Error(`the node answered HTTP ${response.status}`)
      return await response.text()
    },
    catch: (e) => failed(`the node could not be read: ${(e as Error).message}`)
  })
