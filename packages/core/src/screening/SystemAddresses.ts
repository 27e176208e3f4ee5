/**
 * System addresses: addresses no one holds a key to. The zero address (the `from` of every mint and the `to` of
 * many burns), the well-known burn addresses, the precompiled contracts and the protocol's own system accounts.
 * Lists name them because their feeds record mints, burns and freezes at them, not a holder: screening answers
 * what they are instead of a list's verdict, and counterparty exposure never counts them as counterparties.
 * The one place the set is written down; docs/screening.md lists it from here.
 */

/** What a system address is. */
export interface SystemAddress {
  /** Normalized form (EVM lowercase; other families as written). */
  readonly address: string
  readonly name: string
  /** `burn` (tokens sent there are destroyed), `precompile` (code built into the protocol), `system` (protocol account). */
  readonly kind: "burn" | "precompile" | "system"
}

const evm = (suffix: string) => `0x${suffix.toLowerCase().padStart(40, "0")}`

/** Ethereum's precompiles, 0x01 to 0x11 (ecrecover to the BLS12-381 operations added in Prague). */
const precompileNames = [
  "ecrecover",
  "sha256",
  "ripemd160",
  "identity",
  "modexp",
  "ecAdd (alt_bn128)",
  "ecMul (alt_bn128)",
  "ecPairing (alt_bn128)",
  "blake2f",
  "point evaluation (KZG)",
  "BLS12-381 G1 add",
  "BLS12-381 G1 multi-scalar multiplication",
  "BLS12-381 G2 add",
  "BLS12-381 G2 multi-scalar multiplication",
  "BLS12-381 pairing",
  "BLS12-381 map field to G1",
  "BLS12-381 map field to G2"
]

/** Every system address, in the order docs/screening.md lists them. */
export const all: ReadonlyArray<SystemAddress> = [
  { address: evm("0"), name: "Zero address (mints come from it, many burns go to it)", kind: "burn" },
  { address: evm("dead"), name: "Burn address 0x…dEaD", kind: "burn" },
  { address: "0xdead000000000000000042069420694206942069", name: "Burn address 0xdEAD…4206942069", kind: "burn" },
  ...precompileNames.map((name, i): SystemAddress => ({
    address: evm((i + 1).toString(16)),
    name: `Precompile ${name}`,
    kind: "precompile"
  })),
  {
    address: "0xfffffffffffffffffffffffffffffffffffffffe",
    name: "Protocol system account (calls the system contracts at each block)",
    kind: "system"
  },
  { address: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", name: "TRON zero address", kind: "burn" },
  { address: "1111111111111111111114oLvT2", name: "Bitcoin burn address (hash of zero)", kind: "burn" },
  { address: "1BitcoinEaterAddressDontSendf59kuE", name: "Bitcoin Eater burn address", kind: "burn" }
]

const byAddress = new Map(all.map((s) => [s.address, s]))

/** The system address `normalized` is, if it is one. */
export const of = (normalized: string): SystemAddress | undefined => byAddress.get(normalized)

/** The entity a screening answer gives a system address. */
export const entity = (s: SystemAddress) => ({ name: s.name, type: "system", category: s.kind })

/** What an answer says of a system address: no one holds its key, and what the lists naming it record. */
export const explanation = (s: SystemAddress, lists: ReadonlyArray<string>) =>
  `${s.address} is a system address (${s.name}): no one holds its key, so it is nobody's wallet and anything sent to it cannot be recovered.${
    lists.length === 0
      ? ""
      : ` The entries that name it (${lists.join(", ")}) record mints, burns or freezes at it, not a holder, so they are not scored.`
  }`
