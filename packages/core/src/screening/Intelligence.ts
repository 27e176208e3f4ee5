/**
 * What a screening client is answered, whoever serves it (the HTTP server, the CLI, an embedding host): single
 * screenings through the result cache and its lifetimes, batches (concurrency, input order, failed items, the
 * summary), and the `invalid_address` outcome of an address no network accepts.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { Chain, Instant, RandomIds } from "../kernel/index.ts"
import type * as IntelResult from "./IntelResult.ts"
import { summarize } from "./IntelResult.ts"
import { ResultCache } from "./ResultCache.ts"
import { type InvalidAddress, Screening } from "./Screening.ts"

/**
 * How long results are kept (spec §4.2, §4.3): v3 results scoring 60 or more for 10 minutes, complete v2 results
 * for 24 hours; an incomplete result never.
 */
export const lifetimes = { v3Millis: 10 * 60_000, v3MinScore: 60, v2Millis: 24 * 3_600_000 } as const

/** Which lifetimes apply: the v3 answer's or the v2 answer's. */
export type Policy = "v3" | "v2"

/** How long a result is kept under `policy`. */
export const lifetime = (policy: Policy, result: IntelResult.IntelResult): number =>
  !result.metadata.is_complete
    ? 0
    : policy === "v2"
      ? lifetimes.v2Millis
      : result.score >= lifetimes.v3MinScore
        ? lifetimes.v3Millis
        : 0

/** Options of a single screening. */
export interface SingleOptions {
  readonly policy: Policy
  /** Network the address must be valid on; `auto` (default) accepts any. */
  readonly chain?: Chain.Network | "auto"
  readonly includeDetails?: boolean
  /** The detection already made of the address (with `chain`), so the checksum is not verified twice. */
  readonly detected?: Chain.Valid
  /** Screen against the lists as they were on this day (`YYYY-MM-DD`, not after today); default today. */
  readonly asOf?: string
  /** Apply the calibration model (`enable_agentic`); default true. */
  readonly agentic?: boolean
}

/** A screening answered through the cache: the result, whether it came from there, and when. */
export interface Screened {
  readonly result: IntelResult.IntelResult
  readonly hit: boolean
  /** Epoch ms the result was computed. */
  readonly storedAt: number
  /** Epoch ms the request started and was answered. */
  readonly started: number
  readonly answeredAt: number
}

/** Options of a batch. */
export interface BatchOptions {
  readonly chain?: Chain.Network | "auto"
  readonly includeDetails?: boolean
  /** Addresses screened at once, 1–10 (default 3). */
  readonly concurrency?: number
  /** Screen against the lists as they were on this day; default today. */
  readonly asOf?: string
  /** Apply the calibration model (`enable_agentic`); default true. */
  readonly agentic?: boolean
}

/** The most addresses one batch takes, and the default and largest concurrency. */
export const batchLimits = { maxAddresses: 25, defaultConcurrency: 3, maxConcurrency: 10 } as const

/** `req_<base36 ms>_<12 hex>`: unique enough to find a request in logs, sortable by time. */
export const correlationId = (now: number) => `req_${now.toString(36)}_${RandomIds.hex(6)}`

/** The failed item of an address that is not valid. */
export const invalidAddress = (address: string, message: string): IntelResult.BatchFailure => ({
  address,
  error: { code: "invalid_address", message }
})

/** The UTC date (`YYYY-MM-DD`) of an epoch-ms instant; the day's text is kept until the day ends. */
export const isoDay = (() => {
  let start = 0
  let end = 0
  let text = ""
  return (ms: number) => {
    if (ms < start || ms >= end) {
      start = Math.floor(ms / 86_400_000) * 86_400_000
      end = start + 86_400_000
      text = Instant.day(start)
    }
    return text
  }
})()

/** The result as answered at `s.answeredAt`: a cached one gets the latency and timestamp of this answer. */
export const restamped = (s: Screened): IntelResult.IntelResult =>
  s.hit
    ? {
        ...s.result,
        metadata: {
          ...s.result.metadata,
          latency_ms: s.answeredAt - s.started,
          timestamp: Instant.iso(s.answeredAt)
        }
      }
    : s.result

/** Screening as the product answers it. */
export class Intelligence extends Context.Service<
  Intelligence,
  {
    /** One address through the cache. */
    readonly single: (address: string, options: SingleOptions) => Effect.Effect<Screened, InvalidAddress>
    /** 1–25 addresses (the caller enforces the count), in input order; an invalid one is a failed item. */
    readonly batch: (addresses: ReadonlyArray<string>, options?: BatchOptions) => Effect.Effect<IntelResult.BatchResult>
  }
>()("@vigil/core/Intelligence") {
  static readonly layer: Layer.Layer<Intelligence, never, Screening | ResultCache> = Layer.effect(Intelligence)(
    Effect.gen(function* () {
      const screening = yield* Screening
      const cache = yield* ResultCache

      // A pipeline rather than a generator: it runs on every request.
      const single = (address: string, options: SingleOptions): Effect.Effect<Screened, InvalidAddress> =>
        Effect.flatMap(Clock.currentTimeMillis, (started) => {
          const asOf = options.asOf ?? isoDay(started)
          const chain = options.chain ?? "auto"
          const includeDetails = options.includeDetails === true
          const agentic = options.agentic !== false
          const screenOptions = {
            chain,
            includeDetails,
            agentic,
            asOf,
            ...(options.detected === undefined ? {} : { detected: options.detected })
          }
          return cache
            .through(
              `${options.policy}\u0000${address}\u0000${chain}\u0000${includeDetails ? 1 : 0}${agentic ? 1 : 0}\u0000${asOf}`,
              screening.screen(address, screenOptions),
              (r) => lifetime(options.policy, r)
            )
            .pipe(
              Effect.flatMap((cached) =>
                Effect.map(Clock.currentTimeMillis, (answeredAt): Screened => ({
                  result: cached.value,
                  hit: cached.hit,
                  storedAt: cached.storedAt,
                  started,
                  answeredAt
                }))
              )
            )
        })

      const batch = Effect.fn("Intelligence.batch")(function* (
        addresses: ReadonlyArray<string>,
        options: BatchOptions = {}
      ) {
        const started = yield* Clock.currentTimeMillis
        const chain = options.chain ?? "auto"
        const results = yield* Effect.forEach(
          addresses,
          (address): Effect.Effect<IntelResult.IntelResult | IntelResult.BatchFailure> => {
            const detected = Chain.detect(address, chain)
            if (!detected.valid) return Effect.succeed(invalidAddress(address, detected.reason))
            return single(address, {
              policy: "v3",
              chain,
              detected,
              includeDetails: options.includeDetails === true,
              ...(options.agentic === false ? { agentic: false } : {}),
              ...(options.asOf === undefined ? {} : { asOf: options.asOf })
            }).pipe(
              Effect.map(restamped),
              Effect.catchTag("InvalidAddress", (e) => Effect.succeed(invalidAddress(address, e.message)))
            )
          },
          { concurrency: options.concurrency ?? batchLimits.defaultConcurrency }
        )
        const finished = yield* Clock.currentTimeMillis
        return {
          results,
          summary: summarize(results),
          metadata: {
            version: "v3" as const,
            latency_ms: finished - started,
            correlation_id: correlationId(finished),
            timestamp: Instant.iso(finished)
          }
        }
      })

      return Intelligence.of({ single, batch })
    })
  )
}
