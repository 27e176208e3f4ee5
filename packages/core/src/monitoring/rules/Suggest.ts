/** "Did you mean": the names a checker offers when a name is not one it knows. */

/** Names close to `name` among `names`: the same but for case, one the prefix of the other, or a few edits apart. */
export const didYouMean = (name: string, names: Iterable<string>): ReadonlyArray<string> => {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i)
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]!
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const kept = row[j]!
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
        previous = kept
      }
    }
    return row[b.length]!
  }
  const limit = Math.max(2, Math.floor(name.length / 3))
  return [...new Set(names)]
    .map((n) => {
      const a = n.toLowerCase()
      const b = name.toLowerCase()
      return { n, d: a === b ? 0 : a.startsWith(b) || b.startsWith(a) ? 1 : distance(name, n) }
    })
    .filter((c) => c.d <= limit)
    .sort((a, b) => a.d - b.d || (a.n < b.n ? -1 : 1))
    .slice(0, 3)
    .map((c) => c.n)
}
