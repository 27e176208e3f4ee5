/**
 * Messages of notification channels: an alert (or its retraction, or a test) rendered from the channel's
 * template, or the default one, into the body each kind of channel takes. Placeholders are `{{name}}`; the text
 * is plain (Slack's three control characters escaped, Discord mentions switched off, Telegram without markup), cut
 * to what each service accepts.
 */
import { Schema } from "effect"
import { Evidence } from "../rules/Evidence.ts"

/** What a message is about: an alert, its retraction (its block left the chain), its being left unverified, a test. */
export const Kind = Schema.Literals(["alert", "retraction", "unverified", "test"]).annotate({
  description:
    "alert: a match; retraction: the alert's block left the chain (id is the alert's); unverified: the follower was re-anchored and the alert's block could not be checked; test: a test message"
})

/** What a bot's match tells its channels: the `data` of a `webhook` channel's message, and what templates read. */
export const Alert = Schema.Struct({
  /** Identity of the alert; a retraction carries the id of the alert it takes back. */
  id: Schema.String,
  kind: Kind,
  bot: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    severity: Schema.String,
    version: Schema.optionalKey(Schema.String)
  }),
  chainId: Schema.Int,
  blockNumber: Schema.Int,
  txHash: Schema.String,
  /** Index of the expression in the bot's `watchRule.expressions`, and its normal form. */
  rule: Schema.Int.annotate({ description: "Index of the expression in the bot's watchRule.expressions" }),
  expression: Schema.String.annotate({ description: "The expression in its normal form" }),
  evidence: Evidence
})
export interface Alert extends Schema.Schema.Type<typeof Alert> {}

/** The message of a stored alert of `bot` (or of its retraction, or of its being left unverified). */
export const messageOf = (
  alert: {
    readonly id: string
    readonly chainId: number
    readonly blockNumber: number
    readonly rule: number
    readonly expression: string
    readonly transactions: Readonly<Record<string, string>>
    readonly evidence: Evidence
  },
  bot: { readonly id: string; readonly botName: string; readonly severity: string; readonly botVersion?: string },
  kind: "alert" | "retraction" | "unverified"
): Alert => ({
  id: alert.id,
  kind,
  bot: {
    id: bot.id,
    name: bot.botName,
    severity: bot.severity,
    ...(bot.botVersion === undefined ? {} : { version: bot.botVersion })
  },
  chainId: alert.chainId,
  blockNumber: alert.blockNumber,
  txHash: alert.transactions.tx1 ?? Object.values(alert.transactions)[0] ?? "",
  rule: alert.rule,
  expression: alert.expression,
  evidence: alert.evidence
})

/** The placeholders a template may use. */
export const placeholders = [
  "title",
  "kind",
  "alertId",
  "bot",
  "botId",
  "severity",
  "chain",
  "block",
  "txHash",
  "transactions",
  "rule",
  "expression",
  "arguments"
] as const

/** The template of a channel that has none of its own. */
export const defaultTemplate =
  "{{title}}\nRule {{rule}}: {{expression}}\nTransaction {{txHash}} in block {{block}}\n{{arguments}}\nAlert {{alertId}}"

const placeholder = /\{\{\s*([A-Za-z]+)\s*\}\}/g

/** The placeholders of `template` that are not known. */
export const unknownPlaceholders = (template: string): ReadonlyArray<string> =>
  [...template.matchAll(placeholder)]
    .map((m) => m[1]!)
    .filter((name) => !(placeholders as ReadonlyArray<string>).includes(name))

const jsonText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))

/** Each matched event or call with its decoded arguments, one per line. */
const argumentsOf = (evidence: Evidence): string =>
  Object.values(evidence.occurrences)
    .map((o) => {
      const args =
        typeof o.args === "object" && o.args !== null && !Array.isArray(o.args)
          ? Object.entries(o.args)
              .map(([k, v]) => `${k}=${jsonText(v)}`)
              .join(", ")
          : jsonText(o.args)
      return `${o.contract}.${o.logIndex === undefined ? "F" : "E"}.${o.name}(${args})${o.reverted === true ? " reverted" : ""}`
    })
    .join("\n")

