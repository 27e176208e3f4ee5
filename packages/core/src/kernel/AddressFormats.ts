/** Format and checksum validation per address family, on audited libraries for every hash and encoding. */
import { keccak_256 } from "@noble/hashes/sha3.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { base58, base64, bech32, bech32m, createBase58check } from "@scure/base"
import crc16xmodem from "crc/calculators/crc16xmodem"

type Family = "evm" | "bitcoin" | "tron" | "solana" | "ton" | "dogecoin"

/** What classification found: a family with canonical form and kind, or the reason it is not an address. */
export type Classified =
  | {
      readonly valid: true
      readonly family: Family
      readonly normalized: string
      readonly format: string
      /** Something about the input worth telling its sender, e.g. a checksum that does not match. */
      readonly warning?: string
    }
  | { readonly valid: false; readonly reason: string }

const ok = (family: Family, normalized: string, format: string): Classified => ({
  valid: true,
  family,
  normalized,
  format
})
const no = (reason: string): Classified => ({ valid: false, reason })

const HEX40 = /^[0-9a-fA-F]{40}$/

/** EIP-55: the case of each letter must match the keccak-256 of the lowercase hex. */
const eip55 = (lowerHex: string): string => {
  const hash = bytesToHex(keccak_256(utf8ToBytes(lowerHex)))
  let out = ""
  for (let i = 0; i < lowerHex.length; i++) {
    const c = lowerHex[i]!
    out += parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c
  }
  return out
}

/**
 * What a mixed-case EVM address whose case is not its EIP-55 checksum is answered with. EVM addresses are
 * case-insensitive, so it is screened (lowercased) like any other; the mismatch often means a mistyped
 * character, so the sender is told, without a "corrected" form that would only be the typo checksummed.
 */
export const eip55Mismatch =
  "the mixed-case form does not match its EIP-55 checksum: check the address for a typo (screened as written, case ignored)"

/** EVM: `0x` (any case) and 40 hex digits in any case; a mixed-case form is checked against EIP-55. */
const evm = (address: string): Classified => {
  const hex = address.slice(2)
  if (hex.length === 0) return no("nothing after the 0x prefix")
  if (!/^[0-9a-fA-F]*$/.test(hex)) return no(`non-hex character in an 0x address: "${hex.match(/[^0-9a-fA-F]/)![0]}"`)
  if (!HEX40.test(hex)) return no(`an EVM address has 40 hex characters after 0x, this has ${hex.length}`)
  const lower = hex.toLowerCase()
  if (hex === lower || hex === hex.toUpperCase()) return ok("evm", `0x${lower}`, "hex")
  if (hex !== eip55(lower)) {
    return { valid: true, family: "evm", normalized: `0x${lower}`, format: "hex", warning: eip55Mismatch }
  }
  return ok("evm", `0x${lower}`, "eip55")
}

const segwit = (address: string): Classified => {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) {
    return no("bech32 addresses must not mix upper and lower case")
  }
  const lower = address.toLowerCase()
  const hrp = lower.slice(0, lower.lastIndexOf("1"))
  if (hrp === "tb" || hrp === "bcrt")
    return no(`a Bitcoin ${hrp === "tb" ? "testnet" : "regtest"} address; only mainnet is screened`)
  if (hrp !== "bc") return no(`unknown bech32 prefix "${hrp}"`)
  const v0 = bech32.decodeUnsafe(lower, 90)
  const v1 = v0 === undefined ? bech32m.decodeUnsafe(lower, 90) : undefined
  const decoded = v0 ?? v1
  if (decoded === undefined) return no("bech32/bech32m checksum or character failure")
  const [version, ...data] = decoded.words
  if (version === undefined) return no("empty bech32 data section")
  if (version > 16) return no(`invalid witness version ${version}`)
  if (version === 0 && v0 === undefined) return no("witness version 0 must use bech32, not bech32m (BIP-350)")
  if (version !== 0 && v1 === undefined) return no(`witness version ${version} must use bech32m, not bech32 (BIP-350)`)
  const program = bech32.fromWordsUnsafe(data)
  if (program === undefined) return no("invalid padding in the witness program")
  const n = program.length
  if (n < 2 || n > 40) return no(`witness program of ${n} bytes (must be 2-40)`)
  if (version === 0 && n !== 20 && n !== 32) return no(`witness v0 program of ${n} bytes (must be 20 or 32)`)
  const format =
    version === 0 ? (n === 20 ? "p2wpkh" : "p2wsh") : version === 1 && n === 32 ? "p2tr" : `witness_v${version}`
  return ok("bitcoin", lower, format)
}

const base58check = createBase58check(sha256)

