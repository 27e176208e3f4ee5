/** The built `vigil` command, run to completion against a database, as scenarios set up their data. */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The path of the built `vigil` executable. */
export const vigilBin = fileURLToPath(import.meta.resolve("@vigil/cli/bin"))

/** Runs `vigil <args> --db <db>` and returns what it printed. */
export const vigil = (args: ReadonlyArray<string>, db: string): string =>
  execFileSync(process.execPath, [vigilBin, ...args, "--db", db], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  })

/** A key without practical limits (rate, day, month), for load that must never be refused: the key. */
export const unlimitedKey = (db: string): string =>
  JSON.parse(
    vigil(
      ["keys", "create", "--name", "Bench", "--qps", "1000000000", "--daily", "1000000000", "--monthly", "1000000000"],
      db
    )
  ).key as string

/** Ingests the addresses of `file` (one per line) as the official sanctions list `bench-sanctions`. */
export const ingestSanctions = (db: string, file: string): void => {
  vigil(
    ["ingest", "address-list", file, "--list", "bench-sanctions", "--category", "sanctions", "--authority", "official"],
    db
  )
}
