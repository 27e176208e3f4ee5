/** Port: where API keys live. Only hashes are stored; the key itself is shown once, when it is issued. */
import { Context, type Effect } from "effect"
import type { StoreError } from "../kernel/index.ts"

/** One API key as stored: its public id, its client, its limits and the SHA-256 of the full key. */
export interface ApiKeyRecord {
  /** Public identifier, part of the key itself (`vgl_<id>_<secret>`); safe to show and log. */
  readonly id: string
  /** The client organisation this key belongs to (the v2 `client` field). */
  readonly name: string
  /** Lowercase hex SHA-256 of the whole key string. */
  readonly hash: string
  /** Requests per second. */
  readonly qps: number
  /** Addresses per UTC day. */
  readonly daily: number
  /** Addresses per UTC calendar month. */
  readonly monthly: number
  /** ISO 8601 instant the key was issued. */
  readonly createdAt: string
  /** ISO 8601 instant from which the key is expired; none when it never expires. */
  readonly expiresAt?: string
  /** ISO 8601 instant the key was revoked; a revoked key no longer authenticates. */
  readonly revokedAt?: string
}

/** Stores API keys by id. */
export class ApiKeyStore extends Context.Service<
  ApiKeyStore,
  {
    /** Stores a new key; fails with `Conflict` when the id is taken. */
    readonly insert: (record: ApiKeyRecord) => Effect.Effect<void, StoreError.StoreError>
    /** The key with this id, if any (revoked ones included). */
    readonly find: (id: string) => Effect.Effect<ApiKeyRecord | undefined, StoreError.StoreError>
    /** Every key, oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>, StoreError.StoreError>
    /** Marks the key revoked at `at`; the stored record, or undefined when no key has this id. Revoking twice keeps the first date. */
    readonly revoke: (id: string, at: string) => Effect.Effect<ApiKeyRecord | undefined, StoreError.StoreError>
  }
>()("@vigil/core/ApiKeyStore") {}
