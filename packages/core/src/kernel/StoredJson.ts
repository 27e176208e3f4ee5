/**
 * Stored JSON read back through its codec, never cast: each JSON column of a store has one Schema (declared beside
 * its port), and a value that does not decode is `Corrupt`, reported as any other corruption of the store is.
 */
import { Effect, Exit, Result, Schema } from "effect"
import { StoreError } from "./StoreError.ts"

/**
 * A reader of one stored JSON column: the decoded value, or a `Corrupt` StoreError of `operation` naming `what`
 * (and the row's id when given). The adapters run it where they map rows: SQLite inside its database call (a
 * thrown StoreError passes through as itself), PostgreSQL as an Effect.
 */
export const reader = <A>(codec: Schema.Codec<A, string>, operation: string, what: string) => {
  const decode = Schema.decodeUnknownExit(codec)
  return (text: string, id?: string): Result.Result<A, StoreError> => {
    const exit = decode(text)
    return Exit.isSuccess(exit)
      ? Result.succeed(exit.value)
      : Result.fail(
          new StoreError({
            reason: "Corrupt",
            operation,
            message: `the stored ${what}${id === undefined ? "" : ` of ${id}`} does not decode`
          })
        )
  }
}

/** The value of a read, or its StoreError thrown (for the SQLite adapter's synchronous database calls). */
export const orThrow = <A>(result: Result.Result<A, StoreError>): A => {
  if (Result.isSuccess(result)) return result.success
  throw result.failure
}

/** Rows read by `read`, as an Effect: every value, or the first row's StoreError (for PostgreSQL's mapped reads). */
export const each = <R, A>(
  rows: ReadonlyArray<R>,
  read: (row: R) => Result.Result<A, StoreError>
): Effect.Effect<ReadonlyArray<A>, StoreError> => {
  const out: Array<A> = []
  for (const row of rows) {
    const result = read(row)
    if (Result.isFailure(result)) return Effect.fail(result.failure)
    out.push(result.success)
  }
  return Effect.succeed(out)
}

/**
 * `decode`, remembering what each distinct text decoded to while it keeps being read: a store read again and again
 * (every bot at each step of a follower, a key's contracts with their ABIs) decodes a row only when its text
 * changed, and rows with the same text (one ABI registered by many keys) share one value. Values are shared by
 * every read, as the ports' readonly types say they may be. Failures are not remembered. Bounded: past `capacity`
 * texts the older ones are forgotten unless read again before the next `capacity` are.
 */
export const remembered = <A, E>(
  decode: (text: string) => Exit.Exit<A, E>,
  capacity: number
): ((text: string) => Exit.Exit<A, E>) => {
  let current = new Map<string, Exit.Exit<A, E>>()
  let previous = new Map<string, Exit.Exit<A, E>>()
  return (text) => {
    const known = current.get(text)
    if (known !== undefined) return known
    const exit = previous.get(text) ?? decode(text)
    if (Exit.isSuccess(exit)) {
      if (current.size >= capacity) {
        previous = current
        current = new Map()
      }
      current.set(text, exit)
    }
    return exit
  }
}
