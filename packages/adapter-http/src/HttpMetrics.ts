/** Prometheus metrics of the server: requests by route and status, a latency histogram, quota rejections, cache use. */
import { ResultCache, Version } from "@vigil/core"
import { Context, Effect, Layer } from "effect"

const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const

/** The counters of one method and route: answers by status, and the latency histogram. */
interface Series {
  /** `method="…",route="…"`, escaped once. */
  readonly labels: string
  readonly statuses: Map<number, number>
  readonly counts: Array<number>
  sum: number
  count: number
}

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

/** Counters kept in process; `render` writes the Prometheus text exposition format (0.0.4). */
export class HttpMetrics extends Context.Service<
  HttpMetrics,
  {
    readonly request: (method: string, route: string, status: number, seconds: number) => void
    readonly quotaRejected: (scope: string) => void
    readonly render: Effect.Effect<string>
  }
>()("@vigil/adapter-http/HttpMetrics") {
  static readonly layer: Layer.Layer<HttpMetrics, never, ResultCache.ResultCache> = Layer.effect(HttpMetrics)(
    Effect.gen(function* () {
      const cache = yield* ResultCache.ResultCache
      const series = new Map<string, Series>()
      const rejections = new Map<string, number>()
      return HttpMetrics.of({
        request: (method, route, status, seconds) => {
          const id = `${method} ${route}`
          let s = series.get(id)
          if (s === undefined) {
            s = {
              labels: `method="${escape(method)}",route="${escape(route)}"`,
              statuses: new Map(),
              counts: buckets.map(() => 0),
              sum: 0,
              count: 0
            }
            series.set(id, s)
          }
          s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1)
          for (let i = 0; i < buckets.length; i++) if (seconds <= buckets[i]!) s.counts[i]!++
          s.sum += seconds
          s.count++
        },
        quotaRejected: (scope) => void rejections.set(scope, (rejections.get(scope) ?? 0) + 1),
        render: Effect.map(cache.stats, (stats) => {
          const lines: Array<string> = [
            "# HELP vigil_build_info Version of the running server.",
            "# TYPE vigil_build_info gauge",
            `vigil_build_info{version="${Version.version}"} 1`,
            "# HELP vigil_http_requests_total HTTP requests answered, by method, route and status.",
            "# TYPE vigil_http_requests_total counter"
          ]
          for (const { labels, statuses } of series.values()) {
            for (const [status, n] of statuses)
              lines.push(`vigil_http_requests_total{${labels},status="${status}"} ${n}`)
          }
          lines.push(
            "# HELP vigil_http_request_duration_seconds Time from request to response, by method and route.",
            "# TYPE vigil_http_request_duration_seconds histogram"
          )
          for (const { labels, ...h } of series.values()) {
            buckets.forEach((le, i) =>
              lines.push(`vigil_http_request_duration_seconds_bucket{${labels},le="${le}"} ${h.counts[i]}`)
            )
            lines.push(`vigil_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`)
            lines.push(`vigil_http_request_duration_seconds_sum{${labels}} ${h.sum}`)
            lines.push(`vigil_http_request_duration_seconds_count{${labels}} ${h.count}`)
          }
          lines.push(
            "# HELP vigil_quota_rejections_total Requests refused with 429, by the limit that refused them.",
            "# TYPE vigil_quota_rejections_total counter"
          )
          for (const scope of ["qps", "daily", "monthly"]) {
            lines.push(`vigil_quota_rejections_total{limit="${scope}"} ${rejections.get(scope) ?? 0}`)
          }
          lines.push(
            "# HELP vigil_result_cache_hits_total Screening results served from the cache.",
            "# TYPE vigil_result_cache_hits_total counter",
            `vigil_result_cache_hits_total ${stats.hits}`,
            "# HELP vigil_result_cache_misses_total Screening results computed because the cache had none.",
            "# TYPE vigil_result_cache_misses_total counter",
            `vigil_result_cache_misses_total ${stats.misses}`,
            "# HELP vigil_result_cache_invalidations_total Times a change of the lists emptied the cache.",
            "# TYPE vigil_result_cache_invalidations_total counter",
            `vigil_result_cache_invalidations_total ${stats.invalidations}`,
            "# HELP vigil_result_cache_entries Results held in the cache.",
            "# TYPE vigil_result_cache_entries gauge",
            `vigil_result_cache_entries ${stats.size}`
          )
          return lines.join("\n") + "\n"
        })
      })
    })
  )
}
