/** The status report of a presented key (spec §2.6): its state, its limits and its usage, declared once here. */
import { Schema } from "effect"
import type { Authentication } from "./ApiKeys.ts"
import { Usage } from "./Quota.ts"

/** The status answer. An invalid or expired key is reported in `status`, never refused. */
export const StatusReport = Schema.Struct({
  status: Schema.Literals(["authenticated", "invalid", "expired"]),
  client: Schema.Struct({
    name: Schema.String,
    qps: Schema.Int,
    dailyLimit: Schema.Int,
    monthlyLimit: Schema.Int
  }),
  usage: Usage,
  timestamp: Schema.String.annotate({ description: "ISO 8601 UTC instant" })
})
export type StatusReport = typeof StatusReport.Type

const nobody = {
  client: { name: "unknown", qps: 0, dailyLimit: 0, monthlyLimit: 0 },
  usage: { dailyUsed: 0, monthlyUsed: 0, recentRequests: 0, dailyRemaining: 0, monthlyRemaining: 0 }
} as const

/** The report of an authentication outcome; `usage` is read only for a known key. */
export const report = (authentication: Authentication, usage: Usage | undefined, timestamp: string): StatusReport =>
  authentication.status === "invalid" || usage === undefined
    ? { status: "invalid", ...nobody, timestamp }
    : {
        status: authentication.status,
        client: {
          name: authentication.key.name,
          qps: authentication.key.qps,
          dailyLimit: authentication.key.daily,
          monthlyLimit: authentication.key.monthly
        },
        usage,
        timestamp
      }
