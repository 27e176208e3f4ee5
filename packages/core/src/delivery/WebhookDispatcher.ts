/**
 * The delivery loop: leases due deliveries from the outbox, sends each on its own fiber (a slow receiver holds
 * one slot, never the loop or the API) the way its destination takes it (a signed webhook request, or what the
 * channel's kind sends through its {@link Senders} entry: a Slack or Discord incoming-webhook post, a Telegram
 * Bot API call, an email through the relay), and settles it: delivered,
 * 410 disables the destination, anything else is retried with exponential backoff and jitter, then dead-lettered.
 */
import { Clock, Context, Effect, FiberSet, Layer, Queue, Random } from "effect"
import { Mailer } from "./Mailer.ts"
import { type Delivery, type Settle, type Settlement, type Webhook, WebhookStore } from "./WebhookStore.ts"
import { type Outcome as SendOutcome, WebhookTransport } from "./WebhookTransport.ts"
import { Instant, Version } from "../kernel/index.ts"
import * as WebhookSigning from "./WebhookSigning.ts"

/**
 * Wakes the delivery loop: a finished send, or new deliveries stored in this process, start a claim at once
 * instead of at the next poll. Deliveries stored by another process wait for the poll.
 */
export class Wake extends Context.Service<Wake, Queue.Queue<void>>()("@vigil/core/WebhookDispatcher/Wake") {
  static readonly layer: Layer.Layer<Wake> = Layer.effect(Wake)(Queue.dropping<void>(1))
}

/** How an attempt ended, as counted. */
export type Outcome = "delivered" | "retried" | "dead" | "gone"

/** The count each settlement goes to. */
const counted: Record<Settlement["_tag"], Outcome> = {
  Delivered: "delivered",
  Retry: "retried",
  Dead: "dead",
  Gone: "gone"
}

/**
 * What the delivery loop did in this process: attempts by kind of destination and outcome, and how long each
 * took (handed over once to whoever reports them, e.g. `/metrics`). Kinds are bounded: `intelligence` for
 * webhooks, else the channel's type.
 */
export class DeliveryCounts extends Context.Service<
  DeliveryCounts,
  {
    readonly record: (type: string, outcome: Outcome, seconds: number) => Effect.Effect<void>
    /**
     * Attempts so far by `type outcome`, the durations recorded since the last call, and the outbox's backlog
     * (pending and dead-lettered deliveries by kind, from the store: every process's).
     */
    readonly take: Effect.Effect<{
      readonly attempts: ReadonlyMap<string, number>
      readonly durations: ReadonlyArray<{ readonly type: string; readonly seconds: number }>
      readonly backlog: ReadonlyArray<{ readonly type: string; readonly pending: number; readonly dead: number }>
    }>
  }
>()("@vigil/core/WebhookDispatcher/DeliveryCounts") {
  static readonly layer: Layer.Layer<DeliveryCounts, never, WebhookStore | Senders> = Layer.effect(DeliveryCounts)(
    Effect.gen(function* () {
      const store = yield* WebhookStore
      // The kinds this process sends: the intelligence API's webhooks and each registered kind of channel.
      const kinds = ["intelligence", ...Object.keys(yield* Senders)]
      const attempts = new Map<string, number>()
      let durations: Array<{ type: string; seconds: number }> = []
      return DeliveryCounts.of({
        record: (type, outcome, seconds) =>
          Effect.sync(() => {
            const key = `${type} ${outcome}`
            attempts.set(key, (attempts.get(key) ?? 0) + 1)
            // Bounded: a reporter that never takes them keeps the newest 10,000.
            if (durations.length >= 10_000) durations = durations.slice(-5_000)
            durations.push({ type, seconds })
          }),
        take: Effect.gen(function* () {
          const stored = yield* Effect.orElseSucceed(store.backlog(), () => [])
          // Every kind, 0 where nothing waits: an absent series is not 0 in an alert rule, and a kind whose backlog
          // cleared must read 0, not its last count.
          const backlog = kinds.map((type) => stored.find((b) => b.type === type) ?? { type, pending: 0, dead: 0 })
          const taken = durations
          durations = []
          return { attempts: new Map(attempts), durations: taken, backlog }
        })
      })
    })
  )
}

/** Knobs of delivery. */
export interface Settings {
  /** Per-attempt timeout. */
  readonly timeoutMillis: number
  /** Attempts after the first before dead-lettering. */
  readonly retries: number
  /** Delay before the first retry; doubles each time, with jitter. */
  readonly backoffMillis: number
  readonly maxBackoffMillis: number
  /** Deliveries in flight at once, at most this many of one key, and of one destination. */
  readonly concurrency: number
  readonly perKey: number
  readonly perDestination: number
  /** How often the outbox is polled for due deliveries. */
  readonly pollMillis: number
  /** Base URL of the Telegram Bot API (`<base>/bot<token>/sendMessage`). */
  readonly telegramApiUrl: string
  /** HMAC-SHA256 that signs deliveries (default: in JavaScript; a Node host passes `node:crypto`'s). */
  readonly mac: WebhookSigning.Mac
}

