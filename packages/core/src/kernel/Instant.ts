/** The one wire form of a point in time: an ISO 8601 UTC instant with milliseconds. */
import { DateTime, Schema } from "effect"

/** An ISO 8601 UTC instant, as every answer and delivery carries its times. */
export const Timestamp = Schema.String.annotate({
  description: "ISO 8601 UTC instant",
  examples: ["2026-11-22T10:00:01.000Z"]
})

/** The ISO 8601 UTC text of an epoch-milliseconds instant (from `Clock`), e.g. `2026-11-22T10:00:01.000Z`. */
export const iso = (millis: number): string => DateTime.formatIso(DateTime.makeUnsafe(millis))

/** The UTC calendar day (`YYYY-MM-DD`) of an epoch-milliseconds instant. */
export const day = (millis: number): string => DateTime.formatIsoDateUtc(DateTime.makeUnsafe(millis))
