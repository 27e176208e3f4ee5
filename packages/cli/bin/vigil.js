#!/usr/bin/env node
// The `vigil` executable: a committed file, so npm can link it at install time, before anything is built.
import { existsSync } from "node:fs"

const entry = new URL("../dist/bin.js", import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write("vigil: not built yet; run `npm run build` (or `npm start`) in the repository first\n")
  process.exit(1)
}
await import(entry.href)
