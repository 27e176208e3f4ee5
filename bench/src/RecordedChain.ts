/**
 * A chain recorded from a node, served again over JSON-RPC on loopback: each block with its transactions, its
 * receipts and its call traces (`callTracer` with logs, one transaction at a time, as geth answers
 * `debug_traceBlockByNumber`), the answers kept as text so serving one costs next to nothing. Only the blocks up to
 * `reveal`'s number exist for a client; any other method is passed on to the node the chain was recorded from.
 */
import { createServer } from "node:http"

/** A recorded chain being served. */
export interface RecordedChain {
  readonly url: string
  /** Makes the blocks up to `head` visible (the head a client sees). */
  readonly reveal: (head: number) => void
  readonly stop: () => Promise<void>
}

interface Request {
  readonly id: unknown
  readonly method: string
  readonly params?: ReadonlyArray<unknown>
}

const hex = (n: number) => `0x${n.toString(16)}`

/** Posts one JSON-RPC request body to `url`; the answer's text. */
const post = async (url: string, body: string) =>
  (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })).text()

/** Reads blocks `0..last` from the node at `url` and serves them; at first the blocks up to `last` are revealed. */
export const record = async (url: string, last: number): Promise<RecordedChain> => {
  const call = async <A>(method: string, params: ReadonlyArray<unknown>) => {
    const answer = JSON.parse(await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }))) as {
      result?: A
      error?: { message: string }
    }
    if (answer.error !== undefined || answer.result === undefined)
      throw new Error(`${method}: ${answer.error?.message ?? "no result"}`)
    return answer.result
  }
  const answers = new Map<string, string>()
  for (let n = 0; n <= last; n++) {
    const full = await call<{ transactions: ReadonlyArray<{ hash: string }> }>("eth_getBlockByNumber", [hex(n), true])
    answers.set(`eth_getBlockByNumber:${n}:true`, JSON.stringify(full))
    answers.set(
      `eth_getBlockByNumber:${n}:false`,
      JSON.stringify({ ...full, transactions: full.transactions.map((t) => t.hash) })
    )
    answers.set(`eth_getBlockReceipts:${n}`, JSON.stringify(await call("eth_getBlockReceipts", [hex(n)])))
    const traces: Array<unknown> = []
    for (const tx of full.transactions)
      traces.push({
        txHash: tx.hash,
        result: await call("debug_traceTransaction", [
          tx.hash,
          { tracer: "callTracer", tracerConfig: { withLog: true } }
        ])
      })
    answers.set(`debug_traceBlockByNumber:${n}`, JSON.stringify(traces))
  }
  let head = last

  /** The number a block parameter names, if it is one of the revealed blocks. */
  const numberOf = (tag: unknown): number | undefined => {
    const n =
      tag === "latest" || tag === "safe" || tag === "finalized" ? head : typeof tag === "string" ? Number(tag) : NaN
    return Number.isInteger(n) && n >= 0 && n <= head ? n : undefined
  }
  /** The recorded answer's text (its result), or undefined when the request is not one the recording holds. */
  const recorded = (r: Request): string | undefined => {
    const p = r.params ?? []
    switch (r.method) {
      case "eth_blockNumber":
        return JSON.stringify(hex(head))
      case "eth_getBlockByNumber": {
        const n = numberOf(p[0])
        return n === undefined ? "null" : answers.get(`eth_getBlockByNumber:${n}:${p[1] === true}`)
      }
      case "eth_getBlockReceipts":
      case "debug_traceBlockByNumber": {
        const n = numberOf(p[0])
        return n === undefined ? "null" : answers.get(`${r.method}:${n}`)
      }
      default:
        return undefined
    }
  }
  const answer = async (r: Request) => {
    const result = recorded(r)
    if (result !== undefined) return `{"jsonrpc":"2.0","id":${JSON.stringify(r.id)},"result":${result}}`
    return post(url, JSON.stringify(r))
  }

  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c: Buffer) => (body += c))
    req.on("end", () => {
      void (async () => {
        const parsed = JSON.parse(body) as Request | ReadonlyArray<Request>
        const text = Array.isArray(parsed)
          ? `[${(await Promise.all(parsed.map(answer))).join(",")}]`
          : await answer(parsed as Request)
        res.writeHead(200, { "content-type": "application/json" }).end(text)
      })().catch((e: unknown) => res.writeHead(500).end(String(e)))
    })
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    reveal: (n) => {
      head = n
    },
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}
