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
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
