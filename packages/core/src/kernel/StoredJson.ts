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
