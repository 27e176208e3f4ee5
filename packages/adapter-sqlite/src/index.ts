/** SQLite (better-sqlite3) implementations of every Vigil storage port: the embedded default. */
export * as SqliteAdapter from "./SqliteAdapter.ts"
export * as SqliteApiKeyStore from "./SqliteApiKeyStore.ts"
export * as SqliteDatabase from "./SqliteDatabase.ts"
export * as SqliteIntelIndex from "./SqliteIntelIndex.ts"
export * as SqliteErrors from "./SqliteErrors.ts"
export * as SqliteMigrations from "./SqliteMigrations.ts"
export * as SqliteQuotaStore from "./SqliteQuotaStore.ts"
export * as SqliteStorageProbe from "./SqliteStorageProbe.ts"
