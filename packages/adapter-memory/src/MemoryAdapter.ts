/** Every storage port in process memory, as one layer: for tests, examples and embedding without a database. */
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
  WebhookStore
} from "@vigil/core"
import { Layer } from "effect"
import * as MemoryApiKeyStore from "./MemoryApiKeyStore.ts"
import * as MemoryBlockStore from "./MemoryBlockStore.ts"
import * as MemoryBotStore from "./MemoryBotStore.ts"
import * as MemoryContractStore from "./MemoryContractStore.ts"
import * as MemoryFollowLeases from "./MemoryFollowLeases.ts"
import * as MemoryFollowStore from "./MemoryFollowStore.ts"
import * as MemoryIntelIndex from "./MemoryIntelIndex.ts"
import * as MemoryQuotaStore from "./MemoryQuotaStore.ts"
import * as MemoryStorageProbe from "./MemoryStorageProbe.ts"
import * as MemoryWebhookStore from "./MemoryWebhookStore.ts"

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

/** All memory-backed ports; each build starts empty. */
export const layer: Layer.Layer<Services> = Layer.mergeAll(
  MemoryApiKeyStore.layer,
  MemoryBlockStore.layer,
  MemoryBotStore.layer,
  MemoryContractStore.layer,
  MemoryFollowLeases.layer,
  MemoryIntelIndex.layer,
  MemoryQuotaStore.layer,
  MemoryStorageProbe.layer,
  MemoryFollowStore.layer.pipe(Layer.provideMerge(MemoryWebhookStore.layer))
)
