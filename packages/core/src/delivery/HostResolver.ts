/** Port: name resolution, so the SSRF guard can see every address a webhook host stands for. */
import { Context, type Effect, Schema } from "effect"

/** The host could not be resolved. */
export class ResolveError extends Schema.TaggedError<ResolveError>()("ResolveError", {
  host: Schema.String,
  message: Schema.String
}) {}

/** Resolves host names (an IP literal resolves to itself). */
export class HostResolver extends Context.Service<
  HostResolver,
  { readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, ResolveError> }
>()("@vigil/core/HostResolver") {}
