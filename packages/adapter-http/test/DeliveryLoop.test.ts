/**
 * The delivery loop over a real SQLite outbox, the HTTPS transport and a real receiver on loopback, under the
 * TestClock: when it claims again after a claim that started sends. The store is the real one; each claim is
 * recorded, and made to take 5 ms of the test's clock (as a claim on PostgreSQL takes milliseconds).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { HttpsWebhookTransport } from "@vigil/adapter-delivery"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { Mailer, WebhookDispatcher, WebhookSigning, WebhookStore } from "@vigil/core"
import { Context, Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Receiver from "@vigil/core-test/Receiver.ts"

let certs: Receiver.Certificates
beforeAll(() => {
  certs = Receiver.certificates()
})
afterAll(() => certs.dispose())

/** What one claim was given to settle and what it took. */
interface Claim {
  readonly settled: number
  readonly took: number
}

/** A SQLite database in a directory of its own, removed with the scope. */
const sqlite = Layer.unwrap(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "vigil-loop-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ),
    (dir) => SqliteAdapter.layer({ filename: join(dir, "vigil.db") })
  )
)

/** Registers a destination at `url` for key `k` and queues `n` deliveries to it, due now. */
const queue = (
  store: WebhookStore.WebhookStore["Service"],
  destinations: WebhookStore.Destinations["Service"],
  url: string,
  n: number
) =>
  Effect.gen(function* () {
    const webhook = "wh_1_aaaaaaaaa"
    yield* destinations.register(
      {
        id: webhook,
        keyId: "k",
        url,
        secret: WebhookSigning.newSecret(),
        created: new Date(0).toISOString(),
        deliveryCount: 0
      },
      10
    )
    yield* store.enqueue(
      Array.from({ length: n }, (_, i) => ({
        id: `msg_${i}`,
        webhookId: webhook,
        keyId: "k",
        correlationId: `c${i}`,
        body: JSON.stringify({ n: i }),
        attempts: 0,
        nextAttemptAt: 0,
        status: "pending" as const
      }))
    )
  })

/**
 * The delivery loop (one key's slots: `perKey`) started over the database's outbox once `n` deliveries to `url`
 * are queued there, each claim recorded in `claims` and taking `claimTakes` of the TestClock (5 ms). A send
 * times out after a minute, past every wait of a test: a hung one ends only with the test.
 */
const loop = (claims: Array<Claim>, perKey: number, url: string, n: number, claimTakes: Duration.Input = "5 millis") =>
  Effect.gen(function* () {
    const stores = yield* Layer.build(sqlite)
    const store = Context.get(stores, WebhookStore.WebhookStore)
    yield* queue(store, Context.get(stores, WebhookStore.Destinations), url, n)
    const recorded: WebhookStore.WebhookStore["Service"] = {
      ...store,
      claim: (request) =>
        Effect.tap(Effect.andThen(TestClock.adjust(claimTakes), store.claim(request)), (taken) =>
          Effect.sync(() => claims.push({ settled: request.settle?.length ?? 0, took: taken.length }))
        )
    }
    const outbox = Layer.succeedContext(stores.pipe(Context.add(WebhookStore.WebhookStore, recorded)))
    yield* Layer.build(
      WebhookDispatcher.layer({
        ...WebhookDispatcher.defaultSettings,
        perKey,
        perDestination: perKey,
        timeoutMillis: 60_000
      }).pipe(
        Layer.provide(
          Layer.mergeAll(
            outbox,
            HttpsWebhookTransport.layer({ allowHosts: ["127.0.0.1"], ca: certs.ca }),
            Mailer.Mailer.none,
            WebhookDispatcher.Wake.layer,
            WebhookDispatcher.Senders.none,
            WebhookDispatcher.KeyStanding.always,
            WebhookDispatcher.DeliveryCounts.layer.pipe(
              Layer.provide(Layer.merge(outbox, WebhookDispatcher.Senders.none))
            )
          )
        )
      )
    )
  })

const receiver = (behaviour?: Receiver.Behaviour) =>
  Effect.acquireRelease(
    Effect.promise(() => Receiver.start(certs, behaviour)),
    (r) => Effect.promise(() => r.close())
  )

const until = (read: () => boolean) =>
  Effect.promise(
    () =>
      new Promise<void>((done, fail) => {
        const started = Date.now()
        const poll = () =>
          read() ? done() : Date.now() - started > 10_000 ? fail(new Error("not reached")) : setTimeout(poll, 10)
        poll()
      })
  )

/**
 * Four deliveries, one key of 4 slots, claims taking `claimTakes`; the first request hangs and the others are
 * answered. Once they are, the loop is waiting on the hung send: one claim made, none since. Its claims.
 */
const waitingOnHung = (claimTakes: Duration.Input) =>
  Effect.gen(function* () {
    const claims: Array<Claim> = []
    const r = yield* receiver((n) => (n === 0 ? "hang" : 200))
    yield* loop(claims, 4, r.url("/hook"), 4, claimTakes)
    yield* until(() => r.received.filter((g) => g.status === 200).length === 3 && claims.length >= 1)
    assert.deepStrictEqual(claims, [{ settled: 0, took: 4 }], "no claim while the loop waits")
    return claims
  })

describe("the delivery loop", () => {
  it.effect(
    "claims again once the sends in flight ended, settling them in one claim, not one claim per send",
    () =>
      Effect.gen(function* () {
        const claims: Array<Claim> = []
        const r = yield* receiver()
        yield* loop(claims, 8, r.url("/hook"), 16)
        yield* until(() => claims.reduce((n, c) => n + c.settled, 0) === 16)
        // The first claim takes the key's 8 slots; the next settles those 8 and takes the other 8; the third
        // settles them. A loop that claimed at the first send's end settled a few at a time.
        assert.deepStrictEqual(
          claims.filter((c) => c.settled > 0 || c.took > 0),
          [
            { settled: 0, took: 8 },
            { settled: 8, took: 8 },
            { settled: 8, took: 0 }
          ]
        )
        assert.lengthOf(new Set(r.received.map((g) => g.headers["webhook-id"])), 16, "every delivery sent once")
      }).pipe(Effect.scoped),
    30_000
  )

  it.effect(
    "waits for a send that does not end no longer than the last claim took",
    () =>
      Effect.gen(function* () {
        const claims = yield* waitingOnHung("5 millis")
        // The loop waits on the hung send, and on the clock for as long as the last claim took (5 ms).
        yield* TestClock.adjust("5 millis")
        yield* until(() => claims.some((c) => c.settled > 0))
        assert.isAtMost(claims.find((c) => c.settled > 0)!.settled, 3, "the hung send is not settled")
      }).pipe(Effect.scoped),
    30_000
  )

  it.effect(
    "waits for a send that does not end no longer than 20 ms, however long the last claim took",
    () =>
      Effect.gen(function* () {
        const claims = yield* waitingOnHung("50 millis")
        // 20 ms of the clock end the wait, not the 50 ms the claim took.
        yield* TestClock.adjust(Duration.millis(WebhookDispatcher.gatherMillis))
        yield* until(() => claims.some((c) => c.settled > 0))
      }).pipe(Effect.scoped),
    30_000
  )
})
