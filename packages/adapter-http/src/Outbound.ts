/** The Node adapters of outbound webhook traffic: the host resolver of registration and the HTTPS transport. */
import type { HostResolver, WebhookTransport } from "@vigil/core"
import { Layer } from "effect"
import * as HttpsWebhookTransport from "./HttpsWebhookTransport.ts"
import * as NodeHostResolver from "./NodeHostResolver.ts"

/** Options of outbound traffic. */
export interface Options {
  /** Hosts exempt from the public-address rule (HTTPS stays required). Default none. */
  readonly allowHosts?: ReadonlyArray<string>
  /** Extra CA certificates (PEM) trusted for deliveries, besides Node's bundled roots. */
  readonly ca?: string
}

/** Name resolution and HTTPS delivery on Node, guarded by the same allow-list. */
export const layer = (
  options: Options = {}
): Layer.Layer<HostResolver.HostResolver | WebhookTransport.WebhookTransport> =>
  Layer.merge(
    NodeHostResolver.layer,
    HttpsWebhookTransport.layer({
      allowHosts: options.allowHosts ?? [],
      ...(options.ca === undefined ? {} : { ca: options.ca })
    })
  )
