/**
 * What a rule is evaluated against: transactions in chain order with their fields, their internal frames in
 * execution order (when the chain's RPC gives traces), and the events and calls of registered contracts already
 * decoded with those contracts' ABIs. Building facts from blocks, receipts and traces is the chain-data side's
 * work; the evaluator only reads them.
 */

/** A decoded ABI value: integers as bigint, addresses and bytes as lower-case hex, arrays, and tuples. */
export type AbiValue = bigint | boolean | string | ReadonlyArray<AbiValue> | Tuple

/**
 * A tuple (also the argument list of an event or call): values by position, with their names where the ABI has
 * them. Occurrences of one ABI item should share one `names` array: readers look a name up once per array.
 */
export interface Tuple {
  readonly _tag: "Tuple"
  readonly values: ReadonlyArray<AbiValue>
  readonly names: ReadonlyArray<string | undefined>
}

/** An internal frame (a call inside the transaction): index in execution order (0 is the top-level call). */
export interface Frame {
  readonly index: number
  readonly depth: number
  /** `from`, `to`, `value`, `type`, `gas`, `gasUsed`, `input`, `output`, `error` (absent when none), `depth`, `selector`. */
  readonly fields: Readonly<Record<string, AbiValue | undefined>>
  /** Risk score (0–100) of the frame's `from`, when known. */
  readonly riskscore?: bigint
}

/** An event of a registered contract, decoded. */
export interface EventOccurrence {
  readonly contract: string
  readonly name: string
  /** Canonical signature, e.g. `Transfer(address,address,uint256)`. */
  readonly signature: string
  readonly args: Tuple
  readonly address: string
  readonly logIndex: number
  /** The frame that emitted it, when traces tell. */
  readonly frame?: number
}

/** A call to a registered contract (the top-level call, or an internal frame), decoded. */
export interface CallOccurrence {
  readonly contract: string
  readonly name: string
  readonly signature: string
  readonly args: Tuple
  /** The decoded return value, when traces give the output. */
  readonly output?: Tuple
  readonly frame: number
  readonly reverted: boolean
  /** While this call was open, a frame under it called the same contract again. */
  readonly reentrant: boolean
}

/** A top-level transaction. */
export interface Transaction {
  readonly hash: string
  readonly blockNumber: number
  readonly txIndex: number
  /** The transaction fields (`from`, `to`, `value`, `status`, …). */
  readonly fields: Readonly<Record<string, AbiValue | undefined>>
  readonly riskscore?: bigint
  /** Frames in execution order, the top-level call first; absent when no trace was available. */
  readonly frames?: ReadonlyArray<Frame>
  readonly events: ReadonlyArray<EventOccurrence>
  readonly calls: ReadonlyArray<CallOccurrence>
}

/** The transactions a rule may bind, and what binding them is subject to. */
export interface Facts {
  /** In chain order: by block, then index in block. */
  readonly transactions: ReadonlyArray<Transaction>
  /** The largest block distance between the first and last bound transaction (`options.topLevelTxBlockRange`). */
  readonly blockRange: number
  /** Addresses of each registered label (for `tx1.WETH.from`'s involvement and `nativeTransfer(…Label)`). */
  readonly labels: ReadonlyMap<string, ReadonlySet<string>>
  /** Address groups for `inGroup` (lower-case addresses). */
  readonly groups?: ReadonlyMap<string, ReadonlySet<string>>
  /**
   * The newest block seen (live following); a match that a forward-looking negation could still undo is pending
   * until the block range past it has been seen. Absent: every window is closed (historical analysis).
   */
  readonly head?: number
}

const names = new Map<string, ReadonlyArray<string | undefined>>()

/**
 * A tuple from named values (a test and fixture helper). Tuples of the same names share one `names` array, as
 * decoded occurrences of one ABI item do.
 */
export const tuple = (entries: ReadonlyArray<readonly [string | undefined, AbiValue]>): Tuple => {
  const key = entries.map(([n]) => n ?? "").join(",")
  let shared = names.get(key)
  if (shared === undefined) {
    shared = entries.map(([n]) => n)
    names.set(key, shared)
  }
  return { _tag: "Tuple", values: entries.map(([, v]) => v), names: shared }
}
