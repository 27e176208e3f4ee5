/** HostResolver on Node's resolver (`dns.lookup`, so /etc/hosts counts as it does for the connection itself). */
import { lookup } from "node:dns/promises"
import { HostResolver } from "@vigil/core"
import { Effect, Layer } from "effect"

/** Every address `host` resolves to. */
export const layer: Layer.Layer<HostResolver.HostResolver> = Layer.succeed(HostResolver.HostResolver)(
  HostResolver.HostResolver.of({
    resolve: (host) =>
      Effect.tryPromise({
        try: () => lookup(host, { all: true, verbatim: true }),
        catch: (cause) =>
          new HostResolver.ResolveError({ host, message: cause instanceof Error ? cause.message : String(cause) })
      }).pipe(Effect.map((addresses) => addresses.map((a) => a.address)))
  })
)
