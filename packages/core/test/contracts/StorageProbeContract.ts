/** The behaviour every StorageProbe adapter must show. */
import { assert, describe, it } from "@effect/vitest"
import { StorageProbe } from "@vigil/core"
import { Effect, type Layer } from "effect"

/** Registers the StorageProbe contract against an adapter's layer, expecting it to report `kind`. */
export const suite = (name: string, layer: Layer.Layer<StorageProbe.StorageProbe, unknown>, kind: string) =>
  describe(`StorageProbe contract: ${name}`, () => {
    it.effect("answers with its kind and a non-negative schema version", () =>
      Effect.gen(function* () {
        const probe = yield* StorageProbe.StorageProbe
        const status = yield* probe.check
        assert.strictEqual(status.kind, kind)
        assert.isTrue(Number.isInteger(status.schemaVersion) && status.schemaVersion >= 0)
      }).pipe(Effect.provide(layer))
    )
  })
