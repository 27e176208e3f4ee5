/**
 * ABIs fetched for contracts registered without one: local servers in Sourcify's v2 layout and in an Etherscan-
 * compatible layout stand in for the services, and an EIP-1967 proxy deployed on anvil is resolved to its
 * implementation's ABI through the node.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { AbiSources, EvmRpc } from "@vigil/adapter-evm"
import { MemoryContractStore } from "@vigil/adapter-memory"
import { Abi, AbiSource, ChainData, Contracts } from "@vigil/core"
import { Anvil, Solidity } from "@vigil/testkit"
import { Effect, Layer } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const fixtures = Solidity.fixtures()
let node: Anvil.Anvil
let token: `0x${string}`
let router: `0x${string}`
let proxy: `0x${string}`
const unknown = "0x00000000000000000000000000000000000000aa"
const broken = "0x00000000000000000000000000000000000000bb"
const limited = "0x00000000000000000000000000000000000000cc"
const nullResult = "0x00000000000000000000000000000000000000dd"

/** A local server answering GETs from a table of paths (with query) to [status, body]. */
const serve = async (
  answer: (url: URL) => readonly [number, unknown]
): Promise<{ readonly url: string; readonly seen: Array<string>; readonly close: () => Promise<void> }> => {
  const seen: Array<string> = []
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    seen.push(url.pathname + url.search)
    const [status, body] = answer(url)
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

let sourcify: Awaited<ReturnType<typeof serve>>
let etherscan: Awaited<ReturnType<typeof serve>>

beforeAll(async () => {
  node = await Anvil.start()
  token = (await node.deploy(fixtures.Token, [10n ** 30n])).address
  router = (await node.deploy(fixtures.Router)).address
  proxy = (await node.deploy(fixtures.Proxy, [token])).address
  // Sourcify knows the token (so the proxy's implementation) and an address whose ABI is malformed.
  sourcify = await serve((url) => {
    const m = /^\/server\/v2\/contract\/(\d+)\/(0x[0-9a-fA-F]{40})$/.exec(url.pathname)
    if (m === null || url.searchParams.get("fields") !== "abi") return [400, { message: "bad request" }]
    const address = m[2]!.toLowerCase()
    if (address === token.toLowerCase()) return [200, { abi: fixtures.Token.abi, match: "exact_match" }]
    if (address === broken) return [200, { abi: [{ type: "function", inputs: [] }] }]
    return [404, { customCode: "not_found", message: "Contract not found" }]
  })
  // The explorer knows the router and the proxy itself, and answers in every shape explorers use.
  etherscan = await serve((url) => {
    const q = url.searchParams
    if (q.get("module") !== "contract" || q.get("action") !== "getabi" || q.get("apikey") !== "K")
      return [200, { status: "0", message: "NOTOK", result: "Invalid API Key" }]
    const address = (q.get("address") ?? "").toLowerCase()
    if (address === router.toLowerCase())
      return [200, { status: "1", message: "OK", result: JSON.stringify(fixtures.Router.abi) }]
    if (address === proxy.toLowerCase())
      return [200, { status: "1", message: "OK", result: JSON.stringify(fixtures.Proxy.abi) }]
    if (address === limited) return [200, { status: "0", message: "NOTOK", result: "Max rate limit reached" }]
    if (address === nullResult) return [200, { status: "0", message: "NOTOK", result: null }]
    return [200, { status: "0", message: "NOTOK", result: "Contract source code not verified" }]
  })
}, 60_000)

afterAll(async () => {
  await Promise.all([node?.stop(), sourcify?.close(), etherscan?.close()])
})

const resolve = (address: string, options: Partial<AbiSources.Options> = {}, chains = true) =>
  Effect.runPromise(
    Effect.result(AbiSource.resolve(31337, address)).pipe(
      Effect.provideService(
        AbiSource.AbiSource,
        AbiSources.make({
          sourcifyUrl: `${sourcify.url}/server`,
          etherscanUrl: `${etherscan.url}/v2/api`,
          etherscanApiKey: "K",
          ...options
        })
      ),
      Effect.provideService(
        ChainData.ContractState,
        EvmRpc.make({ urls: new Map(chains ? [[31337, node.url]] : []), retries: 0 })
      )
    )
  )

const names = (abi: Abi.Abi) =>
  abi.flatMap((i) => (i.type === "function" || i.type === "event" ? [`${i.type} ${Abi.signature(i)}`] : [])).sort()

describe("ABIs from verified sources", () => {
  it("takes Sourcify's verified ABI first", async () => {
    const r = await resolve(token)
    assert.strictEqual(r._tag, "Success")
    if (r._tag !== "Success") return
    assert.strictEqual(r.success.source, "sourcify")
    assert.isUndefined(r.success.proxy)
    assert.include(names(r.success.abi), "event Transfer(address,address,uint256)")
  })

  it("falls through to the explorer (its ABI a JSON string) when Sourcify has none", async () => {
    const r = await resolve(router)
    assert.strictEqual(r._tag === "Success" && r.success.source, "etherscan")
    if (r._tag === "Success") assert.include(names(r.success.abi), "function route(address,address,uint256)")
  })

  it("gives an EIP-1967 proxy its implementation's ABI with the proxy's own entries, and says so", async () => {
    const r = await resolve(proxy)
    assert.strictEqual(r._tag, "Success")
    if (r._tag !== "Success") return
    assert.deepStrictEqual(r.success.proxy, { standard: "EIP-1967", implementation: token.toLowerCase() })
    assert.strictEqual(r.success.source, "sourcify")
    const all = names(r.success.abi)
    assert.include(all, "function transferFrom(address,address,uint256)")
    assert.include(all, "event Upgraded(address)", "the proxy's own event, from the explorer")
  })

  it("names everything it tried when no ABI is anywhere", async () => {
    const r = await resolve(unknown)
    assert.strictEqual(r._tag, "Failure")
    if (r._tag !== "Failure") return
    assert.deepStrictEqual(r.failure.tried, [
      "EIP-1967 proxy check: not a proxy",
      "sourcify (contract): not verified",
      "etherscan (contract): Contract source code not verified"
    ])
    assert.match(r.failure.message, /^no verified ABI for 0x0+aa on chain 31337: /)
  })

  it("notes a service that cannot answer, a malformed ABI, a rate limit and a null result, and goes on", async () => {
    const down = await resolve(router, { sourcifyUrl: "http://127.0.0.1:9/server" })
    assert.strictEqual(down._tag === "Success" && down.success.source, "etherscan")
    const malformed = await resolve(broken)
    assert.strictEqual(malformed._tag, "Failure")
    if (malformed._tag === "Failure") {
      assert.match(malformed.failure.tried[1]!, /^sourcify \(contract\): its ABI is not a valid ABI/)
    }
    const rate = await resolve(limited)
    if (rate._tag === "Failure")
      assert.strictEqual(rate.failure.tried[2], "etherscan (contract): Max rate limit reached")
    else assert.fail("a rate limit is not an ABI")
    const nothing = await resolve(nullResult)
    if (nothing._tag === "Failure") assert.strictEqual(nothing.failure.tried[2], "etherscan (contract): NOTOK")
    else assert.fail("a null result is not an ABI")
    const badKey = await resolve(router, { etherscanApiKey: "wrong", sourcifyUrl: "" })
    if (badKey._tag === "Failure") assert.strictEqual(badKey.failure.tried[1], "etherscan (contract): Invalid API Key")
    else assert.fail("a refused key is not an ABI")
  })

  it("still resolves without an RPC URL for the chain, noting that proxies could not be checked", async () => {
    const r = await resolve(token, {}, false)
    assert.strictEqual(r._tag === "Success" && r.success.source, "sourcify")
    const none = await resolve(unknown, {}, false)
    if (none._tag === "Failure") assert.match(none.failure.tried[0]!, /^EIP-1967 proxy check: no RPC URL/)
    else assert.fail("no ABI")
  })

  it("asks Sourcify's v2 path and the explorer's getabi with the chain, address and key", () => {
    assert.isTrue(sourcify.seen.some((p) => p === `/server/v2/contract/31337/${token}?fields=abi`))
    assert.isTrue(
      etherscan.seen.some(
        (p) =>
          p === `/v2/api?chainid=31337&module=contract&action=getabi&address=${router}&apikey=K` ||
          p === `/v2/api?chainid=31337&module=contract&action=getabi&address=${router.toLowerCase()}&apikey=K`
      )
    )
  })
})

describe("registering contracts", () => {
  const services = () =>
    Contracts.Contracts.layer.pipe(
      Layer.provide(MemoryContractStore.layer),
      Layer.provide(
        Layer.succeed(AbiSource.AbiSource)(
          AbiSources.make({
            sourcifyUrl: `${sourcify.url}/server`,
            etherscanUrl: `${etherscan.url}/v2/api`,
            etherscanApiKey: "K"
          })
        )
      ),
      Layer.provide(EvmRpc.layer({ urls: new Map([[31337, node.url]]), retries: 0 }))
    )
  const run = <A, E>(f: (contracts: Contracts.Contracts["Service"]) => Effect.Effect<A, E>) =>
    Effect.runPromise(Effect.flatMap(Effect.service(Contracts.Contracts), f).pipe(Effect.provide(services())))

  it("stores a supplied ABI (an array or a JSON string) or a fetched one, and the proxy it resolved", async () => {
    const [supplied, text, fetched, proxied, listed] = await run((c) =>
      Effect.gen(function* () {
        return [
          yield* c.register("key-a", {
            chainId: 31337,
            contractAddress: router,
            label: "Router",
            ABI: fixtures.Router.abi
          }),
          yield* c.register("key-a", {
            chainId: 1,
            contractAddress: router,
            label: "Router",
            ABI: JSON.stringify(fixtures.Router.abi)
          }),
          yield* c.register("key-a", {
            chainId: 31337,
            contractAddress: token.toUpperCase().replace("0X", "0x"),
            label: "Token"
          }),
          yield* c.register("key-a", { chainId: 31337, contractAddress: proxy, label: "Vault" }),
          yield* c.list("key-a", 31337)
        ] as const
      })
    )
    assert.strictEqual(supplied.abiSource, "supplied")
    assert.strictEqual(text.chainId, 1)
    assert.strictEqual(fetched.abiSource, "sourcify")
    assert.strictEqual(fetched.address, token.toLowerCase())
    assert.match(fetched.id, /^ct_\d+_[a-z0-9]{9}$/)
    assert.deepStrictEqual(proxied.proxy, { standard: "EIP-1967", implementation: token.toLowerCase() })
    assert.deepStrictEqual(
      listed.map((c) => c.label),
      ["Router", "Token", "Vault"]
    )
  })

  it("refuses bad fields by name, a taken label, and an address with no ABI anywhere", async () => {
    const failures = await run((c) =>
      Effect.all(
        [
          c.register("key-a", { chainId: 0, contractAddress: router, label: "A", ABI: fixtures.Router.abi }),
          c.register("key-a", { chainId: 1, contractAddress: "0x123", label: "A", ABI: fixtures.Router.abi }),
          c.register("key-a", { chainId: 1, contractAddress: router, label: "tx1", ABI: fixtures.Router.abi }),
          c.register("key-a", { chainId: 1, contractAddress: router, label: "A", ABI: [{ type: "function" }] }),
          c.register("key-a", { chainId: 1, contractAddress: router, label: "A", ABI: [{ type: "constructor" }] }),
          Effect.andThen(
            c.register("key-a", { chainId: 1, contractAddress: router, label: "A", ABI: fixtures.Router.abi }),
            c.register("key-a", { chainId: 1, contractAddress: token, label: "A", ABI: fixtures.Token.abi })
          ),
          c.register("key-a", { chainId: 31337, contractAddress: unknown, label: "Nothing" }),
          c.get("key-b", "ct_1_aaaaaaaaa"),
          c.remove("key-b", "ct_1_aaaaaaaaa")
        ].map((e) => Effect.flip(e as Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>))
      )
    )
    const shown = failures.map((f) => ("field" in f ? `${f._tag} ${String(f.field)}` : f._tag))
    assert.deepStrictEqual(shown, [
      "InvalidContract chainId",
      "InvalidContract contractAddress",
      "InvalidContract label",
      "InvalidContract ABI",
      "InvalidContract ABI",
      "ContractLabelTaken",
      "AbiNotFound",
      "ContractNotFound",
      "ContractNotFound"
    ])
    assert.match(failures[6]!.message, /sourcify \(contract\): not verified; etherscan \(contract\)/)
    assert.strictEqual(failures[5]!.message, "the label A is already used on chain 1")
  })
})
