/** The shape every list parser has: fed text chunk by chunk, it hands back records as it completes them. */
import { Data, Exit, Schema, SchemaIssue } from "effect"
import { Chain } from "../../kernel/index.ts"
import type { Category, ParsedRecord } from "../Intel.ts"

/** A push parser over text input. Pure and synchronous; it keeps only what its format requires. */
export interface Parser {
  /** Feeds the next chunk of text; returns the records completed by it. Throws a ParseFailure on bad input. */
  readonly write: (chunk: string) => ReadonlyArray<ParsedRecord>
  /** Ends the input; returns the remaining records. */
  readonly end: () => ReadonlyArray<ParsedRecord>
  /** The issue date the data states about itself (ISO `YYYY-MM-DD`), once read. */
  readonly asOf: () => string | undefined
  /** Entries passed over, with why (the first 20 reasons and the total). */
  readonly skipped: () => Skipped
}

/** What a parser passed over. */
export interface Skipped {
  readonly count: number
  /** Why each entry was passed over, in input order: every reason, up to {@link maxSkipReasons}. */
  readonly reasons: ReadonlyArray<string>
}

/** The most skip reasons a parser keeps (each a short line); the count goes on beyond it. */
export const maxSkipReasons = 100_000

/** The input is not of the format the parser reads; `where` locates the problem (a line, an element). */
export class ParseFailure extends Data.TaggedError("ParseFailure")<{
  readonly where: string
  readonly reason: string
  readonly message: string
}> {
  constructor(where: string, reason: string) {
    super({ where, reason, message: `${where}: ${reason}` })
  }
}

/** Counts skipped entries and keeps their reasons (up to {@link maxSkipReasons}). */
export const skipLog = () => {
  let count = 0
  const reasons: Array<string> = []
  return {
    add: (reason: string) => {
      count++
      if (reasons.length < maxSkipReasons) reasons.push(reason)
    },
    get: (): Skipped => ({ count, reasons: [...reasons] })
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first issue of a failed decoding as one line: `path: message`. */
const issueText = (issue: SchemaIssue.Issue): string => {
  const first = formatter(issue).issues[0]
  if (first === undefined) return "unreadable"
  const path = (first.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p))
  const message = first.message === "Missing key" ? "required" : first.message
  return path.length === 0 ? message : `${path.join(".")}: ${message}`
}

/**
 * A synchronous decoder of one entry of a list: its value, or the first issue as text (what the entry is
 * skipped for, or what a whole file is refused for).
 */
export const decoder = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownExit(schema)
  return (
    input: unknown
  ): { readonly ok: true; readonly value: S["Type"] } | { readonly ok: false; readonly issue: string } => {
    const exit = decode(input)
    if (Exit.isSuccess(exit)) return { ok: true, value: exit.value }
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    return { ok: false, issue: error?._tag === "Fail" ? issueText(error.error.issue) : "unreadable" }
  }
}

/** Splits text into lines across chunk boundaries, counting lines from 1. */
export const lineSplitter = () => {
  let rest = ""
  let lineNo = 0
  return {
    push: (chunk: string, onLine: (line: string, lineNo: number) => void) => {
      const parts = (rest + chunk).split("\n")
      rest = parts.pop() ?? ""
      for (const p of parts) onLine(p.replace(/\r$/, ""), ++lineNo)
    },
    end: (onLine: (line: string, lineNo: number) => void) => {
      if (rest.length > 0) onLine(rest.replace(/\r$/, ""), ++lineNo)
      rest = ""
    }
  }
}

/** Validates an address for a record, restricted to `families` when given; returns the record or why not. */
export const toRecord = (
  address: string,
  category: Category,
  reference: string,
  extra: Omit<ParsedRecord, "address" | "family" | "category" | "reference"> = {},
  families?: ReadonlyArray<Chain.Family>
): ParsedRecord | string => {
  const detected = Chain.detect(address)
  if (!detected.valid) return `${address}: ${detected.reason}`
  if (families !== undefined && !families.includes(detected.family)) {
    return `${address}: a ${detected.family} address where ${families.join(" or ")} was expected`
  }
  return { address: detected.normalized, family: detected.family, category, reference, ...extra }
}
