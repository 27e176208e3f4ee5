/**
 * The one bounded memory of the codebase: at most `max` entries, the oldest inserted forgotten first. Used for
 * pure results worth keeping (address classifications, verified key hashes) and for values an owner drops
 * whenever what they were read from changes (store reads, cached screening results).
 */

/** A bounded map with oldest-first eviction. */
export interface BoundedMemo<K, V> {
  readonly get: (key: K) => V | undefined
  /** Stores `value`, forgetting the oldest entry first when `max` are held. */
  readonly set: (key: K, value: V) => void
  readonly delete: (key: K) => void
  /** The kept value of `key`, or `compute()`'s, kept. */
  readonly through: (key: K, compute: () => V) => V
  readonly clear: () => void
  readonly size: () => number
}

/** A memo holding at most `max` entries (at least 1). */
export const make = <K, V>(max: number): BoundedMemo<K, V> => {
  const entries = new Map<K, V>()
  const limit = Math.max(1, Math.floor(max))
  const set = (key: K, value: V) => {
    if (!entries.has(key) && entries.size >= limit) entries.delete(entries.keys().next().value as K)
    entries.set(key, value)
  }
  return {
    get: (key) => entries.get(key),
    set,
    delete: (key) => void entries.delete(key),
    through: (key, compute) => {
      const kept = entries.get(key)
      if (kept !== undefined || entries.has(key)) return kept as V
      const value = compute()
      set(key, value)
      return value
    },
    clear: () => entries.clear(),
    size: () => entries.size
  }
}
