/** `vigil keys create|list|revoke`: API keys, shown in plain text once, at creation, and stored hashed. */
import { ApiKeys, type ApiKeyStore } from "@vigil/core"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CommandFailed, databaseFailure, needsSubcommand } from "./CommandFailed.ts"
import * as JsonLine from "./JsonLine.ts"
import { databaseFlag } from "./ServeCommand.ts"
import * as Store from "./Store.ts"

/** Keys over the store `db` names: a SQLite file or a PostgreSQL database. */
const keysLayer = (db: string) => ApiKeys.ApiKeys.layer.pipe(Layer.provideMerge(Store.keys(db)))

/** A key as the CLI shows it: everything but the hash, plus its state now. */
const view = (record: ApiKeyStore.ApiKeyRecord, now: number) => ({
  id: record.id,
  name: record.name,
  status:
    record.revokedAt !== undefined
      ? "revoked"
      : record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now
        ? "expired"
        : "active",
  qps: record.qps,
  daily: record.daily,
  monthly: record.monthly,
  createdAt: record.createdAt,
  expiresAt: record.expiresAt ?? null,
  revokedAt: record.revokedAt ?? null
})

const limit = (name: string, what: string) =>
  Flag.Int(name).pipe(Flag.withDescription(`${what} (positive whole number)`), Flag.optional)

const create = Command.make(
  "create",
  {
    db: databaseFlag,
    name: Flag.String("name").pipe(Flag.withDescription("Client organisation the key belongs to (required)")),
    qps: limit("qps", `Requests per second, default ${ApiKeys.defaultLimits.qps}`),
    daily: limit("daily", `Addresses per UTC day, default ${ApiKeys.defaultLimits.daily}`),
    monthly: limit("monthly", `Addresses per UTC month, default ${ApiKeys.defaultLimits.monthly}`),
    expires: Flag.String("expires").pipe(
      Flag.withDescription("ISO 8601 date or instant from which the key no longer works"),
      Flag.optional
    )
  },
  ({ db, name, qps, daily, monthly, expires }) =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const issued = yield* keys.issue({
        name,
        ...Option.match(qps, { onNone: () => ({}), onSome: (qps) => ({ qps }) }),
        ...Option.match(daily, { onNone: () => ({}), onSome: (daily) => ({ daily }) }),
        ...Option.match(monthly, { onNone: () => ({}), onSome: (monthly) => ({ monthly }) }),
        ...Option.match(expires, { onNone: () => ({}), onSome: (expiresAt) => ({ expiresAt }) })
      })
      yield* JsonLine.print({ key: issued.key, ...view(issued.record, yield* Clock.currentTimeMillis) })
      yield* Console.error("vigil: store this key now; only its hash is kept, so it cannot be shown again")
    }).pipe(
      Effect.provide(keysLayer(db)),
      Effect.catchTags({
        StoreError: databaseFailure(db),
        InvalidKeyRequest: (e) => Effect.fail(new CommandFailed({ message: e.message }))
      })
    )
).pipe(
  Command.withDescription("Issue an API key and print it once (JSON line with the key)"),
  Command.withExamples([
    { command: 'vigil keys create --name "Acme Exchange" --daily 50000', description: "A key with its own daily quota" }
  ])
)

const list = Command.make("list", { db: databaseFlag }, ({ db }) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys.ApiKeys
    const now = yield* Clock.currentTimeMillis
    for (const record of yield* keys.list) yield* JsonLine.print(view(record, now))
  }).pipe(Effect.provide(keysLayer(db)), Effect.catchTag("StoreError", databaseFailure(db)))
).pipe(
  Command.withDescription("List API keys (never the keys themselves), one JSON line each"),
  Command.withExamples([{ command: "vigil keys list", description: "Every key, never its secret" }])
)

const revoke = Command.make(
  "revoke",
  { db: databaseFlag, id: Argument.String("id").pipe(Argument.withDescription("Key id, as shown by keys list")) },
  ({ db, id }) =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const revoked = yield* keys.revoke(id)
      if (revoked === undefined) return yield* new CommandFailed({ message: `no API key with id ${id}` })
      yield* JsonLine.print(view(revoked, yield* Clock.currentTimeMillis))
    }).pipe(Effect.provide(keysLayer(db)), Effect.catchTag("StoreError", databaseFailure(db)))
).pipe(
  Command.withDescription("Revoke an API key; it stops authenticating at once"),
  Command.withExamples([{ command: "vigil keys revoke 3f9a1c0b7d2e4a65", description: "Stop a key now" }])
)

/** The command group. */
export const command = Command.make("keys", {}, needsSubcommand("vigil keys", ["create", "list", "revoke"])).pipe(
  Command.withDescription("Manage API keys"),
  Command.withSubcommands([create, list, revoke])
)
