/** The console's build: static files under `dist/`, served by `vigil serve` at `/console/`; nothing from a CDN. */
import { defineConfig } from "vite"

export default defineConfig({
  base: "/console/",
  build: { outDir: "dist", emptyOutDir: true, assetsInlineLimit: 0, sourcemap: false, target: "es2022" }
})
