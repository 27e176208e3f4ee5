/** Classifies native SQLite errors into the storage port's reasons; anything else is a bug and stays a defect. */
import { StoreError } from "@vigil/core"
import { Predicate } from "effect"

const reasonOf = (code: string): StoreError.StoreErrorReason | undefined => {
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "Busy"
  if (code.startsWith("SQLITE_CONSTRAINT")) return "Conflict"
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return "Corrupt"
  if (
    code === "SQLITE_FULL" ||
    code === "SQLITE_PERM" ||
    code === "SQLITE_AUTH" ||
    code === "SQLITE_NOMEM" ||
    code === "SQLITE_NOLFS" ||
    code.startsWith("SQLITE_IOERR") ||
    code.startsWith("SQLITE_CANTOPEN") ||
    code.startsWith("SQLITE_READONLY")
  ) {
    return "Unavailable"
  }
  return undefined
}

/**
 * Maps a thrown value to a StoreError for `operation` (a StoreError stays itself), or `undefined` when it is not a storage condition
 * (an SQL syntax error, a misuse of the driver): those are defects in Vigil, not states of the store.
 * Node file-system errors met while opening (EACCES, ENOSPC, ...) are `Unavailable`.
 */
export const classify = (cause: unknown, operation: string): StoreError.StoreError | undefined => {
  // An adapter's own finding (a stored value that does not decode) is thrown as a StoreError already.
  if (cause instanceof StoreError.StoreError) return cause
  if (!Predicate.isError(cause)) return undefined
  const code = Predicate.hasProperty(cause, "code") && Predicate.isString(cause.code) ? cause.code : undefined
  if (code === undefined) {
    return cause.message === "The database connection is not open"
      ? new StoreError.StoreError({ reason: "Unavailable", operation, message: "the database is closed", cause })
      : undefined
  }
  const reason = code.startsWith("SQLITE_") ? reasonOf(code) : code.startsWith("E") ? "Unavailable" : undefined
  return reason === undefined
    ? undefined
    : new StoreError.StoreError({ reason, operation, message: `${code}: ${cause.message}`, cause })
}
