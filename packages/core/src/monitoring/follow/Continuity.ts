/**
 * Whether the blocks a node shows continue the branch the follower processed, decided without I/O: new blocks
 * must link to the cursor by their parents' hashes; a cursor the node no longer has at its height is a
 * reorganisation, unless the node lacks the height altogether (a lagging replica, which is waited for); after a
 * reorganisation the common ancestor is the highest kept block the node still has, and a node that lacks any of
 * the heights asked is behind, not proof of an orphan.
 */

import type { Mark } from "./FollowStore.ts"

/** A block as the node shows it at a height (undefined: the node does not have the height). */
export type OnNode = { readonly hash: string } | undefined

/** The blocks a step reads: from the block after the cursor up to the head less the confirmations, `batch` at most. */
export const nextRange = (
  cursor: number,
  head: number,
  confirmations: number,
  batch: number
): { readonly from: number; readonly to: number } | undefined => {
  const target = head - confirmations
  if (target <= cursor) return undefined
  return { from: cursor + 1, to: Math.min(target, cursor + batch) }
}

/**
 * How new blocks (ascending from the block after the cursor) stand against the cursor: `extends` with how many of
 * them link one to the next from the cursor (a later block that does not link ends the run: the next step reads
 * again from there), or `reorganised` when the first does not follow the cursor.
 */
export const extend = (
  cursorHash: string,
  blocks: ReadonlyArray<{ readonly hash: string; readonly parentHash?: string | undefined }>
): { readonly kind: "extends"; readonly count: number } | { readonly kind: "reorganised" } => {
  let previous = cursorHash
  let count = 0
  for (const b of blocks) {
    if (b.parentHash !== previous) break
    previous = b.hash
    count++
  }
  return count === 0 && blocks.length > 0 ? { kind: "reorganised" } : { kind: "extends", count }
}

/**
 * The cursor's block against the node's block at its height: the `same`, `lagging` when the node lacks the height
 * (a replica behind, a node syncing: waited for), or `reorganised`.
 */
export const atCursor = (cursor: Mark, onNode: OnNode): "same" | "lagging" | "reorganised" =>
  onNode === undefined ? "lagging" : onNode.hash === cursor.hash ? "same" : "reorganised"

/**
 * The common ancestor among `kept` (ascending marks below the cursor) given the node's blocks at their heights:
 * `lagging` with the first height the node lacks (it showed higher blocks a moment ago, so it is behind; retracting
 * on its word could retract a standing alert), `found` with the highest kept block the node still has, or `none`
 * when the node has none of them (a reorganisation deeper than the marks kept).
 */
export const ancestor = (
  kept: ReadonlyArray<Mark>,
  onNode: ReadonlyArray<OnNode>
):
  | { readonly kind: "lagging"; readonly number: number }
  | { readonly kind: "found"; readonly mark: Mark }
  | { readonly kind: "none" } => {
  const lacking = kept.findIndex((_, i) => onNode[i] === undefined)
  if (lacking !== -1) return { kind: "lagging", number: kept[lacking]!.number }
  const found = kept.filter((m, i) => onNode[i]?.hash === m.hash).at(-1)
  return found === undefined ? { kind: "none" } : { kind: "found", mark: found }
}

/**
 * Whether blocks read again for the window kept before the cursor are still those processed: the last is the
 * cursor's and each links to the one before.
 */
export const intact = (
  blocks: ReadonlyArray<{ readonly hash: string; readonly parentHash?: string | undefined }>,
  cursor: Mark
): boolean =>
  blocks.at(-1)?.hash === cursor.hash && blocks.every((b, i) => i === 0 || b.parentHash === blocks[i - 1]!.hash)
