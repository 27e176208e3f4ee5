/** Every storage port on one SQLite file, as one layer: Vigil's embedded default storage. */
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
import * as SqliteApiKeyStore from "./SqliteApiKeyStore.ts"
import * as SqliteBlockStore from "./SqliteBlockStore.ts"
import * as SqliteBotStore from "./SqliteBotStore.ts"
import * as SqliteContractStore from "./SqliteContractStore.ts"
import * as SqliteFollowLeases from "./SqliteFollowLeases.ts"
import * as SqliteFollowStore from "./SqliteFollowStore.ts"
import * as SqliteDatabase from "./SqliteDatabase.ts"
import * as SqliteIntelIndex from "./SqliteIntelIndex.ts"
import * as SqliteQuotaStore from "./SqliteQuotaStore.ts"
import * as SqliteStorageProbe from "./SqliteStorageProbe.ts"
import * as SqliteWebhookStore from "./SqliteWebhookStore.ts"

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
  | SqliteDatabase.SqliteDatabase

/** Opens (creating and migrating if needed) the database file and provides every port over it. */
export const layer = (options: SqliteDatabase.Options): Layer.Layer<Services, StoreError.StoreError> =>
  Layer.mergeAll(
    SqliteApiKeyStore.layer,
    SqliteBlockStore.layer,
    SqliteBotStore.layer,
    SqliteContractStore.layer,
    SqliteFollowLeases.layer,
    SqliteFollowStore.layer,
    SqliteIntelIndex.layer,
    SqliteQuotaStore.layer,
    SqliteStorageProbe.layer,
    SqliteWebhookStore.layer
  ).pipe(Layer.provideMerge(SqliteDatabase.layer(options)))
