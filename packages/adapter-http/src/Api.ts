/**
 * The HTTP contract of the reference server, shared by the server, its clients and the OpenAPI document: one file
 * per group under `api/`, composed here.
 */
import { Version } from "@vigil/core"
import { HttpApi, OpenApi } from "effect/http-api"
import { BotsGroup } from "./api/BotsApi.ts"
import { ContractsGroup } from "./api/ContractsApi.ts"
import { completeDocument } from "./api/Document.ts"
import { ListsGroup } from "./api/ListsApi.ts"
import { NotificationsGroup } from "./api/NotificationsApi.ts"
import { RulesGroup } from "./api/RulesApi.ts"
import { StatusGroup } from "./api/StatusApi.ts"
import { SystemGroup } from "./api/SystemApi.ts"
import { V2Group } from "./api/V2Api.ts"
import { V3Group } from "./api/V3Api.ts"
import { WebhooksGroup } from "./api/WebhooksApi.ts"
import * as S from "./Schemas.ts"

export { ApiKeyAuth, BearerAuth, CurrentClient, KeyRateAuth } from "./api/Common.ts"
export { Health, HealthUnavailable, Liveness, SystemGroup } from "./api/SystemApi.ts"
export {
  BotsGroup,
  ContractsGroup,
  ListsGroup,
  NotificationsGroup,
  RulesGroup,
  StatusGroup,
  V2Group,
  V3Group,
  WebhooksGroup
}

/** The generated document completed (`api/Document.ts`). */
const transform = (spec: Record<string, unknown>): Record<string, unknown> => completeDocument(VigilApi)(spec)

/** The whole reference API. */
export class VigilApi extends HttpApi.make("vigil")
  .add(SystemGroup)
  .add(V3Group)
  .add(V2Group)
  .add(StatusGroup)
  .add(ListsGroup)
  .add(RulesGroup)
  .add(WebhooksGroup)
  .add(ContractsGroup)
  .add(BotsGroup)
  .add(NotificationsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "Vigil",
      version: Version.version,
      description: "Blockchain address risk screening and smart-contract monitoring",
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
      // Relative: the document is served by the server it describes, wherever that listens.
      servers: [{ url: "/", description: "The server that serves this document" }],
      transform
    })
  )
  .annotate(HttpApi.AdditionalSchemas, [S.IntelligenceDelivery, S.ChannelWebhookMessage]) {}
