/** API keys: issued once in plain text, stored as SHA-256, checked in constant time, with expiry and revocation. */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, randomBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { base58 } from "@scure/base"
import { Clock, Context, DateTime, Effect, Layer, Schema } from "effect"
import { type ApiKeyRecord, ApiKeyStore } from "./ApiKeyStore.ts"
import { BoundedMemo, ConstantTime, type StoreError } from "../kernel/index.ts"

/** Limits a key is issued with when none are given. */
export const defaultLimits = { qps: 10, daily: 10_000, monthly: 300_000 } as const

/** What `issue` needs. */
export interface IssueRequest {
  readonly name: string
  readonly qps?: number
  readonly daily?: number
  readonly monthly?: number
  /** ISO 8601 instant from which the key no longer authenticates. */
  readonly expiresAt?: string
}

/** A freshly issued key: the only time the plain key exists outside the client's hands. */
export interface Issued {
  readonly key: string
  readonly record: ApiKeyRecord
}

/** The state of a presented credential (spec §2.6 status values). */
export type Authentication =
  | { readonly status: "authenticated"; readonly key: ApiKeyRecord }
  | { readonly status: "expired"; readonly key: ApiKeyRecord }
  | { readonly status: "invalid" }

/** An issue request that cannot be honoured (empty name, non-positive limit, expiry in the past…). */
export class InvalidKeyRequest extends Schema.TaggedError<InvalidKeyRequest>()("InvalidKeyRequest", {
  message: Schema.String
}) {}

const keyPattern = /^vgl_([0-9a-f]{16})_[1-9A-HJ-NP-Za-km-z]{40,50}$/

/** What an unknown or revoked id's key is compared with: a hash no key has (SHA-256 of nothing is not all zeros). */
const standIn = "0".repeat(64)

/** How many verified keys {@link ApiKeys} remembers (the oldest is forgotten first). */
const maxVerified = 1024

/** Lowercase hex SHA-256 of a key string. */
export const hashKey = (key: string): string => bytesToHex(sha256(utf8ToBytes(key)))

const positiveInt = (name: string, value: number | undefined, fallback: number) =>
  value === undefined
    ? Effect.succeed(fallback)
    : Number.isSafeInteger(value) && value > 0
      ? Effect.succeed(value)
      : Effect.fail(new InvalidKeyRequest({ message: `${name} must be a positive whole number, got ${value}` }))

/**
 * Why the standing work of a key (its bots, its deliveries) must stop at `now`: it was revoked or has expired;
 * undefined while it stands, and for an id no key has (nothing is known against it).
 */
export const lapsed = (record: ApiKeyRecord | undefined, now: number): string | undefined =>
  record === undefined
    ? undefined
    : record.revokedAt !== undefined
      ? `its API key ${record.id} was revoked at ${record.revokedAt}`
      : record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now
        ? `its API key ${record.id} expired at ${record.expiresAt}`
        : undefined

/** Issues, authenticates, lists and revokes API keys over the ApiKeyStore. */
export class ApiKeys extends Context.Service<
  ApiKeys,
  {
    readonly issue: (request: IssueRequest) => Effect.Effect<Issued, InvalidKeyRequest | StoreError.StoreError>
    /** The state of a presented key; never fails for a malformed or unknown key (that is `invalid`). */
    readonly authenticate: (presented: string) => Effect.Effect<Authentication, StoreError.StoreError>
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>, StoreError.StoreError>
    readonly revoke: (id: string) => Effect.Effect<ApiKeyRecord | undefined, StoreError.StoreError>
  }
>()("@vigil/core/ApiKeys") {
  static readonly layer: Layer.Layer<ApiKeys, never, ApiKeyStore> = Layer.effect(ApiKeys)(
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => DateTime.formatIso(DateTime.makeUnsafe(ms)))

      const issue = Effect.fn("ApiKeys.issue")(function* (request: IssueRequest) {
        const name = request.name.trim()
        if (name.length === 0 || name.length > 200) {
          return yield* new InvalidKeyRequest({ message: "name must be 1 to 200 characters" })
        }
        const qps = yield* positiveInt("qps", request.qps, defaultLimits.qps)
        const daily = yield* positiveInt("daily", request.daily, defaultLimits.daily)
        const monthly = yield* positiveInt("monthly", request.monthly, defaultLimits.monthly)
        const createdAt = yield* nowIso
        if (request.expiresAt !== undefined && !(Date.parse(request.expiresAt) > Date.parse(createdAt))) {
          return yield* new InvalidKeyRequest({
            message: `expiry ${request.expiresAt} is not a future ISO 8601 instant`
          })
        }
        const id = bytesToHex(randomBytes(8))
        const key = `vgl_${id}_${base58.encode(randomBytes(32))}`
        const record: ApiKeyRecord = {
          id,
          name,
          hash: hashKey(key),
          qps,
          daily,
          monthly,
          createdAt,
          ...(request.expiresAt === undefined
            ? {}
            : { expiresAt: DateTime.formatIso(DateTime.makeUnsafe(Date.parse(request.expiresAt))) })
        }
        yield* store.insert(record)
        return { key, record }
      })

      /**
       * Hashes of keys that matched their record: a key presented again is not hashed again (SHA-256 is most of
       * the work of authenticating). Only matching keys are remembered, so unknown keys cannot fill it; the
       * record is still read and checked (revocation, expiry) on every call.
       */
      const verified = BoundedMemo.make<string, string>(maxVerified)
      const invalid = Effect.succeed<Authentication>({ status: "invalid" })
      // Written as a pipeline rather than a generator: it runs on every request.
      const authenticate = (presented: string): Effect.Effect<Authentication, StoreError.StoreError> => {
        const id = keyPattern.exec(presented)?.[1]
        if (id === undefined) return invalid
        return Effect.flatMap(store.find(id), (record) => {
          // The same work whether the id is a usable key's or not (looked up, hashed, compared in constant time
          // with a stand-in), so a refusal says nothing of the id.
          const usable = record !== undefined && !record.revokedAt
          const remembered = verified.get(presented)
          const hash = remembered ?? hashKey(presented)
          if (!ConstantTime.equal(usable ? record.hash : standIn, hash) || !usable) return invalid
          if (remembered === undefined) verified.set(presented, hash)
          const expiresAt = record.expiresAt
          if (expiresAt === undefined) return Effect.succeed<Authentication>({ status: "authenticated", key: record })
          return Effect.map(Clock.currentTimeMillis, (now): Authentication =>
            Date.parse(expiresAt) <= now ? { status: "expired", key: record } : { status: "authenticated", key: record }
          )
        })
      }

      return ApiKeys.of({
        issue,
        authenticate,
        list: store.list,
        revoke: (id) => Effect.flatMap(nowIso, (at) => store.revoke(id, at))
      })
    })
  )
}
