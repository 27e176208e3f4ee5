/** The 18 supported networks and detection of an address's network from its format, with full checksum validation. */
import { Schema } from "effect"
import * as AddressFormats from "./AddressFormats.ts"
import * as BoundedMemo from "./BoundedMemo.ts"

/** The EVM networks (Avalanche means its C-Chain): one address format, valid on all of them. */
const evmNetworks = [
  "ethereum",
  "avalanche",
  "polygon",
  "arbitrum",
  "optimism",
  "base",
  "bsc",
  "mantle",
  "linea",
  "manta",
  "blast",
  "flare",
  "sonic"
] as const

/** Every network Vigil screens (18), by the lowercase id used on the wire. */
export const Network = Schema.Literals([...evmNetworks, "bitcoin", "solana", "tron", "dogecoin", "ton"])

/** A network id. */
export type Network = typeof Network.Type

/** Address families: networks whose addresses share one format. */
export const Family = Schema.Literals(["evm", "bitcoin", "tron", "solana", "ton", "dogecoin"])

/** An address family. */
export type Family = typeof Family.Type

/** The networks of each family. */
export const networksOf: { readonly [F in Family]: ReadonlyArray<Network> } = {
  evm: evmNetworks,
  bitcoin: ["bitcoin"],
  tron: ["tron"],
  solana: ["solana"],
  ton: ["ton"],
  dogecoin: ["dogecoin"]
}

/** The family a network belongs to. */
export const familyOf = (network: Network): Family =>
  (Object.keys(networksOf) as Array<Family>).find((family) => networksOf[family].includes(network))!

/** A valid address: its family, every network it is valid on, and the canonical form used as a lookup key. */
export interface Valid {
  readonly address: string
  readonly valid: true
  readonly family: Family
  readonly networks: ReadonlyArray<Network>
  /** Canonical form: EVM lowercase; bech32 lowercase; TON raw `workchain:hex`; others as given. */
  readonly normalized: string
  /** The address's kind within its family, e.g. `p2pkh`, `p2wsh`, `eip55`, `bounceable`. */
  readonly format: string
  /** Worth telling the sender, e.g. an EVM mixed-case form whose EIP-55 checksum does not match. */
  readonly warning?: string
}

/** An address that is not valid (on the requested network, when one was named), and why. */
export interface Invalid {
  readonly address: string
  readonly valid: false
  readonly reason: string
}

/** The outcome of {@link detect}. */
export type Detection = Valid | Invalid

/**
 * Classifications of recent inputs: verifying a checksum costs up to about 15 µs (Keccak-256 for EIP-55), and a
 * busy server sees the same addresses again and again. Classification is a pure function of the text, so a
 * remembered answer is always the answer. Inputs longer than any address are not remembered.
 */
const recent = BoundedMemo.make<string, AddressFormats.Classified>(4096)

const classify = (address: string) =>
  address.length <= 128
    ? recent.through(address, () => AddressFormats.classify(address))
    : AddressFormats.classify(address)

/**
 * Detects the network(s) of `address` from its format and validates its checksum. With `chain` (a network id,
 * or `auto` for none), the address must be valid on that network, and `networks` is narrowed to it.
 * The input is taken as given: surrounding whitespace makes it invalid rather than being trimmed silently.
 */
export const detect = (address: string, chain: Network | "auto" = "auto"): Detection => {
  const found = classify(address)
  if (!found.valid) return { address, valid: false, reason: found.reason }
  const networks = networksOf[found.family]
  const valid: Valid = {
    address,
    valid: true,
    family: found.family,
    networks,
    normalized: found.normalized,
    format: found.format,
    ...(found.warning === undefined ? {} : { warning: found.warning })
  }
  if (chain === "auto") return valid
  if (!networks.includes(chain)) {
    return {
      address,
      valid: false,
      reason: `a valid ${found.family} address (${found.format}), not a ${chain} address`
    }
  }
  return { ...valid, networks: [chain] }
}

/** The warning of an EVM mixed-case form whose case is not its EIP-55 checksum (it is screened all the same). */
export const eip55Mismatch = AddressFormats.eip55Mismatch

/** True when `value` is one of the network ids. */
export const isNetwork = Schema.is(Network)
