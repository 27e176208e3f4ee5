import { fc, test } from "@fast-check/vitest"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { base58, base64, base64urlnopad, bech32, bech32m, createBase58check } from "@scure/base"
import { Chain } from "@vigil/core"
import crc16xmodem from "crc/calculators/crc16xmodem"
import { readFileSync } from "node:fs"
import { assert, describe, it } from "vitest"
import { hasSharedData, missingSharedData, sharedData } from "./SharedData.ts"

const base58check = createBase58check(sha256)
const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n })
const withVersion = (version: number, payload: Uint8Array) => base58check.encode(Uint8Array.of(version, ...payload))
const valid = (address: string, chain?: Chain.Network) => {
  const d = Chain.detect(address, chain)
  if (!d.valid) throw new Error(`${address} rejected: ${d.reason}`)
  return d
}

describe("Chain.detect on the shared address vectors", () => {
  interface Vector {
    readonly chain: Chain.Network
    readonly address: string
    readonly valid: boolean
    readonly note: string
  }
  /** An invalid vector that differs from a valid EVM address only in case (a bad EIP-55 case or a "0X" prefix). */
  const evmCaseOnly = (v: Vector) =>
    !v.valid && Chain.familyOf(v.chain) === "evm" && /^(bad EIP-55 checksum|uppercase "0X" prefix)/.test(v.note)

  const vectors: ReadonlyArray<Vector> = hasSharedData
    ? JSON.parse(readFileSync(sharedData("address-vectors.json"), "utf8"))
    : []

  it.skipIf(!hasSharedData)(
    `classifies all 212 vectors right on their stated network (${missingSharedData} → skipped)`,
    () => {
      assert.strictEqual(vectors.length, 212)
      // EVM addresses are case-insensitive (spec §4.1): the vectors' bad-checksum and "0X" forms are screened,
      // the first with the checksum warning. Every other vector is taken as the file states it.
      const expected = (v: Vector) => v.valid || evmCaseOnly(v)
      const wrong = vectors.filter((v) => Chain.detect(v.address, v.chain).valid !== expected(v))
      assert.deepStrictEqual(
        wrong.map((v) => `${v.chain} ${v.valid} ${v.address}: ${v.note}`),
        []
      )
      assert.strictEqual(new Set(vectors.map((v) => v.chain)).size, 18)
    }
  )

  it.skipIf(!hasSharedData)("detects the stated network of every valid vector without a hint", () => {
    for (const v of vectors.filter((v) => v.valid)) {
      const d = valid(v.address)
      assert.include(d.networks, v.chain, v.address)
      assert.strictEqual(d.family, Chain.familyOf(v.chain))
    }
  })

  it.skipIf(!hasSharedData)(
    "takes the EVM vectors that differ only in case, lowercased, warning of a bad checksum",
    () => {
      const caseOnly = vectors.filter((v) => evmCaseOnly(v))
      assert.isAtLeast(caseOnly.length, 10)
      for (const v of caseOnly) {
        const d = valid(v.address, v.chain)
        assert.strictEqual(d.normalized, v.address.toLowerCase(), v.address)
        if (v.note.startsWith("bad EIP-55 checksum")) assert.strictEqual(d.warning, Chain.eip55Mismatch, v.address)
      }
    }
  )

  it.skipIf(!hasSharedData)("gives a reason for every invalid vector", () => {
    for (const v of vectors.filter((v) => !v.valid && !evmCaseOnly(v))) {
      const d = Chain.detect(v.address, v.chain)
      assert.isFalse(d.valid)
      if (!d.valid) assert.isAbove(d.reason.length, 5, v.address)
    }
  })
})

