/**
 * From what an EVM node returns to the facts rules are evaluated against: a block with its transactions
 * (`eth_getBlockByNumber`, full), their receipts (`eth_getBlockReceipts`) and, when the node offers them, their
 * call traces (`debug_traceBlockByNumber` with `callTracer` and `withLog`). Events and calls of registered
 * contracts are decoded with ox (a pure, audited ABI codec) against each contract's ABI.
 *
 * Two facts about traces the model respects: a log listed under a frame that reverted (or under a reverted
 * ancestor) was never emitted; and a trace log's `index` also counts those dropped logs, so trace logs are tied to
 * receipt logs by their order among the logs that stood, not by index.
 */
import * as AbiEvent from "ox/AbiEvent"
import * as AbiFunction from "ox/AbiFunction"
import * as AbiParameters from "ox/AbiParameters"
import { BoundedMemo } from "../../kernel/index.ts"
import * as Abi from "../rules/Abi.ts"
import * as Reads from "../rules/Reads.ts"
import type { Contract } from "../rules/Typing.ts"
import type * as Facts from "../rules/Facts.ts"
import type { CallFrame, RpcBlock, RpcReceipt, RpcTransaction } from "./NodeAnswers.ts"

export type { CallFrame, RpcBlock, RpcLog, RpcReceipt, RpcTransaction } from "./NodeAnswers.ts"

/** One block's data; `traces` (by transaction, in block order) absent when the node has no `debug_*`. */
export interface BlockData {
  readonly block: RpcBlock
  readonly receipts: ReadonlyArray<RpcReceipt>
  readonly traces?: ReadonlyArray<CallFrame>
}

/** A contract to decode for: its label, address and ABI (the shape rules are checked against). */
export type { Contract }

const big = (hex: string | undefined): bigint => (hex === undefined || hex === "" ? 0n : BigInt(hex))
const lower = (a: string | undefined | null) => (a ?? "").toLowerCase()

/** ox's decoded value → a fact value, shaped by the ABI parameter (tuples keep positions and names). */
const toFact = (p: Abi.Parameter, v: unknown): Facts.AbiValue => {
  const array = /\[[0-9]*\]$/.exec(p.type)
  if (array !== null) {
    const element = { ...p, type: p.type.slice(0, array.index) }
    return (v as ReadonlyArray<unknown>).map((x) => toFact(element, x))
  }
  if (p.type === "tuple") return tuple(p.components ?? [], v)
  if (typeof v === "bigint" || typeof v === "boolean") return v
  if (typeof v === "number") return BigInt(v)
  return typeof v === "string" && (p.type === "address" || p.type.startsWith("bytes")) ? v.toLowerCase() : String(v)
}

const tuple = (params: ReadonlyArray<Abi.Parameter>, v: unknown): Facts.Tuple => ({
  _tag: "Tuple",
  values: params.map((p, i) =>
    toFact(
      p,
      Array.isArray(v)
        ? v[i]
        : (v as Record<string, unknown>)[p.name !== undefined && p.name !== "" ? p.name : String(i)]
    )
  ),
  names: namesOf(params)
})

const names = new WeakMap<ReadonlyArray<Abi.Parameter>, ReadonlyArray<string | undefined>>()
/** The parameter names of an ABI item, one array per item (shared by its occurrences, so readers can cache by it). */
const namesOf = (params: ReadonlyArray<Abi.Parameter>): ReadonlyArray<string | undefined> => {
  let known = names.get(params)
  if (known === undefined) {
    known = params.map((p) => (p.name === undefined || p.name === "" ? undefined : p.name))
    names.set(params, known)
  }
  return known
}

/** ox's parameter shape of ours. */
const toOx = (ps: ReadonlyArray<Abi.Parameter>): AbiParameters.AbiParameters =>
  ps.map((p) => ({
    name: p.name ?? "",
    type: p.type,
    ...(p.components === undefined ? {} : { components: toOx(p.components) })
  })) as unknown as AbiParameters.AbiParameters

const oxShapes = new WeakMap<ReadonlyArray<Abi.Parameter>, AbiParameters.AbiParameters>()
/** ox's parameter shape of a parameter list, made once per list (every log and call of an ABI item reuses it). */
const oxParameters = (ps: ReadonlyArray<Abi.Parameter>): AbiParameters.AbiParameters => {
  let known = oxShapes.get(ps)
  if (known === undefined) {
    known = toOx(ps)
    oxShapes.set(ps, known)
  }
  return known
}

