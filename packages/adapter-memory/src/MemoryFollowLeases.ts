/** FollowLeases in process memory: one instance's leases, on its clock. */
import { FollowLeases } from "@vigil/core"
import { Clock, Effect, Layer } from "effect"

export const layer: Layer.Layer<FollowLeases.FollowLeases> = Layer.sync(FollowLeases.FollowLeases)(() => {
  const leases = new Map<number, FollowLeases.Lease>()
  return FollowLeases.FollowLeases.of({
    hold: (chainId, holder, ttlMillis) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const lease = FollowLeases.decide(leases.get(chainId), chainId, holder, now, ttlMillis)
        if (lease !== undefined) leases.set(chainId, lease)
        return lease
      }),
    release: (chainId, holder) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const lease = leases.get(chainId)
        if (lease?.holder === holder) leases.set(chainId, FollowLeases.released(lease, now))
      }),
    leases: () => Effect.sync(() => [...leases.values()].sort((a, b) => a.chainId - b.chainId))
  })
})
