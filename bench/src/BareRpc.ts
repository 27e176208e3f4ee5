/**
 * The floor of reading blocks from a node: the same JSON-RPC batches the reader sends (block and receipts, and
 * call traces when asked; `blocksPerBatch` blocks a batch, `inFlight` batches at once), parsed and dropped.
 */

/** Fetches the blocks; the number of transactions read. */
export const fetchBlocks = async (
  url: string,
  numbers: ReadonlyArray<number>,
  options: { readonly traces: boolean; readonly blocksPerBatch: number; readonly inFlight: number }
) => {
  let transactions = 0
  const batches: Array<ReadonlyArray<number>> = []
  for (let i = 0; i < numbers.length; i += options.blocksPerBatch)
    batches.push(numbers.slice(i, i + options.blocksPerBatch))
  const per = options.traces ? 3 : 2
  let next = 0
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++]!
      const body = batch.flatMap((n, i) => {
        const block = `0x${n.toString(16)}`
        return [
          { jsonrpc: "2.0", id: i * per, method: "eth_getBlockByNumber", params: [block, true] },
          { jsonrpc: "2.0", id: i * per + 1, method: "eth_getBlockReceipts", params: [block] },
          ...(options.traces
            ? [
                {
                  jsonrpc: "2.0",
                  id: i * per + 2,
                  method: "debug_traceBlockByNumber",
                  params: [block, { tracer: "callTracer", tracerConfig: { withLog: true } }]
                }
              ]
            : [])
        ]
      })
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const answers = (await response.json()) as Array<{ result: { transactions?: Array<unknown> } }>
      for (const a of answers) transactions += a.result.transactions?.length ?? 0
    }
  }
  await Promise.all(Array.from({ length: options.inFlight }, worker))
  return transactions
}