/** What decoding an event's log needs of its item, made once per item: its data's parameters, each topic's. */
interface EventShape {
  readonly item: Abi.EventItem
  readonly signature: string
  readonly plain: AbiParameters.AbiParameters
  /**
   * The indexed parameters as one list of 32-byte words, decoded at once from the topics after topic0 (a dynamic
   * one, stored as its hash, read as the bytes32 it is).
   */
  readonly indexed: AbiParameters.AbiParameters
  /** Per input: whether it is indexed and dynamic (kept as the hash's 32 bytes). */
  readonly hashed: ReadonlyArray<boolean>
}

/** The decoders of one contract: events by topic0, functions by selector (each with its canonical signature). */
interface Decoders {
  readonly label: string
  readonly events: ReadonlyMap<string, EventShape>
  readonly functions: ReadonlyMap<string, { readonly item: Abi.FunctionItem; readonly signature: string }>
}

/** Whether an indexed parameter is stored as the hash of its value (a dynamic type) in its topic. */
const hashed = (p: Abi.Parameter) =>
  p.type === "string" || p.type === "bytes" || p.type.endsWith("]") || p.type === "tuple"

const eventShape = (item: Abi.EventItem): EventShape => ({
  item,
  signature: Abi.signature(item),
  plain: toOx(item.inputs.filter((p) => p.indexed !== true)),
  indexed: toOx(item.inputs.filter((p) => p.indexed === true).map((p) => (hashed(p) ? { type: "bytes32" } : p))),
  hashed: item.inputs.map((p) => p.indexed === true && hashed(p))
})

/**
 * Selectors by canonical signature: a Keccak-256 each, the same for every contract that declares the item (tokens
 * share their ABI), so a process hashes each signature once.
 */
const selectors = BoundedMemo.make<string, string>(10_000)
const eventSelector = (signature: string) =>
  selectors.through(`E ${signature}`, () => AbiEvent.getSelector(signature).toLowerCase())
const functionSelector = (signature: string) =>
  selectors.through(`F ${signature}`, () => AbiFunction.getSelector(signature).toLowerCase())

const made = new WeakMap<Contract, Decoders>()
/** A contract's decoders, made once per contract (its selectors are hashes of its items' signatures). */
const decoders = (c: Contract): Decoders => {
  let known = made.get(c)
  if (known === undefined) {
    known = {
      label: c.label,
      events: new Map(
        Abi.events(c.abi)
          .filter((e) => e.anonymous !== true)
          .map((e) => {
            const shape = eventShape(e)
            return [eventSelector(shape.signature), shape]
          })
      ),
      functions: new Map(
        Abi.functions(c.abi).map((f) => {
          const signature = Abi.signature(f)
          return [functionSelector(signature), { item: f, signature }]
        })
      )
    }
    made.set(c, known)
  }
  return known
}

const narrowedBy = new WeakMap<Reads.Reads, WeakMap<Contract, Decoders>>()
/**
 * A contract's decoders of the events and functions `reads` covers only (all of them for {@link Reads.everything}):
 * the others' logs and calls are not decoded and are no occurrences, which no rule reading only those can tell.
 */
const decodersFor = (c: Contract, reads: Reads.Reads): Decoders => {
  const all = decoders(c)
  if (reads.all) return all
  let byContract = narrowedBy.get(reads)
  if (byContract === undefined) narrowedBy.set(reads, (byContract = new WeakMap()))
  let narrowed = byContract.get(c)
  if (narrowed === undefined) {
    narrowed = {
      label: all.label,
      events: new Map([...all.events].filter(([, e]) => Reads.covers(reads, "E", all.label, e.item.name))),
      functions: new Map([...all.functions].filter(([, f]) => Reads.covers(reads, "F", all.label, f.item.name)))
    }
    byContract.set(c, narrowed)
  }
  return narrowed
}