describe("Chain.detect examples", () => {
  it("says an EVM address is valid on every EVM network, and narrows to a named one", () => {
    const d = valid("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
    assert.strictEqual(d.family, "evm")
    assert.deepStrictEqual(d.networks, Chain.networksOf.evm)
    assert.strictEqual(d.networks.length, 13)
    assert.strictEqual(d.normalized, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
    assert.strictEqual(d.format, "eip55")
    assert.deepStrictEqual(valid("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "base").networks, ["base"])
    const wrong = Chain.detect("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "tron")
    assert.deepStrictEqual(wrong, {
      address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      valid: false,
      reason: "a valid evm address (eip55), not a tron address"
    })
  })

  it("takes EVM addresses in any case, and warns of a mixed case that is not the EIP-55 checksum without a 'correction'", () => {
    const checksummed = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
    const lower = checksummed.toLowerCase()
    for (const form of [lower, checksummed, `0x${lower.slice(2).toUpperCase()}`, `0X${lower.slice(2)}`]) {
      const d = valid(form)
      assert.strictEqual(d.normalized, lower, form)
      assert.isUndefined(d.warning, form)
    }
    const typo = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"
    const d = valid(typo)
    assert.strictEqual(d.normalized, lower)
    assert.strictEqual(d.format, "hex")
    assert.strictEqual(d.warning, Chain.eip55Mismatch)
    // The warning never names a checksummed form: that would be the typo, made to look verified.
    assert.notInclude(d.warning!, "0x")
  })

  it("explains why an address is invalid", () => {
    const reason = (a: string) => {
      const d = Chain.detect(a)
      return d.valid ? "valid" : d.reason
    }
    assert.strictEqual(
      reason("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe"),
      "an EVM address has 40 hex characters after 0x, this has 39"
    )
    assert.strictEqual(reason(""), "empty address")
    assert.strictEqual(reason(" 0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"), "contains whitespace")
    assert.strictEqual(
      reason("mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r"),
      "a Bitcoin testnet P2PKH address; only mainnet is screened"
    )
    assert.strictEqual(reason("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMh"), "base58check checksum failure")
    assert.strictEqual(reason("EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJC"), "TON address CRC16 checksum failure")
    assert.strictEqual(reason("hello world"), "contains whitespace")
    assert.strictEqual(reason("hello"), "not the format of any supported network")
  })

  it("maps every TON form of one account to the same raw key", () => {
    const forms = [
      "EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB",
      "UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E",
      "EQAs9VlT6S776tq3unJcP5Ogsj+ELLunLXuOb1EKcOQi4wJB",
      "0:2CF55953E92EFBEADAB7BA725C3F93A0B23F842CBBA72D7B8E6F510A70E422E3"
    ]
    for (const form of forms) {
      assert.strictEqual(valid(form).normalized, "0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3")
    }
  })

  it("normalises bech32 to lowercase and keeps base58 case", () => {
    assert.strictEqual(
      valid("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4").normalized,
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
    )
    assert.strictEqual(valid("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t").normalized, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
  })
})

describe("Chain.detect properties", () => {
  test.prop([bytes(20)])("any 20 bytes as lowercase, uppercase or EIP-55 hex is EVM with one lowercase key", (raw) => {
    const lower = bytesToHex(raw)
    const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
    const checksummed = [...lower].map((c, i) => (parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c)).join("")
    for (const form of [lower, lower.toUpperCase(), checksummed]) {
      const d = valid(`0x${form}`)
      assert.strictEqual(d.family, "evm")
      assert.strictEqual(d.normalized, `0x${lower}`)
    }
  })

  test.prop([bytes(20), fc.nat(39)])("flipping the case of one letter of an EIP-55 address warns of it", (raw, at) => {
    const lower = bytesToHex(raw)
    const hash = bytesToHex(keccak_256(utf8ToBytes(lower)))
    const checksummed = [...lower].map((c, i) => (parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c)).join("")
    const letters = [...checksummed].flatMap((c, i) => (/[a-fA-F]/.test(c) ? [i] : []))
    fc.pre(letters.length >= 2)
    const i = letters[at % letters.length]!
    const c = checksummed[i]!
    const flipped =
      checksummed.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + checksummed.slice(i + 1)
    fc.pre(flipped !== flipped.toLowerCase() && flipped !== flipped.toUpperCase())
    const d = valid(`0x${flipped}`)
    assert.strictEqual(d.normalized, `0x${lower}`)
    assert.strictEqual(d.warning, Chain.eip55Mismatch)
    assert.isUndefined(valid(`0x${checksummed}`).warning)
  })

  test.prop([bytes(32)])("any 32 bytes in base58 is a Solana address kept as given", (raw) => {
    const address = base58.encode(raw)
    const d = valid(address)
    assert.strictEqual(d.family, "solana")
    assert.strictEqual(d.normalized, address)
  })

  test.prop([
    bytes(20),
    fc.constantFrom(
      [0x00, "bitcoin", "p2pkh"],
      [0x05, "bitcoin", "p2sh"],
      [0x41, "tron", "base58"],
      [0x1e, "dogecoin", "p2pkh"],
      [0x16, "dogecoin", "p2sh"]
    ) as fc.Arbitrary<[number, Chain.Family, string]>
  ])("base58check with a mainnet version byte is detected as its family", (hash, [version, family, format]) => {
    const d = valid(withVersion(version, hash))
    assert.strictEqual(d.family, family)
    assert.strictEqual(d.format, format)
  })

  test.prop([bytes(20), fc.nat()])("changing one character of a base58check address invalidates it", (hash, at) => {
    const address = withVersion(0x00, hash)
    const i = 1 + (at % (address.length - 1))
    const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    const replacement = alphabet[(alphabet.indexOf(address[i]!) + 1) % alphabet.length]!
    const changed = address.slice(0, i) + replacement + address.slice(i + 1)
    const d = Chain.detect(changed)
    assert.isFalse(d.valid && d.family === "bitcoin", `${changed} still passed as Bitcoin`)
  })

  test.prop([fc.oneof(bytes(20), bytes(32))])(
    "witness v0 programs of 20 or 32 bytes are bech32 P2WPKH/P2WSH",
    (program) => {
      const address = bech32.encode("bc", [0, ...bech32.toWords(program)])
      const d = valid(address)
      assert.strictEqual(d.format, program.length === 20 ? "p2wpkh" : "p2wsh")
      assert.isFalse(Chain.detect(bech32m.encode("bc", [0, ...bech32m.toWords(program)])).valid)
    }
  )

  test.prop([bytes(32)])("taproot programs are bech32m P2TR and rejected in bech32", (program) => {
    assert.strictEqual(valid(bech32m.encode("bc", [1, ...bech32m.toWords(program)])).format, "p2tr")
    assert.isFalse(Chain.detect(bech32.encode("bc", [1, ...bech32.toWords(program)])).valid)
  })

  test.prop([bytes(32), fc.constantFrom(0, -1), fc.boolean(), fc.boolean()])(
    "every user-friendly TON form maps to its raw key",
    (hash, workchain, bounceable, urlSafe) => {
      const body = Uint8Array.of(bounceable ? 0x11 : 0x51, workchain === -1 ? 0xff : 0, ...hash)
      const crc = crc16xmodem(body)
      const full = Uint8Array.of(...body, crc >> 8, crc & 0xff)
      const address = urlSafe ? base64urlnopad.encode(full) : base64.encode(full)
      const d = valid(address)
      assert.strictEqual(d.family, "ton")
      assert.strictEqual(d.normalized, `${workchain}:${bytesToHex(hash)}`)
      assert.strictEqual(valid(d.normalized).normalized, d.normalized)
    }
  )

  test.prop([fc.string({ maxLength: 130 })])("never throws, whatever the input", (input) => {
    const d = Chain.detect(input)
    assert.strictEqual(d.address, input)
  })
})

describe("prefixes shared by two formats", () => {
  it("reads a Tron address that begins with a bech32 prefix (TB1…) as Tron, and still refuses a mixed-case bech32 one", () => {
    const tron = Chain.detect("TB115BhpCAFbjPUgniZ36TZYxNB67fPKzr")
    assert.deepInclude(tron, { valid: true, family: "tron" })
    const mixed = Chain.detect("bc1qAR0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")
    assert.isFalse(mixed.valid)
    assert.include(mixed.valid ? "" : mixed.reason, "must not mix upper and lower case")
  })
})
