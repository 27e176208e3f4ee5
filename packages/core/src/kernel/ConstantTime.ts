/** Comparison of secrets (key hashes, signatures) in time that does not depend on where they differ. */

/** Compares two strings in time that depends only on their length. */
export const equal = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}
