/** The CLI's output records: one JSON text per line, encoded by Schema. */
import { Console, Schema } from "effect"

const encode = Schema.encodeSync(Schema.fromJsonString(Schema.Unknown))

/** Prints a value as one JSON line on stdout. */
export const print = (value: unknown) => Console.log(encode(value))
