/** The one wire form of a point in time: an ISO 8601 UTC instant with milliseconds. */
import { Schema } from "effect"

/** An ISO 8601 UTC instant, as every answer and delivery carries its times. */
export const Timestamp = Schema.String.annotate({
  description: "ISO 8601 UTC instant",
  examples: ["2026-11-22T10:00:01.000Z"]
})
