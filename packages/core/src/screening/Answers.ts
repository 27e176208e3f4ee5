/**
 * What a screening client is answered once the request is admitted: the screening through the cache, with the
 * evidence asked for read from the nodes beside it (on-chain activity with details, counterparty exposure on
 * request), each read within its own budget. A cached result is restamped with this answer's latency and time; the
 * v2 answer reads the activity its `chains_with_activity` states; an asynchronous screening is the v2 answer as a
 * webhook delivers it. Which evidence an answer reads is decided here, for every host that answers.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { type Chain, Instant } from "../kernel/index.ts"
import * as ChainActivity from "./ChainActivity.ts"
import * as Exposure from "./Exposure.ts"
import * as Intelligence from "./Intelligence.ts"
import type * as IntelResult from "./IntelResult.ts"
import { type InvalidAddress, Screening } from "./Screening.ts"
import * as V2 from "./V2.ts"

/** The evidence a v3 answer reads beside its screening. */
export interface Evidence {
  /** Counterparty exposure, judged against the lists of the answer's day. Absent: not read. */
  readonly exposure?: Exposure.Request
}

/** A v3 screening: the options of `Intelligence.single` (v3 lifetimes) and the evidence to read. */
export type V3Options = Omit<Intelligence.SingleOptions, "policy"> & Evidence

/** A v3 answer: the screening as the cache gave it and, when evidence was read, the result completed with it. */
export interface V3Answer extends Intelligence.Screened {
  /** The result restamped (when cached) and completed with the evidence read; absent when none was to be read. */
  readonly completed?: IntelResult.IntelResult
}

/** A v2 answer: the screening and, when a node is configured, the activity its `data` states. */
export interface V2Answer extends Intelligence.Screened {
  readonly activity?: ChainActivity.Activity
}

/** An asynchronous screening, answered as a webhook delivers it. */
export interface Delivery {
  readonly data: V2.Delivered
  readonly correlationId: string
  /** Epoch ms the screening finished. */
  readonly finishedAt: number
}

type Complete = (r: IntelResult.IntelResult) => IntelResult.IntelResult
const asIs: Complete = (r) => r

/** Answers screening requests. */
export class Answers extends Context.Service<
  Answers,
  {
    /** One address, v3: through the cache, with the evidence `options` ask for. */
    readonly v3: (address: string, options: V3Options) => Effect.Effect<V3Answer, InvalidAddress>
    /** 1–25 addresses, v3, in input order, each with the evidence asked for; an invalid one is a failed item. */
    readonly v3Batch: (
      addresses: ReadonlyArray<string>,
      options: Intelligence.BatchOptions & Evidence
    ) => Effect.Effect<IntelResult.BatchResult>
    /** One address, v2 (any network): through the cache, with its activity when a node can tell it. */
    readonly v2: (address: string, detected?: Chain.Valid) => Effect.Effect<V2Answer, InvalidAddress>
    /** One address screened afresh for delivery to webhooks: the v2 data, with its correlation id. */
    readonly delivery: (address: string, detected?: Chain.Valid) => Effect.Effect<Delivery, InvalidAddress>
  }
>()("@vigil/core/Answers") {
  static readonly layer: Layer.Layer<
    Answers,
    never,
    Intelligence.Intelligence | Screening | ChainActivity.ChainActivity | Exposure.Exposure
  > = Layer.effect(Answers)(
    Effect.gen(function* () {
      const intelligence = yield* Intelligence.Intelligence
      const screening = yield* Screening
      const activity = yield* ChainActivity.ChainActivity
      const exposure = yield* Exposure.Exposure

      /**
       * How a v3 result is completed with what the nodes say: on-chain activity when details are asked for (details
       * always say what was checked; with no node, at once, that nothing was), counterparty exposure when asked
       * for; undefined when nothing is to be read.
       */
      const evidenceOf = (
        address: string,
        options: Pick<V3Options, "chain" | "includeDetails" | "asOf" | "exposure">
      ): Effect.Effect<Complete> | undefined => {
        const chain = options.chain ?? "auto"
        const request = options.exposure
        if (options.includeDetails !== true && request === undefined) return undefined
        return Effect.map(
          Effect.all(
            [
              options.includeDetails === true
                ? Effect.map(
                    activity.of(address, chain),
                    (a): Complete =>
                      (r) =>
                        ChainActivity.annotate(r, a)
                  )
                : Effect.succeed(asIs),
              request !== undefined
                ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
                    Effect.map(
                      exposure.of(address, options.asOf ?? Intelligence.isoDay(now), chain, request),
                      (e): Complete =>
                        (r) =>
                          Exposure.annotate(r, e)
                    )
                  )
                : Effect.succeed(asIs)
            ],
            { concurrency: "unbounded" }
          ),
          ([withActivity, withExposure]) =>
            (r) =>
              withExposure(withActivity(r))
        )
      }

      // Pipelines rather than generators: they run on every request.
      const v3 = (address: string, options: V3Options): Effect.Effect<V3Answer, InvalidAddress> => {
        const screened = intelligence.single(address, { ...options, policy: "v3" })
        const evidence = evidenceOf(address, options)
        return evidence === undefined
          ? screened
          : Effect.zipWith(
              screened,
              evidence,
              (s, complete): V3Answer => ({ ...s, completed: complete(Intelligence.restamped(s)) }),
              { concurrent: true }
            )
      }

      const v3Batch = (addresses: ReadonlyArray<string>, options: Intelligence.BatchOptions & Evidence) => {
        const screening = intelligence.batch(addresses, options)
        const evidence = addresses.map((address) => evidenceOf(address, options))
        if (evidence.every((e) => e === undefined)) return screening
        // Every item's evidence read at once, each in its own budget, beside the batch.
        return Effect.zipWith(
          screening,
          Effect.forEach(evidence, (e) => e ?? Effect.succeed(asIs), { concurrency: "unbounded" }),
          (batch, complete): IntelResult.BatchResult => ({
            ...batch,
            results: batch.results.map((r, i) => ("score" in r ? complete[i]!(r) : r))
          }),
          { concurrent: true }
        )
      }

      const v2 = (address: string, detected?: Chain.Valid): Effect.Effect<V2Answer, InvalidAddress> => {
        const screened = intelligence.single(address, {
          policy: "v2",
          chain: "auto",
          ...(detected === undefined ? {} : { detected })
        })
        return activity.enabled
          ? Effect.zipWith(
              screened,
              activity.of(address, "auto"),
              (s, found): V2Answer => ({ ...s, activity: found }),
              {
                concurrent: true
              }
            )
          : screened
      }

      const delivery = Effect.fn("Answers.delivery")(function* (address: string, detected?: Chain.Valid) {
        const started = yield* Clock.currentTimeMillis
        const [result, found] = yield* Effect.all(
          [screening.screen(address, detected === undefined ? {} : { detected }), activity.of(address)],
          { concurrency: "unbounded" }
        )
        const finishedAt = yield* Clock.currentTimeMillis
        const data: V2.Delivered = {
          success: true,
          data: V2.project(result, found),
          message: V2.processedMessage,
          timestamp: Instant.iso(finishedAt),
          processing_time_ms: finishedAt - started,
          webhook_delivery: true
        }
        return { data, correlationId: Intelligence.correlationId(finishedAt), finishedAt }
      })

      return Answers.of({ v3, v3Batch, v2, delivery })
    })
  )
}
