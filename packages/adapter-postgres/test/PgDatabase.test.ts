/**
 * What PostgreSQL adds to the contracts: several instances (each its own pool, as separate processes would have) on
 * one database acting as one store, migrations that instances starting together run once, a database written by a
 * newer build refused, and a server that does not answer named in one line.
 */
import { PgAdapter, PgDatabase } from "@vigil/adapter-postgres"
import { ApiKeyStore, FollowStore, IntelIndex, QuotaStore, StorageProbe, WebhookStore } from "@vigil/core"
import { settled } from "@vigil/core-test/contracts/WebhookStoreContract.ts"
import { Postgres } from "@vigil/testkit"
import { fc } from "@fast-check/vitest"
import { Clock, Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

let run: Postgres.RunDatabase | undefined

beforeAll(async () => {
  run = await Postgres.createDatabase()
})

afterAll(async () => {
  await run?.drop()
})

/** `n` instances of the adapter on one schema, each with its own pool, for the scope's life. */
const instances = (n: number, schema: string) =>
  Effect.forEach(
    Array.from({ length: n }),
    () => Layer.build(PgAdapter.layer({ url: run!.url, schema, maxConnections: 4 })),
    { concurrency: "unbounded" }
  )

/** The outbox and its destinations of an instance, as one object (one store implements both). */
const outboxOf = (
  context: Context.Context<WebhookStore.WebhookStore | WebhookStore.Destinations>
): WebhookStore.Both => ({
  ...Context.get(context, WebhookStore.WebhookStore),
  ...Context.get(context, WebhookStore.Destinations)
})

/** An instance on a schema of its own whose key `key-1` has five destinations, `wh_1` to `wh_5`, for the scope's life. */
const fiveDestinations = Effect.gen(function* () {
  const schema = Postgres.schemaName()
  const [instance] = yield* instances(1, schema)
  const { sql } = Context.get(instance!, PgDatabase.PgDatabase)
  yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created)
             SELECT 'wh_' || w, 'key-1', 'https://example.com/' || w, 'whsec_c2VjcmV0', '2026-01-01T00:00:00.000Z'
             FROM generate_series(1, 5) AS w`
  return { schema, instance: instance!, sql }
})

/** `effect`'s result, and the blocks it read of `table` (the table's and every index's), on one connection. */
const withBlocksRead = <A, E, R>(
  sql: PgDatabase.PgDatabase["Service"]["sql"],
  table: string,
  effect: Effect.Effect<A, E, R>
) =>
  sql.withTransaction(
    Effect.gen(function* () {
      const blocks = Effect.map(
        sql<{ readonly n: number }>`
          SELECT (pg_stat_get_xact_blocks_fetched(${table}::regclass)
            + (SELECT sum(pg_stat_get_xact_blocks_fetched(indexrelid)) FROM pg_index
               WHERE indrelid = ${table}::regclass))::int AS n`,
        ([row]) => row!.n
      )
      const before = yield* blocks
      const result = yield* effect
      return { result, fetched: (yield* blocks) - before }
    })
  )

const day = (key: string, limit: number): QuotaStore.QuotaWindow => ({ key, start: 0, millis: 86_400_000, limit })

describe("PostgreSQL: several instances, one store", () => {
  it("grants exactly a quota's limit when two instances charge it at once", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const stores = [Context.get(a!, QuotaStore.QuotaStore), Context.get(b!, QuotaStore.QuotaStore)]
      // 1000 requests of one address each against a daily limit of 500, alternating between the instances.
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 1_000 }, (_, i) => i),
        (i) =>
          stores[i % 2]!.charge(1, [day("key-1", 500), { key: "key-1:rate", start: 0, millis: 1_000, limit: 2_000 }]),
        { concurrency: 64 }
      )
      assert.strictEqual(outcomes.filter((o) => o.granted).length, 500)
      const [usage] = yield* stores[1]!.usage([day("key-1", 500)])
      assert.strictEqual(usage?.used, 500, "what both decided is what the database holds")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("sees a key revoked on one instance as revoked on the other as soon as the change is heard", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const here = Context.get(a!, ApiKeyStore.ApiKeyStore)
      const there = Context.get(b!, ApiKeyStore.ApiKeyStore)
      yield* here.insert({
        id: "k1",
        name: "Acme",
        hash: "00",
        qps: 10,
        daily: 10,
        monthly: 10,
        createdAt: "2026-01-01T00:00:00.000Z"
      })
      assert.isUndefined((yield* there.find("k1"))?.revokedAt)
      yield* here.revoke("k1", "2026-01-02T00:00:00.000Z")
      // The other instance hears the change at its commit's notice, which crosses the network: within a second at most.
      const revokedThere = Effect.map(there.find("k1"), (record) => record?.revokedAt === "2026-01-02T00:00:00.000Z")
      assert.isTrue(yield* within(1_000, revokedThere), "refused by the other instance within a second")
    }).pipe(Effect.scoped, Effect.runPromise))
})

/** Polls `check` every 20 ms until it holds or `millis` have passed (a notice crosses the network): whether it held. */
const within = (millis: number, check: Effect.Effect<boolean, unknown>) =>
  Effect.gen(function* () {
    const started = performance.now()
    while (!(yield* check)) {
      if (performance.now() - started > millis) return false
      yield* Effect.sleep(20)
    }
    return true
  })

/** The connections listening on `channel` (but this one): how many, and cutting them. */
const listenersOn = (sql: PgDatabase.PgDatabase["Service"]["sql"], channel: string) => {
  const pattern = `LISTEN%${channel}%`
  return {
    count: Effect.map(
      sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE ${pattern} AND pid <> pg_backend_pid()`,
      (rows) => rows.length
    ),
    cut: sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE ${pattern} AND pid <> pg_backend_pid()`
  }
}

describe("PostgreSQL: list changes heard by every instance", () => {
  it("answers a list committed on another instance within a second, also after its listener was cut", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const [a, b] = yield* instances(2, schema)
      const reader = IntelIndex.allOf(a!)
      const writer = IntelIndex.allOf(b!)
      const { sql } = Context.get(a!, PgDatabase.PgDatabase)
      const listed = (address: string) => Effect.map(reader.lookup([address]), (records) => records.length > 0)
      const list = (name: string, address: string, beforeCommit: Effect.Effect<void, unknown> = Effect.void) =>
        Effect.gen(function* () {
          const info = {
            list: name,
            source: name,
            kind: "address-list",
            mode: "snapshot" as const,
            origin: "test",
            ingestedAt: "2026-01-01T00:00:00.000Z",
            authority: "official" as const
          }
          const id = yield* writer.stage(info)
          yield* writer.append(id, [
            { address, family: "evm", category: "sanctions", reference: `ref-${address}`, listedAt: "2026-01-01" }
          ])
          yield* beforeCommit
          yield* writer.commit(id, { asOf: "2026-01-01", contentHash: name })
        })
      const first = `0x${"1".repeat(40)}`
      const second = `0x${"2".repeat(40)}`
      const listeners = listenersOn(sql, "vigil_intel")
      assert.isTrue(
        yield* within(
          1_000,
          Effect.map(listeners.count, (n) => n === 2)
        ),
        "both listen"
      )
      // Read (and remembered) clean by the reader just before the writer commits the list that names it.
      yield* list(
        "one",
        first,
        Effect.map(listed(first), (found) => assert.isFalse(found))
      )
      // Heard at once through the commit's notice (without it, the reading just made would hold for a second).
      assert.isTrue(yield* within(200, listed(first)), "seen at once")
      // The reader's listening connection is cut: it answers by the database meanwhile, and listens again.
      yield* listeners.cut
      assert.isFalse(yield* listed(second))
      yield* list("two", second)
      assert.isTrue(yield* within(1_000, listed(second)), "seen within a second without a listener")
      assert.isTrue(
        yield* within(
          3_000,
          Effect.map(listeners.count, (n) => n === 2)
        ),
        "both listen again"
      )
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: key changes heard by every instance", () => {
  it("refuses a key revoked on another instance at once, and within a second after its listener was cut", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const reader = Context.get(a!, ApiKeyStore.ApiKeyStore)
      const writer = Context.get(b!, ApiKeyStore.ApiKeyStore)
      const { sql } = Context.get(a!, PgDatabase.PgDatabase)
      const key = (id: string): ApiKeyStore.ApiKeyRecord => ({
        id,
        name: id,
        hash: `hash-${id}`,
        qps: 10,
        daily: 100,
        monthly: 1_000,
        createdAt: "2026-01-01T00:00:00.000Z"
      })
      const revoked = (id: string) => Effect.map(reader.find(id), (record) => record?.revokedAt !== undefined)
      const listeners = listenersOn(sql, "vigil_keys")
      assert.isTrue(
        yield* within(
          1_000,
          Effect.map(listeners.count, (n) => n === 2)
        ),
        "both listen"
      )
      for (const id of ["first", "second"]) yield* writer.insert(key(id))
      // Read (and remembered) by the reader, then revoked by the writer: heard at once through the commit's notice.
      assert.isFalse(yield* revoked("first"))
      assert.isFalse(yield* revoked("first"), "read again from memory")
      yield* writer.revoke("first", "2026-01-02T00:00:00.000Z")
      assert.isTrue(yield* within(500, revoked("first")), "refused at once")
      // The reader's listening connection is cut: what it remembered is not trusted past a second.
      assert.isFalse(yield* revoked("second"))
      yield* listeners.cut
      yield* writer.revoke("second", "2026-01-02T00:00:00.000Z")
      assert.isTrue(yield* within(1_000, revoked("second")), "refused within a second without a listener")
      assert.isTrue(
        yield* within(
          3_000,
          Effect.map(listeners.count, (n) => n === 2)
        ),
        "both listen again"
      )
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: one outbox for every instance", () => {
  it("never leases one delivery to two instances claiming at once", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const stores = [outboxOf(a!), outboxOf(b!)]
      const hooks = Array.from({ length: 4 }, (_, i) => `wh_${i}`)
      for (const id of hooks)
        yield* stores[0]!.register(
          {
            id,
            keyId: `key-${id}`,
            url: `https://example.com/${id}`,
            secret: "whsec_c2VjcmV0",
            created: "2026-01-01T00:00:00.000Z",
            deliveryCount: 0
          },
          5
        )
      const deliveries = Array.from({ length: 400 }, (_, i) => ({
        id: `msg_${i}`,
        webhookId: hooks[i % hooks.length]!,
        keyId: `key-${hooks[i % hooks.length]!}`,
        correlationId: `c_${i}`,
        body: "{}",
        attempts: 0,
        nextAttemptAt: 0,
        status: "pending" as const
      }))
      assert.strictEqual(yield* stores[1]!.enqueue(deliveries), 400)
      // Both instances claim in turns as fast as they can until nothing is left, each settling what it leased
      // (which frees its slots: the caps count every instance's leases); every lease is counted.
      const leased: Array<string> = []
      const drain = (store: WebhookStore.Both) =>
        Effect.gen(function* () {
          for (;;) {
            const claimed = yield* store.claim({
              now: 10_000,
              limit: 16,
              perKey: 8,
              leaseUntil: 1_000_000,
              inFlight: {},
              perDestination: 4
            })
            if (claimed.length === 0) return
            leased.push(...claimed.map((c) => c.delivery.id))
            for (const c of claimed)
              yield* settled(store, c.delivery.id, c.delivery.attempts, {
                _tag: "Delivered",
                at: "2026-01-01T00:00:01.000Z"
              })
          }
        })
      yield* Effect.all([drain(stores[0]!), drain(stores[1]!), drain(stores[0]!), drain(stores[1]!)], {
        concurrency: "unbounded"
      })
      assert.strictEqual(new Set(leased).size, leased.length, "no delivery leased twice")
      assert.strictEqual(leased.length, 400, "every delivery leased once")
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: in-flight caps across instances", () => {
  it("counts every instance's leases against a key's and a destination's cap", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const [here, there] = [outboxOf(a!), outboxOf(b!)]
      for (const id of ["wh_a", "wh_b"])
        yield* here.register(
          {
            id,
            keyId: "key-1",
            url: `https://example.com/${id}`,
            secret: "whsec_c2VjcmV0",
            created: "2026-01-01T00:00:00.000Z",
            deliveryCount: 0
          },
          5
        )
      yield* here.enqueue(
        Array.from({ length: 40 }, (_, i) => ({
          id: `msg_${String(i).padStart(2, "0")}`,
          webhookId: i % 2 === 0 ? "wh_a" : "wh_b",
          keyId: "key-1",
          correlationId: `c_${i}`,
          body: "{}",
          attempts: 0,
          nextAttemptAt: 0,
          status: "pending" as const
        }))
      )
      const lease = 1_000_000
      /** What `store` holds in flight (as its dispatcher would pass it): per key and per destination. */
      const holding = (claimed: ReadonlyArray<WebhookStore.Claimed>) => ({
        keys: { "key-1": claimed.length },
        destinations: Object.fromEntries(
          ["wh_a", "wh_b"].map((w) => [w, claimed.filter((c) => c.delivery.webhookId === w).length])
        )
      })
      /** A claim by `store` at 10 s (well past the deliveries' due time, short of the leases' end): a key may have 6 in flight, a destination 4. */
      const claimAt = (store: WebhookStore.Both, inFlight: WebhookStore.InFlight = {}) =>
        store.claim({ now: 10_000, limit: 32, perKey: 6, perDestination: 4, leaseUntil: lease, inFlight })
      // Two instances measure the database's clock only to within a round trip. The first instance takes 6.
      const first = yield* claimAt(here)
      assert.strictEqual(first.length, 6)
      // The other instance, with nothing of its own in flight, gets nothing: the key's cap is taken.
      assert.deepStrictEqual(yield* claimAt(there), [])
      // Three settle: three slots free, for whichever instance claims next.
      for (const c of first.slice(0, 3))
        yield* settled(here, c.delivery.id, c.delivery.attempts, { _tag: "Delivered", at: "2026-01-01T00:00:01.000Z" })
      const second = yield* claimAt(there)
      assert.strictEqual(second.length, 3)
      assert.deepStrictEqual(yield* claimAt(here, holding(first.slice(3))), [])
      // A retry scheduled frees its slot too (the lease is no longer held), though the delivery stays pending.
      const retried = first[3]!
      yield* settled(here, retried.delivery.id, retried.delivery.attempts, {
        _tag: "Retry",
        at: lease * 2,
        error: "503"
      })
      assert.strictEqual((yield* claimAt(there, holding(second))).length, 1)
      // Leases that ran out (an instance that died) hold nothing: past them, the other instance has the whole cap.
      const after = yield* there.claim({
        now: lease + 1_000,
        limit: 32,
        perKey: 6,
        perDestination: 4,
        leaseUntil: lease * 3
      })
      assert.strictEqual(after.length, 6)
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: a claim in one statement", () => {
  /** A delivery of the property: its key and destination by number, and when it is due. */
  interface Queued {
    readonly key: number
    readonly destination: number
    readonly due: number
  }
  const counts = fc.dictionary(fc.constantFrom("0", "1", "2"), fc.integer({ min: 0, max: 3 }), { maxKeys: 2 })
  const claimCase = fc.record({
    destinations: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
    queued: fc.array(fc.record({ key: fc.nat(2), destination: fc.nat(2), due: fc.integer({ min: 0, max: 60 }) }), {
      minLength: 8,
      maxLength: 40
    }),
    others: fc.integer({ min: 0, max: 3 }),
    limit: fc.integer({ min: 0, max: 12 }),
    perKey: fc.integer({ min: 1, max: 8 }),
    perDestination: fc.integer({ min: 1, max: 5 }),
    mineKeys: counts,
    mineDestinations: counts
  })

  it("leases what WebhookStore.fairPick picks from each destination's oldest due deliveries, counting both instances' in flight", async () => {
    const [[here, there], scope] = await Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const [a, b] = yield* instances(2, Postgres.schemaName()).pipe(Scope.provide(scope))
        return [[outboxOf(a!), outboxOf(b!)], scope] as const
      })
    )
    let round = 0
    try {
      await fc.assert(
        fc.asyncProperty(claimCase, async (c) => {
          round += 1
          // Each round its own keys and destinations (alphanumeric, so the database orders them as JavaScript does).
          const keyId = (k: number) => `keyr${String(round).padStart(3, "0")}k${k}`
          const webhookId = (k: number, d: number) => `whr${String(round).padStart(3, "0")}k${k}d${d}`
          const queued = c.queued
            .filter((q) => q.key < c.destinations.length)
            .map((q) => ({ ...q, destination: q.destination % c.destinations[q.key]! }))
          const now = 50
          const ids = queued.map((_, i) => `msgr${String(round).padStart(3, "0")}n${String(i).padStart(2, "0")}`)
          await Effect.runPromise(
            Effect.gen(function* () {
              for (const [k, n] of c.destinations.entries())
                for (let d = 0; d < n; d++)
                  yield* here.register(
                    {
                      id: webhookId(k, d),
                      keyId: keyId(k),
                      url: `https://example.com/${webhookId(k, d)}`,
                      secret: "whsec_c2VjcmV0",
                      created: "2026-01-01T00:00:00.000Z",
                      deliveryCount: 0
                    },
                    5
                  )
              // One at a time: queueing order (a tie's order) is the order given.
              for (const [i, q] of queued.entries())
                yield* here.enqueue([
                  {
                    id: ids[i]!,
                    webhookId: webhookId(q.key, q.destination),
                    keyId: keyId(q.key),
                    correlationId: ids[i]!,
                    body: `{"n":${i}}`,
                    attempts: 0,
                    nextAttemptAt: q.due,
                    status: "pending"
                  }
                ])
            })
          )
          try {
            const lease = 1_000_000
            // The other instance leases some first: they are in flight there, held against the caps here.
            const byOthers = await Effect.runPromise(
              there.claim({ now, limit: c.others, perKey: 8, perDestination: 8, leaseUntil: lease })
            )
            const mine = (record: Readonly<Record<string, number>>, id: (n: number) => string) =>
              Object.fromEntries(Object.entries(record).map(([n, count]) => [id(Number(n)), count]))
            const inFlight = {
              keys: mine(c.mineKeys, keyId),
              destinations: mine(c.mineDestinations, (n) => webhookId(0, n))
            }
            const claimed = await Effect.runPromise(
              here.claim({
                now,
                limit: c.limit,
                perKey: c.perKey,
                perDestination: c.perDestination,
                leaseUntil: lease,
                inFlight
              })
            )
            // The expected, computed apart: each destination's `each` oldest due deliveries not leased (oldest first,
            // a tie in queueing order), destinations in order of their oldest, then by id; then fairPick over them,
            // with what both instances hold in flight added.
            const leasedThere = new Set(byOthers.map((x) => x.delivery.id))
            const each = c.limit <= 0 ? 0 : Math.max(1, Math.min(c.perDestination, c.perKey, c.limit))
            const queues = new Map<string, Array<{ readonly id: string; readonly q: Queued; readonly i: number }>>()
            for (const [i, q] of queued.entries()) {
              if (q.due > now || leasedThere.has(ids[i]!)) continue
              const w = webhookId(q.key, q.destination)
              queues.set(w, [...(queues.get(w) ?? []), { id: ids[i]!, q, i }])
            }
            const candidates = [...queues.entries()]
              .map(([w, xs]) => [w, [...xs].sort((a, b) => a.q.due - b.q.due || a.i - b.i).slice(0, each)] as const)
              .filter(([, xs]) => xs.length > 0)
              .sort(([wa, a], [wb, b]) => a[0]!.q.due - b[0]!.q.due || (wa < wb ? -1 : 1))
              .flatMap(([w, xs]) => xs.map((x) => ({ id: x.id, delivery: { keyId: keyId(x.q.key), webhookId: w } })))
            const add = (a: Readonly<Record<string, number>>, id: (c: WebhookStore.Claimed) => string) => {
              const sum: Record<string, number> = { ...a }
              for (const x of byOthers) sum[id(x)] = (sum[id(x)] ?? 0) + 1
              return sum
            }
            const expected = WebhookStore.fairPick(candidates, c.limit, c.perKey, c.perDestination, {
              keys: add(inFlight.keys, (x) => x.delivery.keyId),
              destinations: add(inFlight.destinations, (x) => x.delivery.webhookId)
            })
            assert.deepStrictEqual(
              claimed.map((x) => x.delivery.id),
              expected.map((x) => x.id)
            )
            // Each leased with its own body, its attempt counted, due again when its lease runs out.
            for (const x of claimed) {
              const i = ids.indexOf(x.delivery.id)
              assert.strictEqual(x.delivery.body, `{"n":${i}}`)
              assert.strictEqual(x.delivery.attempts, 1)
              assert.strictEqual(x.delivery.nextAttemptAt, lease)
              assert.strictEqual(x.webhook.id, x.delivery.webhookId)
            }
          } finally {
            // Nothing of this round stays due for the next (also when it failed).
            await Effect.runPromise(
              Effect.forEach(c.destinations.entries(), ([k, n]) =>
                here.park(
                  keyId(k),
                  Array.from({ length: n }, (_, d) => webhookId(k, d)),
                  "round over"
                )
              )
            )
          }
        }),
        { numRuns: 60 }
      )
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("PostgreSQL: requests reading destinations and queueing deliveries at once", () => {
  it("answers each asker its own key's destinations and stores each caller's deliveries, read and written together", () =>
    Effect.gen(function* () {
      const [context] = yield* instances(1, Postgres.schemaName())
      const { sql } = Context.get(context!, PgDatabase.PgDatabase)
      const webhooks = outboxOf(context!)
      const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`)
      for (const [i, key] of keys.entries()) {
        yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created)
                   VALUES (${`wh_${i}_a`}, ${key}, 'https://example.com/a', 'whsec_x', '2026-01-01T00:00:00.000Z'),
                          (${`wh_${i}_b`}, ${key}, 'https://example.com/b', 'whsec_x', '2026-01-02T00:00:00.000Z')`
        yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created, channel)
                   VALUES (${`wh_${i}_c`}, ${key}, 'https://example.com/c', 'whsec_x', '2026-01-01T00:00:00.000Z',
                           ${i === 3 ? '{"type":"pager"}' : '{"type":"webhook","name":"ops","url":"https://example.com/c"}'})`
      }
      yield* sql`UPDATE webhooks SET disabled_at = '2026-01-03T00:00:00.000Z' WHERE id = 'wh_5_b'`
      // Every key's two lists asked for at once: one statement reads them, each asker gets its key's in its scope.
      const lists = yield* Effect.forEach(
        keys.flatMap(
          (key) =>
            [
              [key, "webhooks"],
              [key, "channels"]
            ] as const
        ),
        ([key, scope]) => Effect.exit(webhooks.list(key, scope)),
        { concurrency: "unbounded" }
      )
      for (const [i] of keys.entries()) {
        const [own, channels] = [lists[2 * i]!, lists[2 * i + 1]!]
        assert.deepStrictEqual(
          Exit.isSuccess(own) ? own.value.map((w) => w.id) : own,
          [`wh_${i}_a`, `wh_${i}_b`],
          `key-${i}'s webhooks, oldest first`
        )
        // The one channel that does not decode fails its key's channels only.
        if (i === 3) assert.isTrue(Exit.isFailure(channels))
        else
          assert.deepStrictEqual(Exit.isSuccess(channels) ? channels.value.map((w) => w.id) : channels, [`wh_${i}_c`])
      }
      // Every key's deliveries queued at once: each caller is told how many of its own were stored (none to a
      // disabled destination), and every one stored is there once.
      const delivery = (i: number, to: string): WebhookStore.Delivery => ({
        id: `msg_${i}_${to}`,
        webhookId: `wh_${i}_${to}`,
        keyId: `key-${i}`,
        correlationId: `c${i}`,
        body: `{"n":${i}}`,
        attempts: 0,
        nextAttemptAt: 0,
        status: "pending"
      })
      const stored = yield* Effect.forEach(
        keys.map((_, i) => i),
        (i) => webhooks.enqueue([delivery(i, "a"), delivery(i, "b")]),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        stored,
        keys.map((_, i) => (i === 5 ? 1 : 2))
      )
      const rows = yield* sql<{ readonly id: string; readonly body: string }>`
        SELECT id, body FROM webhook_deliveries ORDER BY id`
      assert.strictEqual(rows.length, 23)
      assert.isFalse(rows.some((r) => r.id === "msg_5_b"))
      assert.isTrue(rows.every((r) => r.body === `{"n":${r.id.split("_")[1]}}`))
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: the outbox on the database's clock", () => {
  it("keeps a delivery leased by an instance whose clock is an hour behind from the other instance", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const hour = 3_600_000
      const real = Clock.Clock.defaultValue()
      const behind: Clock.Clock = {
        ...real,
        currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() - hour,
        currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() - hour),
        currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() - BigInt(hour) * 1_000_000n,
        currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() - BigInt(hour) * 1_000_000n)
      }
      const [late] = yield* instances(1, schema).pipe(Effect.provideService(Clock.Clock, behind))
      const [onTime] = yield* instances(1, schema).pipe(Effect.provideService(Clock.Clock, real))
      const [slow, other] = [outboxOf(late!), outboxOf(onTime!)]
      yield* other.register(
        {
          id: "wh_1",
          keyId: "key-1",
          url: "https://example.com/1",
          secret: "whsec_c2VjcmV0",
          created: "2026-01-01T00:00:00.000Z",
          deliveryCount: 0
        },
        5
      )
      const now = Date.now()
      yield* other.enqueue([
        {
          id: "msg_1",
          webhookId: "wh_1",
          keyId: "key-1",
          correlationId: "c_1",
          body: "{}",
          attempts: 0,
          nextAttemptAt: now,
          status: "pending"
        }
      ])
      // Stored by the instance on time, due now: the late instance, an hour behind, sees it due at its own now (each
      // step a second past its boundary: two instances measure one clock's skew only to within a round trip).
      const lateNow = now - hour
      const leased = yield* slow.claim({
        now: lateNow + 1_000,
        limit: 8,
        perKey: 8,
        leaseUntil: lateNow + 13_000,
        inFlight: {},
        perDestination: 4
      })
      assert.deepStrictEqual(
        leased.map((c) => [c.delivery.id, c.delivery.nextAttemptAt]),
        [["msg_1", lateNow + 13_000]]
      )
      // Its lease runs for 12 s on the database's clock, not until an hour ago: the instance on time cannot take it.
      assert.deepStrictEqual(
        yield* other.claim({
          now: now + 1_000,
          limit: 8,
          perKey: 8,
          leaseUntil: now + 13_000,
          inFlight: {},
          perDestination: 4
        }),
        []
      )
      // Once the lease has run out (on anyone's clock), it is due again for the instance on time.
      assert.strictEqual(
        (yield* other.claim({
          now: now + 14_000,
          limit: 8,
          perKey: 8,
          leaseUntil: now + 26_000,
          inFlight: {},
          perDestination: 4
        })).length,
        1
      )
      const [stored] = yield* other.deliveriesOf(["c_1"])
      assert.strictEqual(stored?.nextAttemptAt, now + 26_000, "told on the instance's own clock")
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: health", () => {
  it("reports a write held up by another writer's lock as busy, and stays ready", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2, Postgres.schemaName())
      const probe = Context.get(a!, StorageProbe.StorageProbe)
      assert.strictEqual((yield* probe.check).write, "ok")
      const { sql } = Context.get(b!, PgDatabase.PgDatabase)
      // The other instance holds the health table in a transaction that has not ended.
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Effect.forkScoped(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE vigil_health IN EXCLUSIVE MODE`
            yield* Deferred.succeed(held, undefined)
            yield* Deferred.await(release)
          })
        )
      )
      yield* Deferred.await(held)
      const status = yield* probe.check
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(status.write, "busy")
      assert.strictEqual(status.kind, "postgres")
      assert.strictEqual(status.schemaVersion, PgDatabase.schemaVersion)
      assert.isTrue(StorageProbe.ready(status), "another writer's lock is not a fault")
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: a quota charge's commit", () => {
  it("has the outbox vacuumed after every 5,000 rows changed, and knows whether the server's autovacuum runs", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const [instance] = yield* instances(1, schema)
      const { sql } = Context.get(instance!, PgDatabase.PgDatabase)
      const autovacuum = yield* Effect.provide(PgDatabase.autovacuumOn, instance!)
      const [table] = yield* sql<{ readonly options: ReadonlyArray<string> | null }>`
        SELECT c.reloptions AS options FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${schema} AND c.relname = 'webhook_deliveries'`
      assert.deepStrictEqual([...(table?.options ?? [])].sort(), [
        "autovacuum_vacuum_insert_scale_factor=0",
        "autovacuum_vacuum_insert_threshold=5000",
        "autovacuum_vacuum_scale_factor=0",
        "autovacuum_vacuum_threshold=5000"
      ])
      const [server] = yield* sql<{ readonly setting: string }>`SELECT current_setting('autovacuum') AS setting`
      assert.strictEqual(autovacuum, server?.setting === "on")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("finds the destinations with pending deliveries in the index of pending ones, however many were delivered", () =>
    Effect.gen(function* () {
      // Each destination with 4,000 deliveries made and 4,000 waiting (a backlog), the statistics taken then: the
      // index by (webhook, status), which holds every delivery, answers "the first pending row by webhook" too,
      // after walking each webhook's delivered ones.
      const { schema, sql } = yield* fiveDestinations
      yield* sql`INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts,
                   next_attempt_at, status)
                 SELECT 'd_' || w || '_' || i, 'wh_' || w, 'key-1', 'c_' || i, '{}', 0, i,
                        CASE WHEN i <= 4000 THEN 'delivered' ELSE 'pending' END
                 FROM generate_series(1, 5) AS w, generate_series(1, 8000) AS i`
      yield* sql`ANALYZE webhook_deliveries`
      const session = yield* sql.reserve
      /** Scans of each index of the outbox, as this session's statistics have them (writes are not scans). */
      const read = Effect.gen(function* () {
        // Flushed at the end of this statement's transaction; the next one reads them.
        yield* session.execute("SELECT pg_stat_force_next_flush()", [], undefined)
        const rows = yield* session.execute(
          `SELECT indexrelname AS name, idx_scan::int AS scans FROM pg_stat_user_indexes
           WHERE schemaname = '${schema}' AND relname = 'webhook_deliveries'`,
          [],
          undefined
        )
        return new Map(rows.map((r) => [String(r.name), Number(r.scans)]))
      })
      const before = yield* read
      const claimed = yield* session.execute(
        `SELECT json_array_length(vigil_claim('{}', '{}', '{}', 1000000, 8, 'me', 64, 32, 8, '{}', '{}', '{}', '{}',
           2000000)) AS n`,
        [],
        undefined
      )
      const after = yield* read
      const grew = (index: string) => (after.get(index) ?? 0) - (before.get(index) ?? 0)
      assert.strictEqual(Number(claimed[0]?.n), 32, "a key's share leased, 8 from each of four destinations")
      assert.isAbove(grew("webhook_deliveries_pending"), 0)
      // The index of pending deliveries found them, the primary key locked them, the index of leases counted what
      // other instances hold: no index that holds the deliveries made (the bulk of the table) was walked.
      assert.deepStrictEqual(
        [...after.keys()].filter((index) => grew(index) > 0).sort(),
        ["webhook_deliveries_leased", "webhook_deliveries_pending", "webhook_deliveries_pkey"],
        "the history of deliveries made is not scanned"
      )
    }).pipe(Effect.scoped, Effect.runPromise))

  it("keeps an index of the outbox only for what is read, so a delivery's three writes touch no other", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const [instance] = yield* instances(1, schema)
      const { sql } = Context.get(instance!, PgDatabase.PgDatabase)
      const indexes = yield* sql<{ readonly name: string; readonly definition: string }>`
        SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = ${schema} AND tablename = 'webhook_deliveries' ORDER BY indexname`
      // By id (settling, the primary key), by correlation (an alert's deliveries), a destination's pending ones (the
      // claim), its failed ones (stats, redelivery), its last outcome, and the leases held per key: every one is
      // read. The delivered rows, most of the table, are in the primary key, by correlation and the outcomes alone.
      assert.deepStrictEqual(
        indexes.map((i) => i.name),
        [
          "webhook_deliveries_by_correlation",
          "webhook_deliveries_dead",
          "webhook_deliveries_leased",
          "webhook_deliveries_outcomes",
          "webhook_deliveries_pending",
          "webhook_deliveries_pkey"
        ]
      )
      for (const partial of ["dead", "leased", "pending"])
        assert.match(
          indexes.find((i) => i.name === `webhook_deliveries_${partial}`)!.definition,
          / WHERE /,
          `the index of ${partial} deliveries holds those alone`
        )
    }).pipe(Effect.scoped, Effect.runPromise))

  it("reads each destination's last outcome from a few pages of an index, however many deliveries it made", () =>
    Effect.gen(function* () {
      // 4,000 deliveries made by each destination, the last of the third one failing.
      const { schema, instance, sql } = yield* fiveDestinations
      yield* sql`INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts,
                   next_attempt_at, status, last_error)
                 SELECT 'd_' || w || '_' || i, 'wh_' || w, 'key-1', 'c_' || i, repeat('x', 500), 1, i,
                        CASE WHEN w = 3 AND i = 4000 THEN 'dead' ELSE 'delivered' END,
                        CASE WHEN w = 3 AND i = 4000 THEN 'HTTP 500' END
                 FROM generate_series(1, 5) AS w, generate_series(1, 4000) AS i ORDER BY i, w`
      yield* sql`ANALYZE webhook_deliveries`
      const [table] = yield* sql<{ readonly pages: number }>`
        SELECT relpages AS pages FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${schema} AND c.relname = 'webhook_deliveries'`
      // On one connection (a transaction's), whose count of the table's blocks read, not yet reported, the database
      // gives at once: read before and after.
      const { stats, fetched } = yield* sql.withTransaction(
        Effect.gen(function* () {
          const blocks = Effect.map(
            sql<{ readonly n: number }>`
              SELECT pg_stat_get_xact_blocks_fetched('webhook_deliveries'::regclass)::int AS n`,
            ([row]) => row!.n
          )
          const before = yield* blocks
          const stats = yield* Context.get(instance, WebhookStore.Destinations).stats("key-1")
          return { stats, fetched: (yield* blocks) - before }
        })
      )
      assert.deepStrictEqual(
        stats.map((w) => [w.id, w.lastError ?? null, w.failed]),
        [
          ["wh_1", null, 0],
          ["wh_2", null, 0],
          ["wh_3", "HTTP 500", 1],
          ["wh_4", null, 0],
          ["wh_5", null, 0]
        ]
      )
      assert.isAbove(table!.pages, 500)
      assert.isBelow(fetched, 50, "a few pages per destination, not its every delivery")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("counts the outbox's backlog from the same few pages, however many deliveries and destinations there are", () =>
    Effect.gen(function* () {
      // Three deliveries waiting at the second destination, two failed at the fourth (a channel), among 2,000 made
      // by each destination; then among 20,000 each, with 300 more destinations.
      const { instance, sql } = yield* fiveDestinations
      yield* sql`UPDATE webhooks SET channel = '{"type":"slack"}' WHERE id = 'wh_4'`
      const made = (from: number, to: number) =>
        sql`INSERT INTO webhook_deliveries (id, webhook_id, key_id, correlation_id, body, attempts,
              next_attempt_at, status, last_error)
            SELECT 'd_' || w || '_' || i, 'wh_' || w, 'key-1', 'c_' || i, '{}', 1, i,
                   CASE WHEN w = 2 AND i <= 3 THEN 'pending' WHEN w = 4 AND i <= 2 THEN 'dead' ELSE 'delivered' END,
                   CASE WHEN w = 4 AND i <= 2 THEN 'HTTP 500' END
            FROM generate_series(1, 5) AS w, generate_series(${from}::int, ${to}::int) AS i ORDER BY i, w`.pipe(
          // Statistics of both tables, as a server's autovacuum keeps them.
          Effect.andThen(sql`ANALYZE webhook_deliveries, webhooks`)
        )
      /** The backlog, and the outbox's blocks it read. */
      const backlog = withBlocksRead(
        sql,
        "webhook_deliveries",
        Context.get(instance, WebhookStore.WebhookStore).backlog()
      )
      const expected = [
        { type: "intelligence", pending: 3, dead: 0 },
        { type: "slack", pending: 0, dead: 2 }
      ]
      yield* made(1, 2_000)
      const few = yield* backlog
      yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created)
                 SELECT 'idle_' || w, 'key-2', 'https://example.com/idle', 'whsec_c2VjcmV0', '2026-01-01T00:00:00.000Z'
                 FROM generate_series(1, 300) AS w`
      yield* made(2_001, 20_000)
      const many = yield* backlog
      assert.deepStrictEqual(few.result, expected)
      assert.deepStrictEqual(many.result, expected)
      assert.isAtMost(
        many.fetched,
        few.fetched + 5,
        "ten times the deliveries, 61 times the destinations, the same pages"
      )
      assert.isBelow(many.fetched, 20)
    }).pipe(Effect.scoped, Effect.runPromise))

  it("counts a chain's retracted alerts from the same few pages, however many alerts there are", () =>
    Effect.gen(function* () {
      // Two of chain 1's alerts retracted and one of chain 2's, among 2,000 alerts, then among 20,000.
      const [instance] = yield* instances(1, Postgres.schemaName())
      const { sql } = Context.get(instance!, PgDatabase.PgDatabase)
      const store = Context.get(instance!, FollowStore.AlertLog)
      const stored = (from: number, to: number) =>
        sql`INSERT INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule,
              expression, transactions, evidence, created, retracted_at)
            SELECT 'a' || i, 'k', 'b', CASE WHEN i = 1 THEN 2 ELSE 1 END, i, '0x', i, 0, 'e', '{}',
                   repeat('x', 500), '2026-01-01', CASE WHEN i IN (1, 7, 900) THEN '2026-01-02' END
            FROM generate_series(${from}::int, ${to}::int) AS i`.pipe(Effect.andThen(sql`ANALYZE monitor_alerts`))
      /** The counts of chains 1 to 3, and the alerts' blocks they read. */
      const counted = withBlocksRead(
        sql,
        "monitor_alerts",
        Effect.all([store.retracted(1), store.retracted(2), store.retracted(3)])
      )
      yield* stored(1, 2_000)
      const few = yield* counted
      yield* stored(2_001, 20_000)
      const many = yield* counted
      assert.deepStrictEqual(few.result, [2, 1, 0])
      assert.deepStrictEqual(many.result, [2, 1, 0])
      assert.isAtMost(many.fetched, few.fetched + 3, "ten times the alerts, the same pages")
      assert.isBelow(many.fetched, 20)
    }).pipe(Effect.scoped, Effect.runPromise))

  it("does not wait for the write-ahead log's flush, and leaves the next transaction on the session waiting for it", () =>
    Effect.gen(function* () {
      const [instance] = yield* instances(1, Postgres.schemaName())
      const { sql } = Context.get(instance!, PgDatabase.PgDatabase)
      // One session throughout: before, inside and after the charge's transaction.
      const session = yield* sql.reserve
      const setting = (text: string) =>
        Effect.map(session.execute(text, [], undefined), (rows) => String(rows[0]?.synchronous_commit))
      const before = yield* setting("SHOW synchronous_commit")
      yield* session.executeRaw("BEGIN", [])
      const charged = yield* session.execute(
        `SELECT used::text AS used, granted FROM vigil_charge(
           ARRAY[0]::int[], ARRAY[1]::bigint[], ARRAY['k']::text[], ARRAY[0]::bigint[], ARRAY[1000]::bigint[],
           ARRAY[5]::float8[])`,
        [],
        undefined
      )
      const inCharge = yield* setting("SHOW synchronous_commit")
      yield* session.executeRaw("COMMIT", [])
      const after = yield* setting("SHOW synchronous_commit")
      assert.deepStrictEqual(charged, [{ used: "1", granted: true }])
      assert.deepStrictEqual([before, inCharge, after], ["on", "off", "on"])
      // Through the port, the count the committed charge left.
      const usage = yield* Context.get(instance!, QuotaStore.QuotaStore).usage([
        { key: "k", start: 0, millis: 1000, limit: 5 }
      ])
      assert.strictEqual(usage[0]?.used, 1)
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: a lock another transaction holds", () => {
  it("fails a statement that waits for it Busy at the lock timeout, not the statement timeout", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const [holder] = yield* instances(1, schema)
      const waiter = yield* Layer.build(
        PgAdapter.layer({
          url: run!.url,
          schema,
          maxConnections: 4,
          lockTimeoutMillis: 200,
          statementTimeoutMillis: 60_000
        })
      )
      const { sql } = Context.get(holder!, PgDatabase.PgDatabase)
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Effect.forkScoped(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE`
            yield* Deferred.succeed(held, undefined)
            yield* Deferred.await(release)
          })
        )
      )
      yield* Deferred.await(held)
      const refused = yield* Effect.flip(Context.get(waiter, ApiKeyStore.ApiKeyStore).list)
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(refused.reason, "Busy", refused.message)
      assert.match(refused.message, /lock timeout/)
      // Once the lock is released, the same store answers.
      assert.deepStrictEqual(yield* Context.get(waiter, ApiKeyStore.ApiKeyStore).list, [])
      const [row] = yield* Context.get(waiter, PgDatabase.PgDatabase).sql<{
        readonly lock_timeout: string
      }>`SHOW lock_timeout`
      assert.strictEqual(row?.lock_timeout, "200ms")
      const [fallback] = yield* sql<{ readonly lock_timeout: string }>`SHOW lock_timeout`
      assert.strictEqual(fallback?.lock_timeout, `${PgDatabase.defaultLockTimeoutMillis / 1000}s`)
    }).pipe(Effect.scoped, Effect.runPromise))

  it("lets an instance starting while another holds the migrations table wait past its lock timeout, then start", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const [first] = yield* instances(1, schema)
      const { sql } = Context.get(first!, PgDatabase.PgDatabase)
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Effect.forkScoped(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE ${sql(PgDatabase.migrationsTable)} IN ACCESS EXCLUSIVE MODE`
            yield* Deferred.succeed(held, undefined)
            yield* Deferred.await(release)
          })
        )
      )
      yield* Deferred.await(held)
      const starting = yield* Effect.forkScoped(
        Effect.exit(Layer.build(PgAdapter.layer({ url: run!.url, schema, maxConnections: 4, lockTimeoutMillis: 100 })))
      )
      // The starting instance waits for the lock three times as long as its lock timeout, as the server sees it.
      const waitedPast = Effect.map(
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND now() - query_start > interval '300 milliseconds'`,
        ([row]) => (row?.n ?? 0) > 0
      )
      const waited = yield* within(10_000, waitedPast)
      yield* Deferred.succeed(release, undefined)
      assert.isTrue(waited, "the starting instance waited for the migrations table")
      const exit = yield* Fiber.join(starting)
      assert.isTrue(Exit.isSuccess(exit), String(exit))
    }).pipe(Effect.scoped, Effect.runPromise))
})

describe("PostgreSQL: migrations", () => {
  it("migrates once when several instances start together on a new schema", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const started = yield* instances(4, schema)
      const { sql } = Context.get(started[0]!, PgDatabase.PgDatabase)
      const applied = yield* sql<{ readonly migration_id: number }>`
        SELECT migration_id FROM ${sql(PgDatabase.migrationsTable)} ORDER BY migration_id`
      assert.deepStrictEqual(
        applied.map((r) => r.migration_id),
        Array.from({ length: PgDatabase.schemaVersion }, (_, i) => i + 1)
      )
    }).pipe(Effect.scoped, Effect.runPromise))

  it("sets the statement timeout it was given on every connection", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        PgAdapter.layer({ url: run!.url, schema: Postgres.schemaName(), statementTimeoutMillis: 1_234 })
      )
      const { sql } = Context.get(context, PgDatabase.PgDatabase)
      const [row] = yield* sql<{ readonly statement_timeout: string }>`SHOW statement_timeout`
      assert.strictEqual(row?.statement_timeout, "1234ms")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("reads stored JSON columns through their codecs: a channel or an alert's evidence that does not decode is Corrupt, named", () =>
    Effect.gen(function* () {
      const [context] = yield* instances(1, Postgres.schemaName())
      const { sql } = Context.get(context!, PgDatabase.PgDatabase)
      const webhooks = outboxOf(context!)
      yield* sql`INSERT INTO webhooks (id, key_id, url, secret, created, channel)
                 VALUES ('wh_1_a', 'key-a', 'https://example.com/hook', 'whsec_x', '2026-01-01T00:00:00.000Z', '{"type":"pager"}')`
      const evidence = '{"transactions":{},"frames":{},"occurrences":{},"held":[]}'
      for (const [id, text] of [
        ["al_good", evidence],
        ["al_bad", '{"amount":']
      ] as const)
        yield* sql`INSERT INTO monitor_alerts (id, key_id, bot_id, chain_id, block_number, block_hash, block_time, rule,
                     expression, transactions, evidence, created)
                   VALUES (${id}, 'key-a', 'bot_1', 1, 5, '0x05', 10, 0, 'true', '{"tx":"0x01"}', ${text}, '2026-01-01T00:00:00.000Z')`
      const listed = yield* Effect.flip(webhooks.list("key-a", "channels"))
      assert.strictEqual(listed.reason, "Corrupt")
      assert.strictEqual(listed.message, "the stored channel of destination wh_1_a does not decode")
      // The claim reads its destinations through the same codec.
      yield* webhooks.enqueue([
        {
          id: "msg_1",
          webhookId: "wh_1_a",
          keyId: "key-a",
          correlationId: "c1",
          body: "{}",
          attempts: 0,
          nextAttemptAt: 0,
          status: "pending"
        }
      ])
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* Effect.flip(webhooks.claim({ now, limit: 10, perKey: 10, leaseUntil: now + 60_000 }))
      assert.strictEqual(claimed.message, "the stored channel of destination wh_1_a does not decode")
      const recent = yield* Effect.flip(Context.get(context!, FollowStore.AlertLog).recent("bot_1", 0))
      assert.strictEqual(recent.reason, "Corrupt")
      assert.strictEqual(recent.message, "the stored evidence of alert al_bad does not decode")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("refuses a database a newer build has migrated, saying so", () =>
    Effect.gen(function* () {
      const schema = Postgres.schemaName()
      const scope = yield* Scope.make()
      const [first] = yield* instances(1, schema).pipe(Scope.provide(scope))
      const { sql } = Context.get(first!, PgDatabase.PgDatabase)
      yield* sql`INSERT INTO ${sql(PgDatabase.migrationsTable)} (migration_id, name) VALUES (${PgDatabase.schemaVersion + 1}, 'from_the_future')`
      yield* Scope.close(scope, Exit.void)
      const opened = yield* Effect.exit(instances(1, schema))
      assert.isTrue(Exit.isFailure(opened))
      const error = Exit.isFailure(opened) ? JSON.stringify(opened.cause) : ""
      assert.include(error, "Incompatible")
      assert.include(error, "migrated by a newer build of Vigil")
    }).pipe(Effect.scoped, Effect.runPromise))

  it("names a server that does not answer, and how to point elsewhere, in one line", async () => {
    const refused = await Postgres.createDatabase("postgres://postgres@127.0.0.1:9/postgres").then(
      () => undefined,
      (e: Error) => e.message
    )
    assert.isDefined(refused)
    assert.notInclude(refused!, "\n")
    assert.match(
      refused!,
      /^PostgreSQL does not answer at postgres:\/\/postgres@127\.0\.0\.1:9\/postgres .*VIGIL_TEST_POSTGRES_URL/
    )
  })
})
