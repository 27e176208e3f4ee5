/**
 * Webhook registration (at most 5 per key, HTTPS only, public addresses only) and the fan-out of one event
 * into durable, signed deliveries, one per active webhook of the key. What an event says is its sender's
 * business: delivery wraps it in the envelope of spec §6 and never looks inside.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as NetworkGuard from "./NetworkGuard.ts"
import { HostResolver } from "./HostResolver.ts"
import { Instant, RandomIds, type StoreError } from "../kernel/index.ts"
import { Destinations, type Webhook, type WebhookStats } from "./WebhookStore.ts"
import { messageId, Outbox } from "./Outbox.ts"
import * as WebhookSigning from "./WebhookSigning.ts"

/** The URL is not an HTTPS URL of a public host. `reason` says which rule it broke. */
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", {
  reason: Schema.String
}) {
  override get message() {
    return "Invalid webhook URL provided"
  }
}

/** The key already has the most webhooks allowed. */
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>()("WebhookLimitReached", {
  max: Schema.Int
}) {
  override get message() {
    return `Maximum ${this.max} webhooks allowed per client`
  }
}

/** No webhook with this id belongs to the key (whether or not another key has one). */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", {
  id: Schema.String
}) {
  override get message() {
    return "Webhook not found"
  }
}

/** An asynchronous request for a key with no active webhook: there is nowhere to deliver. */
export class NoWebhooks extends Schema.TaggedError<NoWebhooks>()("NoWebhooks", {}) {
  override get message() {
    return "No active webhooks registered for this client"
  }
}

/** Policy of registration. */
export interface Settings {
  /** Webhooks per key (spec: 5). */
  readonly maxPerKey: number
  /** Hosts exempt from the public-address rule (HTTPS is still required); empty by default. */
  readonly allowHosts: ReadonlyArray<string>
  /** Plain HTTP to loopback accepted (development on one machine; the server listens on loopback). */
  readonly loopbackHttp?: boolean
}

export const defaultSettings: Settings = { maxPerKey: 5, allowHosts: [] }

/** Checks the addresses `host` stands for now; the transport checks again at every delivery. */
export const guardHost = Effect.fnUntraced(function* (allowHosts: ReadonlyArray<string>, host: string) {
  if (NetworkGuard.allowed(allowHosts, host)) return
  const resolver = yield* HostResolver
  const addresses = yield* resolver
    .resolve(host)
    .pipe(Effect.mapError((e) => new InvalidWebhookUrl({ reason: `cannot resolve ${host}: ${e.message}` })))
  for (const ip of addresses) {
    const why = NetworkGuard.forbiddenAddress(ip)
    if (why !== undefined) return yield* new InvalidWebhookUrl({ reason: `${host} resolves to ${ip}, ${why}` })
  }
})

/** An event to deliver, opaque to delivery: `data` is sent as the envelope's `data`. */
export interface Event {
  /** Ties the deliveries of one event to the request that caused it; receivers deduplicate by it. */
  readonly correlationId: string
  /** Any JSON value. */
  readonly data: unknown
}

/**
 * The text of each destination's delivery of `event` ({@link Envelope}, keys in its order): the event's data is
 * serialised once for all of them, not once each (it is most of the body, and an event goes to up to five).
 */
export const envelope = (timestamp: string, event: Event): ((webhookId: string) => string) => {
  const opening = `{"timestamp":${JSON.stringify(timestamp)},"correlation_id":${JSON.stringify(event.correlationId)}`
  const data: string | undefined = JSON.stringify(event.data)
  const closing = data === undefined ? "}" : `,"data":${data}}`
  return (webhookId) => `${opening},"webhook_id":${JSON.stringify(webhookId)}${closing}`
}

/** The body of every delivery (spec §6), whatever the event: `data` is the event's own. */
export const Envelope = <Data extends Schema.Top>(data: Data) =>
  Schema.Struct({
    timestamp: Schema.String,
    correlation_id: Schema.String,
    webhook_id: Schema.String,
    data
  })

/** A webhook as registration returns it: the only time its secret is shown. */
export type Registered = Pick<Webhook, "id" | "url" | "created" | "secret">

