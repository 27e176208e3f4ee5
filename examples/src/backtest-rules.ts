/**
 * Monitoring inside a host service, without a server or a database: watch rules checked against the host's own
 * contract ABIs and run over a range of a node's blocks by the core's scan, through the JSON-RPC reader, behind
 * one Promise function. Each expression is a rule of its own here (the `rule` of a match is its index); a bot
 * AND-s its expressions into one rule, so to see what a bot would alert on, pass its expressions joined by `&&`.
 * Run: `node examples/dist/backtest-rules.js <rpc-url> <contracts.json> <from> <to> <expression>...` after
 * `npm run build` (contracts.json: `[{chainId, contractAddress, label, ABI}]`, as `POST /v1/contracts` takes).
 */
import { readFileSync } from "node:fs"
import { EvmRpc } from "@vigil/adapter-evm"
import { Abi, ChainData, Rules, Scan } from "@vigil/core"
import { Effect, Schema } from "effect"

/** A contract the rules may name, by its label. */
export interface Watched {
  readonly label: string
  readonly address: string
  /** The JSON ABI, as compiled or fetched. */
  readonly abi: ReadonlyArray<unknown>
}

/** One match: the rule's index, the transactions it bound, and its decoded evidence. */
export interface Match {
  readonly rule: number
  readonly transactions: Readonly<Record<string, string>>
  readonly evidence: Scan.Found["evidence"]
}

/**
 * The matches of each of `expressions`, as separate rules, over blocks `from` to `to` of the node at `rpcUrl`; rejects with the first
 * problem of an expression that does not check (with its character offset), or when the node fails.
 */
export const backtest = async (options: {
  readonly rpcUrl: string
  readonly chainId: number
  readonly contracts: ReadonlyArray<Watched>
  readonly expressions: ReadonlyArray<string>
  readonly from: number
  readonly to: number
  /** The most blocks between a rule's first and last transaction (a bot's `topLevelTxBlockRange`). */
  readonly blockRange?: number
}): Promise<ReadonlyArray<Match>> => {
  const contracts = options.contracts.map((c) => ({
    label: c.label,
    address: c.address.toLowerCase(),
    abi: Schema.decodeUnknownSync(Abi.Abi)(c.abi)
  }))
  const rules = options.expressions.map((source, index): Scan.Rule => {
    const checked = Rules.Checker.check(source, { contracts, literalDefs: new Map() })
    if (!checked.ok) {
      const p = checked.problems[0]!
      throw new Error(`expression ${index + 1}, offset ${p.offset}: ${p.message}`)
    }
    return { index, expr: checked.rule.expr, needsTraces: checked.rule.needsTraces }
  })
  const matches: Array<Match> = []
  await Effect.runPromise(
    Scan.scan({
      chainId: options.chainId,
      blocks: Array.from({ length: options.to - options.from + 1 }, (_, i) => options.from + i),
      contracts,
      rules,
      blockRange: options.blockRange ?? 100,
      onMatch: (found) =>
        Effect.sync(() =>
          matches.push({
            rule: found.rule,
            transactions: Object.fromEntries(
              Object.entries(found.evidence.transactions).map(([name, t]) => [name, t.hash])
            ),
            evidence: found.evidence
          })
        )
    }).pipe(
      Effect.provideService(ChainData.ChainData, EvmRpc.make({ urls: new Map([[options.chainId, options.rpcUrl]]) }))
    )
  )
  return matches
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [rpcUrl = "http://127.0.0.1:8545", file = "contracts.json", from = "0", to = "0", ...expressions] =
    process.argv.slice(2)
  const entries = JSON.parse(readFileSync(file, "utf8")) as ReadonlyArray<{
    chainId: number
    contractAddress: string
    label: string
    ABI: ReadonlyArray<unknown>
  }>
  const matches = await backtest({
    rpcUrl,
    chainId: entries[0]?.chainId ?? 1,
    contracts: entries.map((e) => ({ label: e.label, address: e.contractAddress, abi: e.ABI })),
    expressions,
    from: Number(from),
    to: Number(to)
  })
  for (const m of matches) console.log(JSON.stringify({ rule: m.rule, transactions: m.transactions }))
}
