/**
 * The storage ports on PostgreSQL so far (keys, quotas, health, contracts, bots, blocks, webhooks and their
 * outbox, following), over one database, as one layer.
 */
import type {
  ApiKeyStore,
  BlockStore,
  BotStore,
  ContractStore,
  FollowLeases,
  FollowStore,
  IntelIndex,
  QuotaStore,
  StorageProbe,
  StoreError,
  WebhookStore
} from "@vigil/core"
import { Layer } from "effect"
import * as PgApiKeyStore from "./PgApiKeyStore.ts"
import * as PgBlockStore from "./PgBlockStore.ts"
import * as PgBotStore from "./PgBotStore.ts"
import * as PgContractStore from "./PgContractStore.ts"
import * as PgDatabase from "./PgDatabase.ts"
import * as PgFollowLeases from "./PgFollowLeases.ts"
import * as PgFollowStore from "./PgFollowStore.ts"
import * as PgIntelIndex from "./PgIntelIndex.ts"
import * as PgQuotaStore from "./PgQuotaStore.ts"
import * as PgStorageProbe from "./PgStorageProbe.ts"
import * as PgWebhookStore from "./PgWebhookStore.ts"

/** The services this adapter provides. */
export type Services =
  | ApiKeyStore.ApiKeyStore
  | BlockStore.BlockStore
  | BotStore.BotStore
  | ContractStore.ContractStore
  | FollowLeases.FollowLeases
  | FollowStore.FollowStore
  | FollowStore.AlertLog
  | IntelIndex.IntelIndex
  | IntelIndex.Versions
  | IntelIndex.Administration
  | QuotaStore.QuotaStore
  | StorageProbe.StorageProbe
  | WebhookStore.WebhookStore
  | WebhookStore.Destinations
  | PgDatabase.PgDatabase

/** Connects to (and migrates) the database and provides the ports over it. */
export const layer = (options: PgDatabase.Options): Layer.Layer<Services, StoreError.StoreError> =>
  Layer.mergeAll(
    PgApiKeyStore.layer,
    PgBlockStore.layer,
    PgBotStore.layer,
    PgContractStore.layer,
    PgFollowLeases.layer,
    PgFollowStore.layer,
    PgIntelIndex.layer,
    PgQuotaStore.layer,
    PgStorageProbe.layer,
    PgWebhookStore.layer
  ).pipe(Layer.provideMerge(PgDatabase.layer(options)))