/** A log decoded with the event its topic0 names, or undefined when it is not one of the contract's. */
const decodeLog = (
  d: Decoders,
  log: { readonly address: string; readonly topics: ReadonlyArray<string>; readonly data: string }
): { readonly shape: EventShape; readonly args: Facts.Tuple } | undefined => {
  const shape = d.events.get(lower(log.topics[0]))
  if (shape === undefined) return undefined
  const item = shape.item
  try {
    const decoded =
      log.data === "0x" && shape.plain.length === 0
        ? []
        : AbiParameters.decode(shape.plain, log.data as `0x${string}`, { checksumAddress: false })
    const count = shape.indexed.length
    if (log.topics.length < count + 1) throw new Error("missing topic")
    // Each topic is one 32-byte word: a shorter or longer one would shift the others' values when read as one list.
    for (let k = 1; k <= count; k++) if (log.topics[k]!.length !== 66) throw new Error("a topic is not 32 bytes")
    const topics =
      count === 0
        ? []
        : AbiParameters.decode(
            shape.indexed,
            `0x${
              count === 1
                ? log.topics[1]!.slice(2)
                : log.topics
                    .slice(1, count + 1)
                    .map((t) => t.slice(2))
                    .join("")
            }`,
            { checksumAddress: false }
          )
    let topic = 0
    let data = 0
    const values = item.inputs.map((p, i) => {
      if (p.indexed === true) {
        const at = topic++
        // Dynamic indexed values are stored as their hash: kept as the 32 bytes.
        if (shape.hashed[i] === true) return log.topics[at + 1]!.toLowerCase()
        return toFact(p, (topics as ReadonlyArray<unknown>)[at])
      }
      return toFact(p, (decoded as ReadonlyArray<unknown>)[data++])
    })
    return { shape, args: { _tag: "Tuple", values, names: namesOf(item.inputs) } }
  } catch {
    return undefined
  }
}

/**
 * A call's input decoded with the function its selector names, and its output when given and decodable (a frame
 * that reverted returns revert data, not the function's outputs: it has none to decode).
 */
const decodeCall = (
  d: Decoders,
  input: string,
  output: string | undefined
):
  | {
      readonly item: Abi.FunctionItem
      readonly signature: string
      readonly args: Facts.Tuple
      readonly output?: Facts.Tuple
    }
  | undefined => {
  const known = d.functions.get(lower(input.slice(0, 10)))
  if (known === undefined) return undefined
  const { item, signature } = known
  let args: Facts.Tuple
  try {
    const body = `0x${input.slice(10)}` as `0x${string}`
    args =
      item.inputs.length === 0
        ? tuple([], [])
        : tuple(item.inputs, AbiParameters.decode(oxParameters(item.inputs), body, { checksumAddress: false }))
  } catch {
    return undefined
  }
  const outputs = item.outputs ?? []
  if (output === undefined || output === "0x" || outputs.length === 0) return { item, signature, args }
  try {
    const out = tuple(
      outputs,
      AbiParameters.decode(oxParameters(outputs), output as `0x${string}`, { checksumAddress: false })
    )
    return { item, signature, args, output: out }
  } catch {
    return { item, signature, args }
  }
}

/**
 * The facts of `blocks` (in chain order) for the contracts registered on their chain: with `reads`, only the
 * occurrences it covers (what the rules to be evaluated read; default: every one).
 */
export const fromBlocks = (
  blocks: ReadonlyArray<BlockData>,
  contracts: ReadonlyArray<Contract>,
  options: {
    readonly blockRange: number
    readonly head?: number
    readonly groups?: Facts.Facts["groups"]
    readonly reads?: Reads.Reads
  }
): Facts.Facts => {
  const byAddress = new Map<string, Array<Decoders>>()
  const labels = new Map<string, Set<string>>()
  const reads = options.reads ?? Reads.everything
  for (const c of contracts) {
    const address = lower(c.address)
    byAddress.set(address, [...(byAddress.get(address) ?? []), decodersFor(c, reads)])
    labels.set(c.label, new Set([...(labels.get(c.label) ?? []), address]))
  }
  const transactions: Array<Facts.Transaction> = []
  for (const { block, receipts, traces } of blocks) {
    const receiptOf = new Map(receipts.map((r) => [lower(r.transactionHash), r]))
    block.transactions.forEach((t, i) => {
      transactions.push(transactionFacts(byAddress, block, t, receiptOf.get(lower(t.hash)), traces?.[i]))
    })
  }
  return {
    transactions,
    blockRange: options.blockRange,
    labels,
    ...(options.groups === undefined ? {} : { groups: options.groups }),
    ...(options.head === undefined ? {} : { head: options.head })
  }
}

