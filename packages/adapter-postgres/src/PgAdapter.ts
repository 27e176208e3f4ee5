/** The storage ports implemented on PostgreSQL so far, over one database, as one layer. */
import type { ApiKeyStore, QuotaStore, StoreError } from "@vigil/core"
import { Layer } from "effect"
import * as PgApiKeyStore from "./PgApiKeyStore.ts"
import * as PgDatabase from "./PgDatabase.ts"
import * as PgQuotaStore from "./PgQuotaStore.ts"

/** The services this adapter provides. */
export type Services = ApiKeyStore.ApiKeyStore | QuotaStore.QuotaStore | PgDatabase.PgDatabase

/** Connects to (and migrates) the database and provides the ports over it. */
export const layer = (options: PgDatabase.Options): Layer.Layer<Services, StoreError.StoreError> =>
  Layer.mergeAll(PgApiKeyStore.layer, PgQuotaStore.layer).pipe(Layer.provideMerge(PgDatabase.layer(options)))
