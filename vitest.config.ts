import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const conditions = ["@vigil/source"]

export default defineConfig({
  resolve: {
    conditions,
    alias: { "@vigil/core-test": fileURLToPath(new URL("./packages/core/test", import.meta.url)) }
  },
  ssr: { resolve: { conditions } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/test/**/*.test.ts", "bench/test/**/*.test.ts"],
    setupFiles: ["./vitest.setup.ts"],
    // One test file per core. Most tests wait on what they start (servers, nodes, PostgreSQL, a browser), so the
    // core vitest keeps for itself by default is better used by another file (on two cores the default runs one file
    // at a time).
    maxWorkers: availableParallelism(),
    // How long a test or hook may take before it counts as hung: a guard, never a speed check (speed is the bench's).
    // Many tests start real processes, nodes, databases and a browser; on a loaded two-core machine they take about
    // twice as long as on a quiet one, and the slowest without a limit of their own take 16 s on a quiet one.
    testTimeout: 90_000,
    hookTimeout: 90_000
  }
})
