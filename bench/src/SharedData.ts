/** The shared public datasets beside the repository, which some scenarios measure on. */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { root } from "./Harness.ts"

/** Absolute path of `../shared/data/<relative>`. */
export const sharedData = (relative: string): string => join(root, "..", "shared", "data", relative)

/** True when the shared data folder is present. */
export const hasSharedData = (): boolean => existsSync(sharedData("SOURCES.md"))
