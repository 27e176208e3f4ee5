/**
 * The cursor of the watch-rule parser: the source, the offset read up to, how deep `(`/`!` nest, and the lexical
 * steps every part of the grammar takes (blanks, literal text, identifiers, digits, quoted strings). A syntax
 * error is thrown as a `Failure` and caught once, by `parse`.
 */

/** A syntax error: where, what is wrong, and what would have been accepted there. */
export interface SyntaxError {
  readonly offset: number
  readonly message: string
  readonly expected: ReadonlyArray<string>
}

export class Failure {
  constructor(readonly error: SyntaxError) {}
}

/** The most `(`/`!` nesting a rule may have; deeper is refused rather than risking the stack. */
export const maxNesting = 64

/** The longest placeholder name, as `${name}` in a rule and as a key of `literalDefs`. */
export const maxPlaceholderLength = 64

export class Cursor {
  p = 0
  private depth = 0
  constructor(readonly source: string) {}

  fail(message: string, expected: ReadonlyArray<string> = [], offset = this.p): never {
    throw new Failure({ offset, message, expected })
  }
  /** What is left of the source. */
  rest(): string {
    return this.source.slice(this.p)
  }
  ws(): void {
    while (this.p < this.source.length && /\s/.test(this.source[this.p]!)) this.p++
  }
  peek(text: string): boolean {
    return this.source.startsWith(text, this.p)
  }
  eat(text: string): boolean {
    this.ws()
    if (!this.peek(text)) return false
    this.p += text.length
    return true
  }
  expect(text: string, what = `'${text}'`): void {
    if (!this.eat(text)) this.fail(`expected ${what}${this.found()}`, [text])
  }
  /** ", found …" for a message: the end, or the word at the cursor. */
  found(): string {
    this.ws()
    return this.p >= this.source.length
      ? ", found the end"
      : `, found '${this.source.slice(this.p, this.p + 12).split(/\s/)[0]}'`
  }
  identifier(): string | undefined {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.rest())
    if (m === null) return undefined
    this.p += m[0].length
    return m[0]
  }
  digits(): number | undefined {
    const m = /^[0-9]+/.exec(this.rest())
    if (m === null) return undefined
    this.p += m[0].length
    return Number(m[0])
  }
  /** `f` one level deeper, refused past {@link maxNesting}. */
  nested<A>(f: () => A, at: number): A {
    if (++this.depth > maxNesting) this.fail(`nested deeper than ${maxNesting} levels`, [], at)
    const a = f()
    this.depth--
    return a
  }
  /** A string in single or double quotes at the cursor (`\\` escapes a quote or itself), or undefined. */
  stringLiteral(): string | undefined {
    const quote = this.source[this.p]
    if (quote !== '"' && quote !== "'") return undefined
    const start = this.p
    this.p++
    let text = ""
    while (this.p < this.source.length && this.source[this.p] !== quote) {
      if (this.source[this.p] === "\\") {
        const next = this.source[this.p + 1]
        if (next !== '"' && next !== "'" && next !== "\\")
          this.fail("only \\\", \\' and \\\\ may be escaped in a string", [], this.p)
        text += next
        this.p += 2
      } else text += this.source[this.p++]
    }
    if (this.p >= this.source.length) this.fail("unterminated string", [quote], start)
    this.p++
    return text
  }
}