/** The facts of one transaction: its fields, its frames and calls (from its trace when read), its events. */
const transactionFacts = (
  byAddress: ReadonlyMap<string, ReadonlyArray<Decoders>>,
  block: RpcBlock,
  t: RpcTransaction,
  receipt: RpcReceipt | undefined,
  trace: CallFrame | undefined
): Facts.Transaction => {
  const blockNumber = Number(big(block.number))
  const status = receipt === undefined ? true : big(receipt.status) === 1n
  const fields: Record<string, Facts.AbiValue | undefined> = {
    from: lower(t.from),
    to: t.to === null || t.to === undefined ? undefined : lower(t.to),
    value: big(t.value),
    hash: lower(t.hash),
    nonce: big(t.nonce),
    input: lower(t.input),
    status,
    gasPrice: t.gasPrice === undefined ? undefined : big(t.gasPrice),
    gasLimit: big(t.gas),
    gasUsed: receipt === undefined ? undefined : big(receipt.gasUsed),
    maxFeePerGas: t.maxFeePerGas === undefined ? undefined : big(t.maxFeePerGas),
    maxPriorityFeePerGas: t.maxPriorityFeePerGas === undefined ? undefined : big(t.maxPriorityFeePerGas),
    blockNumber: BigInt(blockNumber),
    txIndex: big(t.transactionIndex),
    timestamp: big(block.timestamp)
  }
  const traced = trace === undefined ? undefined : framesOf(byAddress, trace)
  const calls: Array<Facts.CallOccurrence> = traced === undefined ? [] : [...traced.calls]
  if (traced === undefined && t.to !== null && t.to !== undefined) {
    for (const d of byAddress.get(lower(t.to)) ?? []) {
      const decoded = decodeCall(d, lower(t.input), undefined)
      if (decoded === undefined) continue
      calls.push({
        contract: d.label,
        name: decoded.item.name,
        signature: decoded.signature,
        args: decoded.args,
        frame: 0,
        reverted: !status,
        reentrant: false
      })
    }
  }
  const events: Array<Facts.EventOccurrence> = []
  ;(receipt?.logs ?? []).forEach((log, k) => {
    for (const d of byAddress.get(lower(log.address)) ?? []) {
      const decoded = decodeLog(d, log)
      if (decoded === undefined) continue
      const frame = traced?.stood[k]?.frame
      events.push({
        contract: d.label,
        name: decoded.shape.item.name,
        signature: decoded.shape.signature,
        args: decoded.args,
        address: lower(log.address),
        logIndex: Number(big(log.logIndex)),
        ...(frame === undefined ? {} : { frame })
      })
    }
  })
  return {
    hash: lower(t.hash),
    blockNumber,
    txIndex: Number(big(t.transactionIndex)),
    fields,
    ...(traced === undefined ? {} : { frames: traced.frames }),
    events,
    calls
  }
}

/**
 * A transaction's frames in execution order (pre-order) with the calls to registered contracts they make (marked
 * reentrant when a frame calls a contract whose call is still open), and the logs that stood (in a frame that did
 * not revert, nor any frame above it) in log order with the frame that emitted each.
 */
const framesOf = (byAddress: ReadonlyMap<string, ReadonlyArray<Decoders>>, trace: CallFrame) => {
  const frames: Array<Facts.Frame> = []
  const calls: Array<Facts.CallOccurrence> = []
  const stood: Array<{ readonly frame: number; readonly order: number }> = []
  /** The frames open, each with its calls to registered contracts (one per label its address is registered under). */
  const open: Array<{ readonly to: string; readonly calls: ReadonlyArray<number> }> = []
  const reentered = new Set<number>()
  const walk = (f: CallFrame, depth: number, reverted: boolean) => {
    const index = frames.length
    const to = lower(f.to)
    const input = lower(f.input ?? "0x")
    frames.push({
      index,
      depth,
      fields: {
        from: lower(f.from),
        to: f.to === undefined ? undefined : to,
        value: big(f.value),
        type: f.type,
        gas: big(f.gas),
        gasUsed: big(f.gasUsed),
        input,
        output: f.output === undefined ? undefined : lower(f.output),
        error: f.error,
        depth: BigInt(depth),
        selector: input.length >= 10 ? input.slice(0, 10) : input
      }
    })
    const gone = reverted || f.error !== undefined
    for (const log of f.logs ?? []) if (!gone) stood.push({ frame: index, order: Number(log.index ?? stood.length) })
    if (f.type !== "STATICCALL") for (const o of open) if (o.to === to) for (const c of o.calls) reentered.add(c)
    const made: Array<number> = []
    for (const d of byAddress.get(to) ?? []) {
      const decoded = decodeCall(d, input, f.error === undefined ? f.output : undefined)
      if (decoded === undefined) continue
      made.push(calls.length)
      calls.push({
        contract: d.label,
        name: decoded.item.name,
        signature: decoded.signature,
        args: decoded.args,
        ...(decoded.output === undefined ? {} : { output: decoded.output }),
        frame: index,
        reverted: f.error !== undefined,
        reentrant: false
      })
    }
    open.push({ to, calls: made })
    for (const child of f.calls ?? []) walk(child, depth + 1, gone)
    open.pop()
  }
  walk(trace, 0, false)
  stood.sort((a, b) => a.order - b.order)
  return {
    frames,
    calls: calls.map((c, i) => (reentered.has(i) ? { ...c, reentrant: true } : c)),
    stood
  }
}
