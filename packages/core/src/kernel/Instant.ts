/** The one wire form of a point in time: an ISO 8601 UTC instant with milliseconds. */
import { Clock, DateTime, Effect, Option, Schema } from "effect"

/** An ISO 8601 UTC instant, as every answer and delivery carries its times. */
export const Timestamp = Schema.String.annotate({
  description: "ISO 8601 UTC instant",
  examples: ["2026-11-22T10:00:01.000Z"]
})

/** The last instant {@link iso} wrote, and its text: answers and deliveries made in one millisecond share it. */
let lastMillis = Number.NaN
let lastText = ""

/**
 * The ISO 8601 UTC text of an epoch-milliseconds instant (from `Clock`), e.g. `2026-11-22T10:00:01.000Z`: what
 * `DateTime.formatIso` writes (it is `toISOString` of the same instant), without making a `DateTime` first, which
 * cost more than the rest of a delivery's settlement.
 */
export const iso = (millis: number): string => {
  if (millis !== lastMillis) {
    // @effect-diagnostics-next-line globalDate:off
    lastText = new Date(millis).toISOString()
    lastMillis = millis
  }
  return lastText
}

/** The UTC calendar day (`YYYY-MM-DD`) of an epoch-milliseconds instant. */
export const day = (millis: number): string => {
  const text = iso(millis)
  return text.slice(0, text.indexOf("T"))
}

/** Now, by the Effect `Clock`, as {@link iso} text. */
export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, iso)

/** Today, by the Effect `Clock`, as {@link day} text. */
export const today: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, day)

/** True when `text` is a real calendar day written `YYYY-MM-DD` (not `2024-02-30`, not `2024-13-45`). */
export const isCalendarDate = (text: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const parsed = DateTime.make(`${text}T00:00:00Z`)
  return Option.isSome(parsed) && DateTime.formatIsoDateUtc(parsed.value) === text
}

/** A calendar day as `YYYY-MM-DD`; impossible days are refused with a message saying so. */
export const IsoDate = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/, { message: "Expected a date as YYYY-MM-DD" }),
  Schema.makeFilter((text: string) => isCalendarDate(text) || `${text} is not a calendar date`)
).annotate({ description: "A calendar day, YYYY-MM-DD", examples: ["2025-11-19"] })