/** Version bytes of base58check addresses: mainnet ones we screen, and known others named in the reason. */
const versions: Record<number, { family: Family; format: string } | string> = {
  0x00: { family: "bitcoin", format: "p2pkh" },
  0x05: { family: "bitcoin", format: "p2sh" },
  0x41: { family: "tron", format: "base58" },
  0x1e: { family: "dogecoin", format: "p2pkh" },
  0x16: { family: "dogecoin", format: "p2sh" },
  0x6f: "a Bitcoin testnet P2PKH address; only mainnet is screened",
  0xc4: "a Bitcoin or Dogecoin testnet P2SH address; only mainnet is screened",
  0x71: "a Dogecoin testnet address; only mainnet is screened",
  0x30: "a Litecoin address, not a supported network",
  0x32: "a Litecoin P2SH address, not a supported network"
}

const base58Address = (address: string): Classified => {
  const bad = address.match(/[^1-9A-HJ-NP-Za-km-z]/)
  if (bad) return no(`"${bad[0]}" is not a base58 character`)
  const bytes = base58.decode(address)
  if (bytes.length === 32) return ok("solana", address, "base58")
  if (bytes.length !== 25) {
    return no(`decodes to ${bytes.length} bytes: neither a 32-byte Solana key nor a 25-byte base58check address`)
  }
  let payload: Uint8Array
  try {
    payload = base58check.decode(address)
  } catch {
    return no("base58check checksum failure")
  }
  const known = versions[payload[0]!]
  if (known === undefined) return no(`unknown base58check version byte 0x${payload[0]!.toString(16).padStart(2, "0")}`)
  if (typeof known === "string") return no(known)
  return ok(known.family, address, known.format)
}

const TON_RAW = /^(-1|0):([0-9a-fA-F]*)$/

const tonRaw = (address: string): Classified => {
  const match = TON_RAW.exec(address)
  if (!match) return no("a TON raw address is <workchain 0 or -1>:<64 hex>")
  if (match[2]!.length !== 64)
    return no(`a TON raw address has 64 hex characters after the colon, this has ${match[2]!.length}`)
  return ok("ton", `${match[1]}:${match[2]!.toLowerCase()}`, "raw")
}

const tonFriendly = (address: string): Classified => {
  const urlSafe = /[-_]/.test(address)
  if (urlSafe && /[+/]/.test(address)) return no("mixes url-safe and standard base64 characters")
  if (!/^[A-Za-z0-9+/\-_]{48}$/.test(address)) return no("a TON user-friendly address is 48 base64 characters")
  const bytes = base64.decode(urlSafe ? address.replace(/-/g, "+").replace(/_/g, "/") : address)
  const crc = crc16xmodem(bytes.subarray(0, 34))
  if (crc !== ((bytes[34]! << 8) | bytes[35]!)) return no("TON address CRC16 checksum failure")
  const flags = bytes[0]!
  if (flags & 0x80) return no("a TON testnet address; only mainnet is screened")
  if (flags !== 0x11 && flags !== 0x51) return no(`unknown TON address flags 0x${flags.toString(16)}`)
  const workchain = bytes[1] === 0xff ? -1 : bytes[1]!
  if (workchain !== 0 && workchain !== -1) return no(`unsupported TON workchain ${workchain}`)
  return ok(
    "ton",
    `${workchain}:${bytesToHex(bytes.subarray(2, 34))}`,
    flags === 0x11 ? "bounceable" : "non_bounceable"
  )
}

/** Classifies an address string by format, then validates it fully for the family its format names. */
export const classify = (address: string): Classified => {
  if (address.length === 0) return no("empty address")
  if (/\s/.test(address)) return no("contains whitespace")
  if (address.length > 128) return no(`too long for an address (${address.length} characters)`)
  if (/^0x/i.test(address)) return evm(address)
  if (/^-?\d+:/.test(address)) return tonRaw(address)
  if (/^(bc|tb|bcrt)1/i.test(address)) {
    // A bech32 prefix can begin a base58 address too (a Tron address `TB1…`): take whichever reading is valid.
    const bech32 = segwit(address)
    if (bech32.valid || !/^[A-Za-z0-9]+$/.test(address) || address.length < 25 || address.length > 44) return bech32
    const base58 = base58Address(address)
    return base58.valid ? base58 : bech32
  }
  if (address.length === 48 && /^[A-Za-z0-9+/\-_]+$/.test(address)) return tonFriendly(address)
  if (/^[A-Za-z0-9]+$/.test(address) && address.length >= 25 && address.length <= 44) return base58Address(address)
  return no("not the format of any supported network")
}