/** The longest the delivery loop waits for its sends in flight before the next claim (see `layer`). */
export const gatherMillis = 20

export const defaultSettings: Settings = {
  timeoutMillis: 10_000,
  retries: 3,
  backoffMillis: 1_000,
  maxBackoffMillis: 3_600_000,
  concurrency: 64,
  perKey: 32,
  // A quarter of a key's share: a stalled destination leaves its key's other destinations slots of their own.
  perDestination: 8,
  pollMillis: 250,
  telegramApiUrl: "https://api.telegram.org",
  mac: WebhookSigning.pureMac
}

/** The wait before retry number `attempt` (1-based): `base·2^(attempt−1)`, capped, times a jitter in [0.5, 1). */
export const backoff = (settings: Settings, attempt: number, random01: number): number =>
  Math.round(Math.min(settings.maxBackoffMillis, settings.backoffMillis * 2 ** (attempt - 1)) * (0.5 + random01 / 2))

/** How an attempt's outcome settles the delivery. */
export const settlement = (
  settings: Settings,
  delivery: Delivery,
  outcome: SendOutcome,
  now: number,
  random01: number
): Settlement => {
  switch (outcome._tag) {
    case "Delivered":
      return { _tag: "Delivered", at: Instant.iso(now) }
    case "Gone":
      return { _tag: "Gone", at: Instant.iso(now), error: outcome.detail }
    case "Permanent":
      return { _tag: "Dead", error: `${outcome.detail} (not retried)` }
    case "Retry":
      return delivery.attempts > settings.retries
        ? { _tag: "Dead", error: `${outcome.detail} (after ${delivery.attempts} attempts)` }
        : { _tag: "Retry", at: now + backoff(settings, delivery.attempts, random01), error: outcome.detail }
  }
}

/** What a sender may use: a POST of the delivery's body through the transport, a mail through the relay. */
export interface Via {
  /** POSTs the delivery's body as JSON to `url`, with `headers` besides the content type and user agent. */
  readonly post: (url: string, headers?: Readonly<Record<string, string>>) => Effect.Effect<SendOutcome>
  readonly mail: (mail: {
    readonly to: ReadonlyArray<string>
    readonly subject: string
    readonly text: string
  }) => Effect.Effect<SendOutcome>
  readonly settings: Settings
}

/** Sends one delivery the way its kind of destination takes it. */
export type Sender = (delivery: Delivery, destination: Webhook, via: Via) => Effect.Effect<SendOutcome>

/**
 * The senders of channels, by kind, as the context that owns the kinds registers them (monitoring: one per kind of
 * notification channel); a delivery to a webhook of the intelligence API, which has no channel, is sent
 * {@link signed}. A channel of a kind no sender is registered for is dead-lettered, saying so.
 */
export class Senders extends Context.Service<Senders, Readonly<Record<string, Sender>>>()(
  "@vigil/core/WebhookDispatcher/Senders"
) {
  /** No channels: only webhooks of the intelligence API are sent. */
  static readonly none: Layer.Layer<Senders> = Layer.succeed(Senders)({})
}

/**
 * Why a key's deliveries may no longer be sent (its key revoked or expired), read as each is about to be sent: such
 * a delivery is dead-lettered with the reason (parked, visible, never retried), on whichever instance claims it.
 */
export class KeyStanding extends Context.Service<
  KeyStanding,
  { readonly lapsed: (keyId: string) => Effect.Effect<string | undefined> }
>()("@vigil/core/WebhookDispatcher/KeyStanding") {
  /** Every key stands (a host without keys). */
  static readonly always: Layer.Layer<KeyStanding> = Layer.succeed(KeyStanding)({
    lapsed: () => Effect.succeed(undefined)
  })
}

/** A Standard Webhooks request: the body signed with the destination's secret at the time it is sent. */
export const signed: Sender = (delivery, destination, via) =>
  Effect.flatMap(Clock.currentTimeMillis, (sentAt) =>
    via.post(
      destination.url,
      WebhookSigning.headers(
        destination.secret,
        delivery.id,
        Math.floor(sentAt / 1000),
        delivery.body,
        via.settings.mac
      )
    )
  )

