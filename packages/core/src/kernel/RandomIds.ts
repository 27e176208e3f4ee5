/**
 * The random parts of ids (`msg_…`, `req_…`, `bot_…`): secure random bytes drawn 4 KiB at a time, so ids made by the
 * thousand (a delivery per webhook of every asynchronous request) cost one call to the generator per few hundred
 * ids, not one each (a call costs about as much as building a delivery's body).
 */
import { bytesToHex, randomBytes } from "@noble/hashes/utils.js"

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

let pool: Uint8Array = new Uint8Array(0)
let used = 0

/** Where `n` fresh bytes start in the pool (refilled first when fewer are left). */
const take = (n: number): number => {
  if (used + n > pool.length) {
    pool = randomBytes(Math.max(4096, n))
    used = 0
  }
  const at = used
  used += n
  return at
}

/** `n` random lowercase alphanumerics. */
export const alphanumeric = (n: number): string => {
  const at = take(n)
  let s = ""
  for (let i = 0; i < n; i++) s += alphabet[pool[at + i]! % alphabet.length]
  return s
}

/** `n` random bytes as lowercase hex (`2n` characters). */
export const hex = (n: number): string => {
  const at = take(n)
  return bytesToHex(pool.subarray(at, at + n))
}
