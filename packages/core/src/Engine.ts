/**
 * The composition of the core services over the ports, in one place, so that every host builds the same
 * product: the HTTP server, the `vigil` command and an embedding application. A host adds the adapters: a
 * storage (memory, SQLite) and the outbound ones (a host resolver and a transport for webhooks and chat services, a
 * mail relay, verified-source services for ABIs, the chains' nodes).
 */
import { Clock, Effect, Layer } from "effect"
import { ApiKeys, ApiKeyStore, Quota, type QuotaStore } from "./access/index.ts"
import {
  type HostResolver,
  type Mailer,
  Outbox,
  WebhookDispatcher,
  Webhooks,
  type WebhookStore,
  type WebhookTransport
} from "./delivery/index.ts"
import {
  type AbiSource,
  Alerts,
  type BlockStore,
  Bots,
  type BotStore,
  type ChainData,
  Channels,
  Contracts,
  type ContractStore,
  Follower,
  type FollowLeases,
  type FollowStore,
  History,
  Notifications
} from "./monitoring/index.ts"
import {
  Answers,
  ChainActivity,
  Exposure,
  Intelligence,
  type IntelIndex,
  ResultCache,
  Screening
} from "./screening/index.ts"

/** How webhooks are registered and delivered; every field has a default. */
export interface WebhookSettings {
  /** Hosts exempt from the public-address rule (HTTPS stays required). Default none. */
  readonly allowHosts?: ReadonlyArray<string>
  /**
   * Plain HTTP to loopback accepted for webhooks and channels (development on one machine). Grant it only to a
   * server that listens on loopback itself. Default false.
   */
  readonly loopbackHttp?: boolean
  /** Delivery knobs (timeout, retries, backoff…); defaults in `WebhookDispatcher.defaultSettings`. */
  readonly delivery?: Partial<WebhookDispatcher.Settings>
}

/** The services a screening host answers with. */
export type Services =
  | ApiKeys.ApiKeys
  | Quota.Quota
  | Screening.Screening
  | ResultCache.ResultCache
  | Intelligence.Intelligence
  | ChainActivity.ChainActivity
  | Exposure.Exposure
  | Answers.Answers
  | Webhooks.Webhooks
  | Contracts.Contracts
  | Bots.Bots
  | History.History
  | Notifications.Notifications
  | Alerts.Alerts
  | Follower.Follower
  | WebhookDispatcher.DeliveryCounts

/** The storage ports the services read and write. */
export type Storage =
  | ApiKeyStore.ApiKeyStore
  | QuotaStore.QuotaStore
  | IntelIndex.IntelIndex
  | IntelIndex.Versions
  | IntelIndex.Administration
  | WebhookStore.WebhookStore
  | WebhookStore.Destinations
  | ContractStore.ContractStore
  | BotStore.BotStore
  | BlockStore.BlockStore
  | FollowStore.FollowStore
  | FollowStore.AlertLog
  | FollowLeases.FollowLeases

/**
 * What the services reach outside the process: names, webhooks and chat services, the mail relay, verified-source
 * services, chains' nodes.
 */
export type Outbound =
  | HostResolver.HostResolver
  | WebhookTransport.WebhookTransport
  | Mailer.Mailer
  | AbiSource.AbiSource
  | ChainData.ChainData
  | ChainData.ContractState
  | ChainActivity.AccountReader
  | Exposure.TransferReader

/** Screening alone over an intelligence index: what a host that only screens needs. */
export const screening: Layer.Layer<
  Screening.Screening | ResultCache.ResultCache | Intelligence.Intelligence,
  never,
  IntelIndex.IntelIndex
> = Intelligence.Intelligence.layer.pipe(
  Layer.provideMerge(Layer.merge(Screening.Screening.layer, ResultCache.ResultCache.layer()))
)

/** A key's deliveries stop when the key is revoked or expires (read from the store, as every instance sees it). */
const keyStanding: Layer.Layer<WebhookDispatcher.KeyStanding, never, ApiKeyStore.ApiKeyStore> = Layer.effect(
  WebhookDispatcher.KeyStanding
)(
  Effect.map(Effect.service(ApiKeyStore.ApiKeyStore), (keys) => ({
    lapsed: (keyId: string) =>
      Effect.zipWith(keys.find(keyId), Clock.currentTimeMillis, (record, now) => ApiKeys.lapsed(record, now)).pipe(
        // A store that cannot answer now stops nothing: the next attempt asks again.
        Effect.orElseSucceed(() => undefined)
      )
  }))
)

/**
 * Every service, plus the background work of a long-running host: ended quota windows are pruned every minute,
 * the webhook outbox is delivered, and each chain with an active bot is followed, for as long as the layer lives.
 */
export const layer = (
  settings: {
    readonly webhooks?: WebhookSettings
    readonly follow?: Partial<Follower.Settings>
    /** How on-chain activity is read (budget, memory); defaults in `ChainActivity.defaultSettings`. */
    readonly activity?: Partial<ChainActivity.Settings>
    /** How counterparty exposure is read (budget, window, dust); defaults in `Exposure.defaultSettings`. */
    readonly exposure?: Partial<Exposure.Settings>
  } = {}
): Layer.Layer<Services, never, Storage | Outbound> =>
  Layer.mergeAll(
    ApiKeys.ApiKeys.layer,
    Quota.Quota.layer,
    Quota.pruning,
    // Answers, over the screening and the evidence the nodes give.
    Answers.Answers.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          screening,
          ChainActivity.ChainActivity.layer({ ...ChainActivity.defaultSettings, ...settings.activity }),
          Exposure.Exposure.layer({ ...Exposure.defaultSettings, ...settings.exposure })
        )
      )
    ),
    Webhooks.Webhooks.layer({
      ...Webhooks.defaultSettings,
      allowHosts: settings.webhooks?.allowHosts ?? [],
      loopbackHttp: settings.webhooks?.loopbackHttp === true
    }),
    // Webhooks of the intelligence API, and every kind of notification channel through its own sender.
    WebhookDispatcher.layer({ ...WebhookDispatcher.defaultSettings, ...settings.webhooks?.delivery }).pipe(
      Layer.provide(Channels.senders),
      Layer.provide(keyStanding)
    ),
    Contracts.Contracts.layer,
    Layer.merge(History.History.layer, Alerts.Alerts.layer).pipe(Layer.provideMerge(Bots.Bots.layer)),
    Follower.layer({ ...Follower.defaultSettings, ...settings.follow }),
    Notifications.Notifications.layer({
      ...Notifications.defaultSettings,
      allowHosts: settings.webhooks?.allowHosts ?? [],
      loopbackHttp: settings.webhooks?.loopbackHttp === true
    })
  ).pipe(
    // One wake-up queue: the outbox's `enqueue` and `wake` nudge the same delivery loop.
    Layer.provide(Outbox.Outbox.layer.pipe(Layer.provideMerge(WebhookDispatcher.Wake.layer))),
    Layer.provideMerge(WebhookDispatcher.DeliveryCounts.layer.pipe(Layer.provide(Channels.senders)))
  )
