/**
 * Prometheus metrics of the server: requests by route and status, a latency histogram, quota rejections, cache
 * use, and per followed chain its head lag, blocks processed, alerts, retractions, reorganisations and bots deferred, and whether
 * it backs off or is subscribed to the node's new heads.
 */
import { Follower, ResultCache, Version, WebhookDispatcher } from "@vigil/core"
import { Clock, Context, Effect, Layer, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"

const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const

const requestsHelp = "HTTP requests answered, by method, route and status."
const durationHelp = "Time from request to response, by method and route."

/**
 * The server's metrics as Effect `Metric`s in a registry of its own (so two servers in one process never share
 * counts), rendered by Effect's Prometheus formatter (text exposition format 0.0.4). The per-request path looks
 * its series up in a map and updates them in place, without running an effect.
 */
export class HttpMetrics extends Context.Service<
  HttpMetrics,
  {
    readonly request: (method: string, route: string, status: number, seconds: number) => void
    readonly quotaRejected: (scope: string) => void
    readonly render: Effect.Effect<string>
  }
>()("@vigil/adapter-http/HttpMetrics") {
  static readonly layer: Layer.Layer<
    HttpMetrics,
    never,
    ResultCache.ResultCache | Follower.Follower | WebhookDispatcher.DeliveryCounts
  > = Layer.effect(HttpMetrics)(
    Effect.gen(function* () {
      const cache = yield* ResultCache.ResultCache
      const follower = yield* Follower.Follower
      const deliveryCounts = yield* WebhookDispatcher.DeliveryCounts
      const context = Context.make(Metric.MetricRegistry, new Map())
      const counters = new Map<string, Metric.Counter<number>>()
      const histograms = new Map<string, Metric.Histogram<number>>()
      const rejections = new Map(
        (["qps", "daily", "monthly"] as const).map((limit) => [
          limit,
          Metric.counter("vigil_quota_rejections_total", {
            description: "Requests refused with 429, by the limit that refused them.",
            attributes: { limit },
            incremental: true
          })
        ])
      )
      const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })
      const cacheHits = counter("vigil_result_cache_hits_total", "Screening results served from the cache.")
      const cacheMisses = counter(
        "vigil_result_cache_misses_total",
        "Screening results computed because the cache had none."
      )
      const cacheInvalidations = counter(
        "vigil_result_cache_invalidations_total",
        "Times a change of the lists emptied the cache."
      )
      const cacheEntries = Metric.gauge("vigil_result_cache_entries", { description: "Results held in the cache." })

      // Registered now, so the families come out in this order and every rejection counter shows from the start.
      Metric.gauge("vigil_build_info", {
        description: "Version of the running server.",
        attributes: { version: Version.version }
      }).updateUnsafe(1, context)
      for (const c of rejections.values()) c.updateUnsafe(0, context)
      let seen = { hits: 0, misses: 0, invalidations: 0 }
      const chainCounters = [
        ["blocks", "vigil_follow_blocks_total", "Blocks processed by the chain's follower."],
        ["alerts", "vigil_follow_alerts_total", "Alerts stored by the chain's follower."],
        ["retractions", "vigil_follow_retractions_total", "Alerts retracted because their block left the chain."],
        ["reorganisations", "vigil_follow_reorganisations_total", "Reorganisations the chain's follower walked back."],
        [
          "deferred",
          "vigil_follow_deferred_total",
          "Times a bot waited for a later step (and caught up then) because its key's bots had tried their share of bindings in a step."
        ],
        [
          "judging",
          "vigil_follow_judge_seconds_total",
          "Seconds the chain's follower spent running its bots over blocks (decoding them, evaluating the rules, making the alerts), reading the blocks and storing aside."
        ]
      ] as const
      // Counted by the follower where each happens (the difference since the last scrape); retractions are the
      // chain's as stored (another instance's and a re-anchoring's too): the highest seen, never counted twice.
      const counted = new Map<string, number>()
      const retractionsSeen = new Map<number, number>()
      const chains = Effect.map(
        Effect.all([follower.status, follower.counts, Clock.currentTimeMillis]),
        ([states, counts, now]) => {
          const stateOf = new Map(states.map((c) => [c.chainId, c]))
          for (const chainId of [...new Set([...counts.keys(), ...stateOf.keys()])].sort((x, y) => x - y)) {
            const chain = String(chainId)
            const c = stateOf.get(chainId)
            const count = counts.get(chainId)
            for (const [field, name, description] of chainCounters) {
              const metric = Metric.counter(name, { description, attributes: { chain }, incremental: true })
              if (field === "retractions") {
                const before = retractionsSeen.get(chainId) ?? 0
                const stored = c?.retractions ?? before
                metric.updateUnsafe(Math.max(0, stored - before), context)
                retractionsSeen.set(chainId, Math.max(before, stored))
              } else {
                const id = `${field} ${chain}`
                const total = count?.[field] ?? counted.get(id) ?? 0
                metric.updateUnsafe(total - (counted.get(id) ?? 0), context)
                counted.set(id, total)
              }
            }
            if (c === undefined) continue
            // A chain not followed yet (no cursor), or whose lag is not known now (its node failing), reports NaN:
            // neither 0 nor its last value.
            Metric.gauge("vigil_follow_head_lag_blocks", {
              description: "Blocks between the chain's head and the last block processed (NaN while not known).",
              attributes: { chain }
            }).updateUnsafe(c.lag ?? Number.NaN, context)
            Metric.gauge("vigil_follow_stalled_seconds", {
              description:
                "Seconds the chain's follower has not moved for a failure or a node lacking what it needs (0 while it moves).",
              attributes: { chain }
            }).updateUnsafe(
              c.stalledSince === undefined ? 0 : Math.max(0, (now - Date.parse(c.stalledSince)) / 1000),
              context
            )
            Metric.gauge("vigil_follow_halted", {
              description: "1 while the chain's follower is halted by a reorganisation deeper than the hashes kept.",
              attributes: { chain }
            }).updateUnsafe(c.state === "halted" ? 1 : 0, context)
            Metric.gauge("vigil_follow_backing_off", {
              description: "1 while the chain's follower backs off after a failure of the node.",
              attributes: { chain }
            }).updateUnsafe(c.state === "backing off" ? 1 : 0, context)
            Metric.gauge("vigil_follow_heads_subscribed", {
              description: "1 while the chain's node announces new heads to the follower over its websocket.",
              attributes: { chain }
            }).updateUnsafe(c.heads === "subscribed" ? 1 : 0, context)
          }
        }
      )

      // Deliveries: attempts by kind of destination and outcome (the difference since the last scrape), how long
      // each took, and the outbox's backlog. Kinds are bounded: intelligence and each registered kind of channel.
      const attemptsSeen = new Map<string, number>()
      const deliveries = Effect.gen(function* () {
        const taken = yield* deliveryCounts.take
        for (const [key, n] of taken.attempts) {
          const [type, outcome] = key.split(" ") as [string, string]
          Metric.counter("vigil_delivery_attempts_total", {
            description: "Delivery attempts by kind of destination and outcome (delivered, retried, dead, gone).",
            attributes: { type, outcome },
            incremental: true
          }).updateUnsafe(n - (attemptsSeen.get(key) ?? 0), context)
          attemptsSeen.set(key, n)
        }
        for (const d of taken.durations)
          Metric.histogram("vigil_delivery_attempt_seconds", {
            description: "How long one delivery attempt took, by kind of destination.",
            attributes: { type: d.type },
            boundaries: Metric.exponentialBoundaries({ start: 0.005, factor: 2, count: 14 })
          }).updateUnsafe(d.seconds, context)
        for (const b of taken.backlog) {
          Metric.gauge("vigil_deliveries_pending", {
            description: "Deliveries waiting to be sent (or retried), by kind of destination.",
            attributes: { type: b.type }
          }).updateUnsafe(b.pending, context)
          Metric.gauge("vigil_deliveries_dead", {
            description: "Dead-lettered deliveries (failed every retry, refused, or parked), by kind of destination.",
            attributes: { type: b.type }
          }).updateUnsafe(b.dead, context)
        }
      })

      return HttpMetrics.of({
        request: (method, route, status, seconds) => {
          const series = `${method} ${route}`
          const id = `${series} ${status}`
          let requests = counters.get(id)
          if (requests === undefined) {
            requests = Metric.counter("vigil_http_requests_total", {
              description: requestsHelp,
              attributes: { method, route, status: String(status) },
              incremental: true
            })
            counters.set(id, requests)
          }
          requests.updateUnsafe(1, context)
          let duration = histograms.get(series)
          if (duration === undefined) {
            duration = Metric.histogram("vigil_http_request_duration_seconds", {
              description: durationHelp,
              attributes: { method, route },
              boundaries: buckets
            })
            histograms.set(series, duration)
          }
          duration.updateUnsafe(seconds, context)
        },
        quotaRejected: (scope) => rejections.get(scope as "qps")?.updateUnsafe(1, context),
        render: Effect.map(Effect.andThen(Effect.andThen(chains, deliveries), cache.stats), (stats) => {
          // The cache counts on its own; its counters take the difference since the last scrape.
          cacheHits.updateUnsafe(stats.hits - seen.hits, context)
          cacheMisses.updateUnsafe(stats.misses - seen.misses, context)
          cacheInvalidations.updateUnsafe(stats.invalidations - seen.invalidations, context)
          cacheEntries.updateUnsafe(stats.size, context)
          seen = { hits: stats.hits, misses: stats.misses, invalidations: stats.invalidations }
          return PrometheusMetrics.formatUnsafe(context)
        })
      })
    })
  )
}