/** Manages a key's webhooks and queues deliveries. */
export class Webhooks extends Context.Service<
  Webhooks,
  {
    readonly register: (
      keyId: string,
      url: string
    ) => Effect.Effect<Registered, InvalidWebhookUrl | WebhookLimitReached | StoreError.StoreError>
    readonly list: (keyId: string) => Effect.Effect<ReadonlyArray<Webhook>, StoreError.StoreError>
    /** The key's webhooks that are not disabled: where {@link enqueue} would send an event now. */
    readonly active: (keyId: string) => Effect.Effect<ReadonlyArray<Webhook>, StoreError.StoreError>
    readonly remove: (keyId: string, id: string) => Effect.Effect<void, WebhookNotFound | StoreError.StoreError>
    readonly stats: (keyId: string) => Effect.Effect<ReadonlyArray<WebhookStats>, StoreError.StoreError>
    /**
     * Stores one signed-on-send delivery of `event` per webhook of `destinations` (the key's {@link active} ones, as
     * the caller read them) that is still active, all or none, and returns how many; the request may be
     * acknowledged once this succeeds. None stored (no destinations, or all removed or disabled since): NoWebhooks.
     */
    readonly enqueue: (
      destinations: ReadonlyArray<Webhook>,
      event: Event
    ) => Effect.Effect<number, NoWebhooks | StoreError.StoreError>
  }
>()("@vigil/core/Webhooks") {
  static readonly layer = (
    settings: Settings = defaultSettings
  ): Layer.Layer<Webhooks, never, Destinations | HostResolver | Outbox> =>
    Layer.effect(Webhooks)(
      Effect.gen(function* () {
        const store = yield* Destinations
        const resolver = yield* HostResolver
        const outbox = yield* Outbox
        const nowIso = Instant.iso

        const register = Effect.fn("Webhooks.register")(function* (keyId: string, url: string) {
          const checked = NetworkGuard.checkUrl(url, settings.loopbackHttp === true)
          if ("reason" in checked) return yield* new InvalidWebhookUrl({ reason: checked.reason })
          // Plain HTTP was accepted only to loopback: the address check is the one it passed.
          if (!checked.plain)
            yield* guardHost(settings.allowHosts, checked.host).pipe(Effect.provideService(HostResolver, resolver))
          const now = yield* Clock.currentTimeMillis
          const webhook: Webhook = {
            id: `wh_${now}_${RandomIds.alphanumeric(9)}`,
            keyId,
            url: checked.url,
            secret: WebhookSigning.newSecret(),
            created: nowIso(now),
            deliveryCount: 0
          }
          if (!(yield* store.register(webhook, settings.maxPerKey))) {
            return yield* new WebhookLimitReached({ max: settings.maxPerKey })
          }
          return { id: webhook.id, url: webhook.url, created: webhook.created, secret: webhook.secret }
        })

        const active = (keyId: string) =>
          Effect.map(store.list(keyId), (all) => all.filter((w) => w.disabledAt === undefined))

        const enqueue = Effect.fn("Webhooks.enqueue")(function* (destinations: ReadonlyArray<Webhook>, event: Event) {
          if (destinations.length === 0) return yield* new NoWebhooks()
          const now = yield* Clock.currentTimeMillis
          const body = envelope(nowIso(now), event)
          const deliveries = destinations.map((w) => ({
            id: messageId(now),
            webhookId: w.id,
            keyId: w.keyId,
            correlationId: event.correlationId,
            body: body(w.id),
            attempts: 0,
            nextAttemptAt: now,
            status: "pending" as const
          }))
          const stored = yield* outbox.enqueue(deliveries)
          if (stored === 0) return yield* new NoWebhooks()
          return stored
        })

        return Webhooks.of({
          register,
          list: store.list,
          active,
          remove: (keyId, id) =>
            Effect.flatMap(store.remove(keyId, id), (removed) =>
              removed ? Effect.void : Effect.fail(new WebhookNotFound({ id }))
            ),
          stats: store.stats,
          enqueue
        })
      })
    )
}
