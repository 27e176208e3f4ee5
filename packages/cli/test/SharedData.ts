/** Locates the real public datasets kept beside the repository; suites that need them skip when absent. */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** Absolute path of `../shared/data/<relative>` from the repository root. */
export const sharedData = (relative: string): string =>
  fileURLToPath(new URL(`../../../../shared/data/${relative}`, import.meta.url))

/** True when the shared data folder is present. */
export const hasSharedData: boolean = existsSync(sharedData("SOURCES.md"))