/** The title of a message: the bot, its severity and the chain, and what happened. */
export const title = (alert: Alert): string => {
  switch (alert.kind) {
    case "alert":
      return `[${alert.bot.severity}] ${alert.bot.name} matched on chain ${alert.chainId}`
    case "retraction":
      return `[${alert.bot.severity}] ${alert.bot.name}: alert ${alert.id} retracted, its block left chain ${alert.chainId}`
    case "unverified":
      return `[${alert.bot.severity}] ${alert.bot.name}: alert ${alert.id} unverified, chain ${alert.chainId} reorganised deeper than could be traced and its block is no longer found`
    case "test":
      return `Test message from Vigil: this channel works`
  }
}

/** How each placeholder is written for an alert (every placeholder has one: the type says so). */
const writers: Record<(typeof placeholders)[number], (alert: Alert) => string> = {
  title,
  kind: (alert) => alert.kind,
  alertId: (alert) => alert.id,
  bot: (alert) => alert.bot.name,
  botId: (alert) => alert.bot.id,
  severity: (alert) => alert.bot.severity,
  chain: (alert) => String(alert.chainId),
  block: (alert) => String(alert.blockNumber),
  txHash: (alert) => alert.txHash,
  transactions: (alert) =>
    Object.entries(alert.evidence.transactions)
      .map(([name, t]) => `${name} ${t.hash} (block ${t.blockNumber}, index ${t.txIndex})`)
      .join("\n"),
  rule: (alert) => String(alert.rule + 1),
  expression: (alert) => alert.expression,
  arguments: (alert) => argumentsOf(alert.evidence)
}

/** The text of `alert` from `template`: each placeholder it uses written once it is met. */
export const text = (template: string, alert: Alert): string =>
  template
    .replace(placeholder, (whole, name: string) =>
      Object.hasOwn(writers, name) ? writers[name as keyof typeof writers](alert) : whole
    )
    .replace(/\n{2,}/g, "\n")
    .trim()

/**
 * C0 and C1 control characters, DEL, the Unicode line and paragraph separators, and the invisible ones that change
 * how text reads: bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and zero-width
 * characters (U+200B–U+200D, U+2060, U+FEFF). Refused in the names that reach messages: a CR or LF in a bot's name
 * could forge lines of a Slack, Discord, Telegram or mail message, and a right-to-left override could make a name
 * read as another.
 */
export const controlCharacter = /\p{Cc}|[\u2028\u2029\u061C\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/u

/** The invisible characters of {@link controlCharacter} alone: refused in text that may hold line breaks. */
export const invisibleCharacter = /[\u061C\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/u

/** What a name holding a {@link controlCharacter} is told. */
export const controlCharacterMessage =
  "must not contain control characters (line breaks, tabs, escapes) or invisible ones (bidirectional controls, zero-width characters)"

/**
 * At most `max` UTF-16 code units (what the services count, at most), an ellipsis marking a cut. The cut falls
 * between code points, so a character beyond the BMP (an emoji) is kept whole or left out, never split into a
 * lone surrogate that the services refuse or show as garbage.
 */
export const cut = (s: string, max: number): string => {
  if (s.length <= max) return s
  let end = 0
  for (const point of s) {
    if (end + point.length > max - 1) break
    end += point.length
  }
  return `${s.slice(0, end)}…`
}

/** The alert a test send delivers: the shape of a real one, saying what it is. */
export const sample = (id: string): Alert => ({
  id,
  kind: "test",
  bot: { id: "bot_test", name: "Vigil test", severity: "Low" },
  chainId: 1,
  blockNumber: 0,
  txHash: `0x${"0".repeat(64)}`,
  rule: 0,
  expression: "system.emitted(tx1.Token.E.Transfer)",
  evidence: { transactions: {}, frames: {}, occurrences: {}, held: [] }
})
