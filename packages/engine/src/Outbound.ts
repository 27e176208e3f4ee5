/**
 * The Node adapters of outbound traffic: the host resolver of webhook registration and the HTTPS transport, the
 * mail relay of email channels, the verified-source services ABIs are fetched from, and the chains' nodes
 * (JSON-RPC: blocks for monitoring, accounts and transfers for screening's on-chain evidence).
 */
import { HttpsWebhookTransport, NodeHostResolver, SmtpMailer } from "@vigil/adapter-delivery"
import { AbiSources, EvmAccounts, EvmRpc, EvmTransfers } from "@vigil/adapter-evm"
import { type Engine, Mailer } from "@vigil/core"
import { Layer } from "effect"

/** Options of outbound traffic. */
export interface Options {
  /** Hosts exempt from the public-address rule (HTTPS stays required). Default none. */
  readonly allowHosts?: ReadonlyArray<string>
  /** Plain HTTP to loopback accepted for deliveries (development on one machine). Default false. */
  readonly loopbackHttp?: boolean
  /** Extra CA certificates (PEM) trusted for deliveries, besides Node's bundled roots. */
  readonly ca?: string
  /** Sockets kept open to one host for deliveries; default the transport's (32). */
  readonly socketsPerHost?: number
  /** Where ABIs are fetched from; defaults in `AbiSources.Options`. */
  readonly abiSources?: AbiSources.Options
  /** The JSON-RPC URL of each chain's node. Default none. */
  readonly rpcUrls?: ReadonlyMap<number, string>
  /** The websocket URL of a chain's node, where new heads are subscribed to. Default none (polling only). */
  readonly rpcWsUrls?: ReadonlyMap<number, string>
  /** How the nodes are read (timeouts, batches, retries); defaults in `EvmRpc.Options`. */
  readonly rpc?: Omit<EvmRpc.Options, "urls">
  /** The mail relay of email channels. Default none (email channels cannot be created). */
  readonly smtp?: SmtpMailer.Options
}

/** Name resolution and HTTPS delivery on Node guarded by the same allow-list, ABI sources, and chains' nodes. */
export const layer = (options: Options = {}): Layer.Layer<Engine.Outbound> =>
  Layer.mergeAll(
    NodeHostResolver.layer,
    HttpsWebhookTransport.layer({
      allowHosts: options.allowHosts ?? [],
      ...(options.loopbackHttp === true ? { loopbackHttp: true } : {}),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.socketsPerHost === undefined ? {} : { socketsPerHost: options.socketsPerHost })
    }),
    options.smtp === undefined ? Mailer.Mailer.none : SmtpMailer.layer(options.smtp),
    AbiSources.layer(options.abiSources),
    EvmRpc.layer({
      ...options.rpc,
      urls: options.rpcUrls ?? new Map(),
      ...(options.rpcWsUrls === undefined ? {} : { wsUrls: options.rpcWsUrls })
    }),
    EvmAccounts.layer(options.rpcUrls ?? new Map()),
    EvmTransfers.layer(options.rpcUrls ?? new Map())
  )
