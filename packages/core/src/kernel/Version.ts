/** The version of Vigil this build is, reported by the server and the CLI. */

/** Semantic version of this build. */
export const version = "0.1.0"
