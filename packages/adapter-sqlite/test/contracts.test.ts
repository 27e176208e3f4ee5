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
import * as TempDatabase from "./TempDatabase.ts"

QuotaStoreContract.suite("sqlite", TempDatabase.layer)
StorageProbeContract.suite("sqlite", TempDatabase.layer, "sqlite")
IntelIndexContract.suite("sqlite", TempDatabase.layer)
ApiKeyStoreContract.suite("sqlite", TempDatabase.layer)
WebhookStoreContract.suite("sqlite", TempDatabase.layer)
ContractStoreContract.suite("sqlite", TempDatabase.layer)
BotStoreContract.suite("sqlite", TempDatabase.layer)
BlockStoreContract.suite("sqlite", TempDatabase.layer)
FollowStoreContract.suite("sqlite", TempDatabase.layer)
FollowLeasesContract.suite("sqlite", TempDatabase.layer)
