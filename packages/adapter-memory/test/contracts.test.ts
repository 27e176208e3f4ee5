import { MemoryAdapter } from "@vigil/adapter-memory"
import * as ApiKeyStoreContract from "@vigil/core-test/contracts/ApiKeyStoreContract.ts"
import * as BlockStoreContract from "@vigil/core-test/contracts/BlockStoreContract.ts"
import * as BotStoreContract from "@vigil/core-test/contracts/BotStoreContract.ts"
import * as ContractStoreContract from "@vigil/core-test/contracts/ContractStoreContract.ts"
import * as FollowLeasesContract from "@vigil/core-test/contracts/FollowLeasesContract.ts"
import * as FollowStoreContract from "@vigil/core-test/contracts/FollowStoreContract.ts"
import * as IntelIndexContract from "@vigil/core-test/contracts/IntelIndexContract.ts"
import * as QuotaStoreContract from "@vigil/core-test/contracts/QuotaStoreContract.ts"
import * as StorageProbeContract from "@vigil/core-test/contracts/StorageProbeContract.ts"
import * as WebhookStoreContract from "@vigil/core-test/contracts/WebhookStoreContract.ts"

QuotaStoreContract.suite("memory", MemoryAdapter.layer)
StorageProbeContract.suite("memory", MemoryAdapter.layer, "memory")
IntelIndexContract.suite("memory", MemoryAdapter.layer)
ApiKeyStoreContract.suite("memory", MemoryAdapter.layer)
WebhookStoreContract.suite("memory", MemoryAdapter.layer)
ContractStoreContract.suite("memory", MemoryAdapter.layer)
BotStoreContract.suite("memory", MemoryAdapter.layer)
BlockStoreContract.suite("memory", MemoryAdapter.layer)
FollowStoreContract.suite("memory", MemoryAdapter.layer)
FollowLeasesContract.suite("memory", MemoryAdapter.layer)
