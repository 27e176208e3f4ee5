/**
 * Port: blocks read from chains' nodes for historical analysis, and which of them each bot was given. A block is
 * kept whole (block, receipts, traces when read) by chain and number, shared by every bot and key (chain data is
 * public; it is decoded with a key's ABIs only when a query runs). Putting a block again is harmless.
 */
import { Context, type Effect } from "effect"
import type { StoreError } from "../../kernel/index.ts"
import type { BlockData } from "./ChainFacts.ts"

/** A stored block. */
export interface StoredBlock {
  readonly chainId: number
  readonly number: number
  readonly hash: string
  /** Whether `data` holds the call traces. */
  readonly traces: boolean
  readonly data: BlockData
}

/** Stored blocks and the blocks submitted for each bot. */
export class BlockStore extends Context.Service<
  BlockStore,
  {
    /**
     * Stores blocks. One already stored at that number is replaced by another hash (a reorganisation), or by the
     * same block with the traces it lacked; otherwise it is kept.
     */
    readonly put: (blocks: ReadonlyArray<StoredBlock>) => Effect.Effect<void, StoreError.StoreError>
    /** The stored blocks among `numbers` of the chain, ascending. */
    readonly get: (
      chainId: number,
      numbers: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyArray<StoredBlock>, StoreError.StoreError>
    /** Records that the bot was given these blocks (again: no change). */
    readonly submit: (botId: string, numbers: ReadonlyArray<number>) => Effect.Effect<void, StoreError.StoreError>
    /** The blocks the bot was given, ascending. */
    readonly submitted: (botId: string) => Effect.Effect<ReadonlyArray<number>, StoreError.StoreError>
    /** Forgets what the bot was given (the blocks stay for others). */
    readonly forget: (botId: string) => Effect.Effect<void, StoreError.StoreError>
  }
>()("@vigil/core/BlockStore") {}
