/**
 * A text feed in front of a streaming XML parser that leaves out whole elements the parser would learn nothing
 * from, so they are never tokenised. OFAC's SDN Advanced XML is 121 MB, and its digital-currency records need
 * little of it: the locations, identity documents, relationships, parties without an address and the sanctions
 * entries of other parties are passed over as text.
 *
 * An element (a "unit") is left out only when all of these hold, so the parser ends in the state it would have
 * reached reading it:
 * - it starts where the parser stands directly inside the unit's container (`Location` inside `Locations`), as the
 *   parser says after reading everything before it;
 * - nothing fed so far holds `<!` or `<?` (past the XML declaration), so the start is not inside a comment, a
 *   CDATA section or a processing instruction;
 * - it ends at the first `</Unit>` after its start, holds no other `<Unit` and none of `<!` and `<?`;
 * - the parser's own test (`skippable`) finds nothing in its text that it would keep.
 *
 * Anything else is fed as it came. Left-out text is not checked for well-formedness; its lines are counted, so a
 * position the parser reports can be moved to the line of the whole input.
 */

/** What the skipper needs of the parser it feeds. */
export interface Options {
  /** The unit element of each container: `Locations` → `Location`. */
  readonly units: ReadonlyMap<string, string>
  /** The element the parser stands directly inside now, after every fed chunk. */
  readonly inside: () => string | undefined
  /** Whether the parser would learn nothing from this whole element (its text, start tag to end tag). */
  readonly skippable: (unit: string, text: string) => boolean
  /** Feeds text to the parser. */
  readonly feed: (text: string) => void
  /** Chunks are looked at once this much text has come (default 64 Ki characters). */
  readonly gatherChars?: number
}

/** Units longer than this are fed, not held whole to be tested. */
const maxUnitChars = 1 << 20
/** `<?xml …?>` may open the document, after a byte-order mark. */
const declarationChars = 2

export const make = (options: Options) => {
  const gatherChars = options.gatherChars ?? 1 << 16
  const names = [...new Set(options.units.values())]
  const longest = Math.max(0, ...names.map((n) => n.length))
  const startOf = new RegExp(`<(${names.map(escape).join("|")})(?=[\\s/>])`, "g")
  const nestedOf = new Map(names.map((n) => [n, new RegExp(`<${escape(n)}(?=[\\s/>])`, "g")]))
  /** Text held for the next chunk: a unit without its end yet, or a tail that could start one. */
  let pending = ""
  /** Nothing is fed yet: the next text fed starts the input, where `<?xml …?>` may stand. */
  let first = true
  /** Fed text held `<!` or `<?`: from then on everything is fed. */
  let unsafe = false
  /** The last character fed, for a `<!` split between two feeds. */
  let last = ""
  let lines = 0

  /** Where the end tag of `unit` stops in `text`, searching from `from`; undefined when `text` does not hold it whole. */
  const endOf = (text: string, unit: string, from: number) => {
    const close = `</${unit}`
    for (let i = text.indexOf(close, from); i !== -1; i = text.indexOf(close, i + 1)) {
      let j = i + close.length
      while (j < text.length && isSpace(text.charCodeAt(j))) j++
      if (j === text.length) return undefined
      if (text[j] === ">") return j + 1
    }
    return undefined
  }

  /** Whether `text` holds `<!` or `<?` (a `<` fed last counts with its first character), the declaration aside. */
  const markup = (text: string) => {
    if (last === "<" && (text[0] === "!" || text[0] === "?")) return true
    if (text.includes("<!")) return true
    let question = text.indexOf("<?")
    if (first && question !== -1 && question < declarationChars) question = text.indexOf("<?", question + 1)
    return question !== -1
  }

  const feed = (text: string) => {
    if (text.length === 0) return
    if (!unsafe && markup(text)) unsafe = true
    first = false
    last = text[text.length - 1]!
    options.feed(text)
  }

  const skip = (text: string) => {
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++
    last = text[text.length - 1]!
  }

  /**
   * Feeds or leaves out `text` from `from`; returns where what must wait for more input starts (a unit without its
   * end, a tail that could start one), or `text.length`.
   */
  const drain = (text: string, from: number, ended: boolean): number => {
    for (;;) {
      if (unsafe) {
        feed(text.slice(from))
        return text.length
      }
      startOf.lastIndex = from
      const start = startOf.exec(text)
      if (start === null) {
        // A unit's start may be split at the chunk's end: keep the tail that could be one.
        const keep = ended ? text.length : Math.max(from, text.length - longest - 1)
        feed(text.slice(from, keep))
        return keep
      }
      const s = start.index
      const unit = start[1]!
      feed(text.slice(from, s))
      const head = s + 1 + unit.length
      const container = options.inside()
      if (unsafe || container === undefined || options.units.get(container) !== unit) {
        feed(text.slice(s, head))
        from = head
        continue
      }
      const stop = endOf(text, unit, head)
      if (stop === undefined) {
        if (!ended && text.length - s <= maxUnitChars) return s
        feed(text.slice(s, head))
        from = head
        continue
      }
      const whole = text.slice(s, stop)
      const nested = nestedOf.get(unit)!
      nested.lastIndex = 1
      const plain = !nested.test(whole) && !whole.includes("<!") && !whole.includes("<?")
      if (plain && options.skippable(unit, whole)) skip(whole)
      else feed(whole)
      from = stop
    }
  }

  /**
   * Takes the next text. What waited from the last one is joined only with as much of it as it needs to end (its
   * end tag, found in the new text), not with the whole of it: chunks are large and copying each again is slow.
   */
  const take = (incoming: string, ended: boolean) => {
    if (pending === "") {
      pending = incoming.slice(drain(incoming, 0, ended))
      return
    }
    startOf.lastIndex = 0
    const waiting = startOf.exec(pending + incoming.slice(0, longest + 1))
    const close = waiting?.index === 0 ? incoming.indexOf(`</${waiting[1]}`) : -1
    const upTo = close === -1 ? incoming.length : Math.min(incoming.length, close + longest + 64)
    const region = pending + incoming.slice(0, upTo)
    const stop = drain(region, 0, ended && upTo === incoming.length)
    if (stop >= pending.length) {
      // What waits now lies in the new text: go on in it, where it stands.
      pending = incoming.slice(drain(incoming, stop - pending.length, ended))
    } else if (upTo === incoming.length) {
      pending = region.slice(stop)
    } else {
      const rest = region.slice(stop) + incoming.slice(upTo)
      pending = ""
      take(rest, ended)
    }
  }

  /** Chunks not yet looked at: small chunks are gathered, so a long unit is not searched again at every one. */
  let held: Array<string> = []
  let heldChars = 0
  const gathered = () => {
    const text = held.length === 1 ? held[0]! : held.join("")
    held = []
    heldChars = 0
    return text
  }

  return {
    write: (chunk: string) => {
      held.push(chunk)
      heldChars += chunk.length
      if (heldChars >= gatherChars) take(gathered(), false)
    },
    end: () => take(gathered(), true),
    /** Newlines in the text left out so far. */
    skippedLines: () => lines
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