/** What sending takes: the transport, the mail relay and the channels' senders, found once for every attempt. */
export interface Sending {
  readonly transport: WebhookTransport["Service"]
  readonly mailer: Mailer["Service"]
  readonly senders: Senders["Service"]
  readonly standing: KeyStanding["Service"]
  readonly settings: Settings
}

const json = { "content-type": "application/json", "user-agent": `Vigil-Webhooks/${Version.version}` }

/** Sends one delivery the way its destination takes it. */
const send = ({ transport, mailer, senders, settings }: Sending, delivery: Delivery, webhook: Webhook) => {
  const via: Via = {
    post: (url, headers = {}) =>
      transport.send({
        url,
        headers: { ...json, ...headers },
        body: delivery.body,
        timeoutMillis: settings.timeoutMillis
      }),
    mail: (mail) => mailer.send({ ...mail, id: delivery.id, timeoutMillis: settings.timeoutMillis }),
    settings
  }
  const type = webhook.channel?.type
  if (type === undefined) return signed(delivery, webhook, via)
  const sender = senders[type]
  if (sender === undefined)
    return Effect.succeed<SendOutcome>({ _tag: "Permanent", detail: `no sender of ${type} channels in this process` })
  return sender(delivery, webhook, via)
}

/** A sent delivery: how its attempt settles it, and how long the attempt took. */
export interface Attempted {
  readonly claimed: { readonly delivery: Delivery; readonly webhook: Webhook }
  readonly settlement: Settlement
  readonly seconds: number
}

/** Sends one leased delivery: its settlement (stored by the caller). */
export const attempt = Effect.fnUntraced(function* (
  sending: Sending,
  claimed: { readonly delivery: Delivery; readonly webhook: Webhook }
) {
  const { delivery, webhook } = claimed
  const started = yield* Clock.currentTimeMillis
  const lapsed = yield* sending.standing.lapsed(delivery.keyId)
  const outcome: SendOutcome =
    lapsed === undefined
      ? yield* send(sending, delivery, webhook)
      : { _tag: "Permanent", detail: `not sent: ${lapsed}` }
  const now = yield* Clock.currentTimeMillis
  return {
    claimed,
    settlement: settlement(sending.settings, delivery, outcome, now, yield* Random.next),
    seconds: (now - started) / 1000
  } satisfies Attempted
})

/** What the store is told of an attempt. */
const toSettle = ({ claimed: { delivery }, settlement: settled }: Attempted): Settle => ({
  id: delivery.id,
  attempt: delivery.attempts,
  settlement: settled
})

/** Counts and logs attempts whose settlements were stored. */
const recorded = Effect.fnUntraced(function* (attempts: ReadonlyArray<Attempted>) {
  const counts = yield* DeliveryCounts
  for (const { claimed, settlement: settled, seconds } of attempts) {
    yield* counts.record(claimed.webhook.channel?.type ?? "intelligence", counted[settled._tag], seconds)
    if (settled._tag !== "Delivered")
      yield* Effect.logWarning(
        `delivery ${claimed.delivery.id} to ${claimed.webhook.id}: ${settled.error} → ${settled._tag}`
      )
  }
})

/**
 * Runs the loop for as long as the layer lives (interrupting in-flight sends on shutdown; their leases expire
 * and they are sent again). After a claim that started sends, it claims again once the sends in flight have ended
 * (or as long as that claim took has passed, at most {@link gatherMillis}); otherwise as soon as a slot frees. It
 * claims fairly (`WebhookStore.fairPick`): no key holds more than `perKey` slots and no destination more than
 * `perDestination`, so a slow receiver cannot take the slots other keys, or its key's other destinations, need. A
 * send frees its slot as soon as it ends; its settlement joins those of the other sends that ended meanwhile, stored
 * by the next claim in its own transaction (so a turn of the loop is one transaction), while the lease keeps the
 * delivery from being claimed again. A settlement not stored when the process stops is as a send interrupted: the
 * lease expires and the delivery is sent again.
 */
export const layer = (
  settings: Settings = defaultSettings
): Layer.Layer<
  never,
  never,
  WebhookStore | WebhookTransport | Mailer | Wake | DeliveryCounts | Senders | KeyStanding
> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const store = yield* WebhookStore
      const wake = yield* Wake
      const sending: Sending = {
        transport: yield* WebhookTransport,
        mailer: yield* Mailer,
        senders: yield* Senders,
        standing: yield* KeyStanding,
        settings
      }
      // Attempts that ended, waiting for the next claim to store their settlements in its transaction.
      const ended = yield* Queue.unbounded<Attempted>()
      const context = yield* Effect.context<DeliveryCounts>()
      // What is left is stored on shutdown: finalizers run last first, so this one runs after the sends in flight
      // (whose fiber set is made below) were interrupted.
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(Queue.clear(ended), (rest) =>
          rest.length === 0
            ? Effect.void
            : Effect.flatMap(Clock.currentTimeMillis, (now) =>
                store.claim({ now, limit: 0, perKey: 0, leaseUntil: now, settle: rest.map(toSettle) })
              ).pipe(
                Effect.andThen(recorded(rest)),
                Effect.provide(context),
                Effect.catchCause((cause) => Effect.logError(`${rest.length} webhook deliveries not settled`, cause))
              )
        )
      )
      const inFlight = yield* FiberSet.make<void, never>()
      const perKey = new Map<string, number>()
      const perDestination = new Map<string, number>()
      const lease = settings.timeoutMillis + 2_000
      /** How long the last claim took (ms): the longest the loop then waits for the sends in flight to end. */
      let claimMillis = 0
      const count = (counts: Map<string, number>, id: string, by: number) => {
        const n = (counts.get(id) ?? 0) + by
        if (n <= 0) counts.delete(id)
        else counts.set(id, n)
      }
      const release = (delivery: Delivery) =>
        Effect.sync(() => {
          count(perKey, delivery.keyId, -1)
          count(perDestination, delivery.webhookId, -1)
        })
      /**
       * One claim, which first stores the settlements of the attempts that ended since the last one; how many
       * deliveries it started, or -1 when every slot is taken and nothing waits to be settled.
       */
      const cycle = Effect.gen(function* () {
        const done = yield* Queue.clear(ended)
        const free = settings.concurrency - (yield* FiberSet.size(inFlight))
        if (free <= 0 && done.length === 0) return -1
        const now = yield* Clock.currentTimeMillis
        const began = yield* Clock.currentTimeNanos
        const claimed = yield* store
          .claim({
            now,
            limit: Math.max(0, free),
            perKey: settings.perKey,
            perDestination: settings.perDestination,
            leaseUntil: now + lease,
            inFlight: { keys: Object.fromEntries(perKey), destinations: Object.fromEntries(perDestination) },
            settle: done.map(toSettle)
          })
          .pipe(
            // Not stored (a failure, a defect, or the loop interrupted at shutdown): the settlements wait for the
            // next claim or the finalizer (their leases keep the deliveries meanwhile; storing one twice changes
            // nothing, as a settlement only applies to the attempt still pending).
            Effect.onError(() => Effect.asVoid(Queue.offerAll(ended, done)))
          )
        claimMillis = Number((yield* Clock.currentTimeNanos) - began) / 1e6
        yield* recorded(done)
        for (const c of claimed) {
          count(perKey, c.delivery.keyId, 1)
          count(perDestination, c.delivery.webhookId, 1)
          yield* FiberSet.run(
            inFlight,
            attempt(sending, c).pipe(
              Effect.flatMap((a) => Queue.offer(ended, a)),
              Effect.catchCause((cause) => Effect.logError(`webhook delivery ${c.delivery.id} not settled`, cause)),
              Effect.ensuring(Effect.andThen(release(c.delivery), Queue.offer(wake, undefined)))
            )
          )
        }
        return claimed.length
      }).pipe(Effect.catchCause((cause) => Effect.as(Effect.logError("webhook outbox unavailable", cause), 0)))
      /**
       * After a claim that started sends, the next one waits for the sends in flight to end, for as long as the last
       * claim took at most (and never more than {@link gatherMillis}): a claim costs about the same however many it
       * settles and takes (on PostgreSQL, milliseconds), and one made at once would take only the sends that ended
       * while the last one ran, so that two claims would share a key's slots between them, each a part of the time.
       */
      const gather = Effect.flatMap(FiberSet.size(inFlight), (sending) => {
        const wait = Math.min(claimMillis, gatherMillis)
        return sending === 0 || wait <= 0
          ? Effect.yieldNow
          : Effect.andThen(Effect.race(FiberSet.awaitEmpty(inFlight), Effect.sleep(wait)), Effect.yieldNow)
      })
      // After a claim found work, claim again once the sends in flight ended (see gather); otherwise wait for a send
      // to finish or the poll interval.
      const loop = Effect.flatMap(cycle, (started) =>
        started > 0
          ? gather
          : Effect.race(
              // Woken by a send that ended: the sends whose answers this turn of the event loop read share the claim
              // (the loop yields once, behind them, instead of sleeping: a sleep left the process idle under load).
              Effect.andThen(Queue.take(wake), Effect.yieldNow),
              Effect.sleep(settings.pollMillis)
            ).pipe(Effect.asVoid)
      )
      yield* Effect.forkScoped(Effect.forever(loop))
    })
  )
