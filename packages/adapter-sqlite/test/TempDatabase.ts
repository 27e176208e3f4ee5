/** Test helper: a real SQLite file in a fresh temporary folder, removed when the scope ends. */

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import { Effect, Layer } from "effect"

/** A scoped path `<fresh temp dir>/<name>`; the folder and everything in it go when the scope closes. */
export const tempPath = (name = "vigil.db") =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "vigil-test-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((dir) => join(dir, name)))

/** The whole SQLite adapter on a new database file, built afresh for each use. */
export const layer = Layer.unwrap(
  Effect.map(tempPath("nested/dir/vigil.db"), (filename) => SqliteAdapter.layer({ filename }))
)
