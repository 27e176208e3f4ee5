/** Locates the real public datasets kept beside the repository, for integration tests that use them. */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** Absolute path of `../shared/data/<relative>` from the repository root. */
export const sharedData = (relative: string): string =>
  fileURLToPath(new URL(`../../../../shared/data/${relative}`, import.meta.url))

/** True when the shared data folder is present; suites that need it skip with a message otherwise. */
export const hasSharedData: boolean = existsSync(sharedData("SOURCES.md"))

/** The reason printed when a suite is skipped for want of the shared data. */
export const missingSharedData = "shared data folder (../shared/data) not found beside the repository"
