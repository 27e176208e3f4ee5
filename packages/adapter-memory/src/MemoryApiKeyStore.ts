/** ApiKeyStore in process memory. */
import { ApiKeyStore, StoreError } from "@vigil/core"
import { Effect, Layer } from "effect"

const make = Effect.sync(() => {
  const keys = new Map<string, ApiKeyStore.ApiKeyRecord>()
  return ApiKeyStore.ApiKeyStore.of({
    insert: (record) =>
      Effect.suspend(() => {
        if (keys.has(record.id)) {
          return Effect.fail(
            new StoreError.StoreError({
              reason: "Conflict",
              operation: "ApiKeyStore.insert",
              message: `an API key with id ${record.id} exists`
            })
          )
        }
        keys.set(record.id, record)
        return Effect.void
      }),
    find: (id) => Effect.sync(() => keys.get(id)),
    list: Effect.sync(() => [...keys.values()]),
    revoke: (id, at) =>
      Effect.sync(() => {
        const record = keys.get(id)
        if (record === undefined || record.revokedAt !== undefined) return record
        const revoked = { ...record, revokedAt: at }
        keys.set(id, revoked)
        return revoked
      })
  })
})

/** A layer with a fresh, empty in-memory ApiKeyStore. */
export const layer: Layer.Layer<ApiKeyStore.ApiKeyStore> = Layer.effect(ApiKeyStore.ApiKeyStore)(make)
