/**
 * A registered contract, declared once: as stored (with its key, its lower-case address and the ABI rules are
 * checked and decoded with), as the API shows it (`View`), and what a client sends to register one (`Request`).
 * The HTTP contract and `/openapi.json` are made from these.
 */
import { Schema } from "effect"
import { Instant } from "../../kernel/index.ts"
import * as Abi from "../rules/Abi.ts"

/** For an EIP-1967 proxy registered without an ABI: the implementation whose ABI it was given. */
const Proxy = Schema.Struct({ standard: Schema.Literal("EIP-1967"), implementation: Schema.String }).annotate({
  description: "Present when the address is a proxy and the ABI is its implementation's"
})

const AbiSourceName = Schema.String.annotate({
  description: "supplied, sourcify or etherscan",
  examples: ["sourcify"]
})

/** A registered contract, as stored. */
export const Contract = Schema.Struct({
  /** `ct_<epoch ms>_<9 lowercase alphanumerics>`. */
  id: Schema.String,
  /** The API key (its id) that owns it. */
  keyId: Schema.String,
  chainId: Schema.Int,
  /** Lower-case 0x address. */
  address: Schema.String,
  label: Schema.String,
  abi: Abi.Abi,
  /** Where the ABI came from: `supplied`, or the verified-source service that gave it. */
  abiSource: AbiSourceName,
  proxy: Schema.optionalKey(Proxy),
  /** What the token's `decimals()` answered when it was registered, when its ABI has one and its chain a node. */
  decimals: Schema.optionalKey(Schema.Int),
  /** ISO 8601 instant of registration. */
  created: Instant.Timestamp
})
export interface Contract extends Schema.Schema.Type<typeof Contract> {}

/** A registered contract as the API shows it. */
export const View = Schema.Struct({
  id: Schema.String.annotate({ description: "ct_<epoch ms>_<9 lowercase alphanumerics>" }),
  chainId: Schema.Int,
  contractAddress: Schema.String.annotate({ description: "Lower-case" }),
  label: Schema.String,
  ABI: Abi.Abi.annotate({ description: "The ABI's entries rules are checked and decoded with" }),
  abiSource: AbiSourceName,
  proxy: Schema.optionalKey(Proxy),
  decimals: Schema.optionalKey(
    Schema.Int.annotate({
      description:
        "A token's decimals, as its decimals() answered through the chain's node when it was registered (present when the ABI has decimals() and the node answered 0-255): how its amounts read in whole units"
    })
  ),
  created: Instant.Timestamp
}).annotate({ identifier: "Contract" })
export interface View extends Schema.Schema.Type<typeof View> {}

/** A stored contract as the API shows it. */
export const view = (c: Contract): View => ({
  id: c.id,
  chainId: c.chainId,
  contractAddress: c.address,
  label: c.label,
  ABI: c.abi,
  abiSource: c.abiSource,
  ...(c.proxy === undefined ? {} : { proxy: c.proxy }),
  ...(c.decimals === undefined ? {} : { decimals: c.decimals }),
  created: c.created
})

/** What a client sends to register a contract (spec §2.9); the service checks the values. */
export const Request = Schema.Struct({
  chainId: Schema.Int.annotate({ description: "The chain's numeric id", examples: [1] }),
  contractAddress: Schema.String.annotate({
    description: "EVM address (0x and 40 hex digits, any case)",
    examples: ["0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"]
  }),
  label: Schema.String.annotate({
    description: "The name rules use for it (`tx1.<label>.E.Transfer`): an identifier, unique per key and chain",
    examples: ["USDC"]
  }),
  ABI: Schema.optionalKey(
    Schema.Union([Schema.Array(Schema.Unknown), Schema.String]).annotate({
      description:
        "The contract's JSON ABI (functions and events), as an array or a JSON string. Omitted: a verified ABI is fetched (Sourcify, then an Etherscan-compatible explorer; an EIP-1967 proxy gets its implementation's)."
    })
  )
}).annotate({ identifier: "ContractRequest" })
export interface Request extends Schema.Schema.Type<typeof Request> {}
