/**
 * The operator's way out of a reorganisation deeper than a follower keeps hashes for (it halts, and `/health`
 * says so): re-anchoring sets the chain's cursor to a block of the node's chain as it is now (its head, or the
 * block given), and settles every standing alert of the chain against that chain, block by block:
 * - its block is still the node's at its height: it stands;
 * - another block is there: it is retracted (a retraction notice to its bot's channels), as in a shallow one;
 * - the node has no block there: it is marked unverified (an "unverified" notice), neither confirmed nor
 *   retracted.
 * The follower then goes on from the new cursor; what lies between the old branch and it is not looked at again.
 */
import { Clock, Effect, Schema } from "effect"
import { WebhookStore } from "../../delivery/index.ts"
import { Instant } from "../../kernel/index.ts"
import { BotStore } from "../bots/BotStore.ts"
import { ChainData } from "../chain/ChainData.ts"
import { FollowStore } from "./FollowStore.ts"
import { notices } from "../notifications/Notifications.ts"

/** The block asked for is not one the node has. */
export class ReanchorRefused extends Schema.TaggedError<ReanchorRefused>()("ReanchorRefused", {
  message: Schema.String
}) {}

/** What re-anchoring did. */
export interface Reanchored {
  readonly chainId: number
  readonly cursor: { readonly number: number; readonly hash: string }
  /** Standing alerts whose blocks are still the node's. */
  readonly kept: number
  readonly retracted: number
  readonly unverified: number
}

/** Re-anchors the follower of `chainId` at block `at` of the node's chain (default: its head). */
export const reset = Effect.fn("Reanchor.reset")(function* (chainId: number, at?: number) {
  const chain = yield* ChainData
  const store = yield* FollowStore
  const bots = yield* BotStore
  const outbox = yield* WebhookStore.Destinations
  const head = yield* chain.head(chainId)
  const number = at ?? head
  if (!Number.isSafeInteger(number) || number < 0 || number > head)
    return yield* new ReanchorRefused({
      message: `block ${number} is not on the node of chain ${chainId} (its head is ${head})`
    })
  const [mark] = yield* chain.hashes(chainId, [number])
  if (mark === undefined)
    return yield* new ReanchorRefused({ message: `the node of chain ${chainId} has no block ${number}` })
  const standing = yield* store.orphaned(chainId, -1)
  const heights = [...new Set(standing.map((a) => a.blockNumber))]
  const onNode = new Map<number, string | undefined>()
  for (let i = 0; i < heights.length; i += 500) {
    const part = heights.slice(i, i + 500)
    const hashes = yield* chain.hashes(chainId, part)
    part.forEach((n, k) => onNode.set(n, hashes[k]?.hash.toLowerCase()))
  }
  const now = yield* Clock.currentTimeMillis
  let kept = 0
  const retract: Array<string> = []
  const unverify: Array<string> = []
  const deliveries: Array<WebhookStore.Delivery> = []
  for (const alert of standing) {
    const hash = onNode.get(alert.blockNumber)
    if (hash === alert.blockHash.toLowerCase()) {
      kept++
      continue
    }
    const kind = hash === undefined ? "unverified" : "retraction"
    if (kind === "unverified" && alert.unverifiedAt !== undefined) continue
    ;(kind === "unverified" ? unverify : retract).push(alert.id)
    deliveries.push(...(yield* notices(bots, outbox, alert, kind, now)))
  }
  yield* store.reset(chainId, mark, { retract, unverify, at: Instant.iso(now), deliveries })
  return {
    chainId,
    cursor: { number: mark.number, hash: mark.hash },
    kept,
    retracted: retract.length,
    unverified: unverify.length
  } satisfies Reanchored
})
