/** The `contracts` group of the API, composed with the others in `Api.ts`. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlavourOfGroup } from "../Responses.ts"
import * as S from "../Schemas.ts"
import { bodyErrors, edgeErrors, KeyRateAuth } from "./Common.ts"

/** Monitoring: contracts (spec §2.9, §4.7). Either key header; failures in the v2 shape. */
export class ContractsGroup extends HttpApiGroup.make("contracts")
  .add(
    HttpApiEndpoint.post("register", "/v1/contracts", {
      payload: S.ContractRequest,
      success: S.ContractAnswer.pipe(HttpApiSchema.status(201)),
      error: [
        S.V2Errors.ValidationError,
        S.ContractLabelTaken,
        S.KeyLimitReached,
        S.AbiNotFound,
        S.V2Errors.ServiceUnavailable,
        ...bodyErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Register a contract",
        description:
          "With its ABI, or without one: a verified ABI is then fetched (Sourcify, then an Etherscan-compatible explorer), and an EIP-1967 proxy (its implementation slot read through the chain's node) gets its implementation's ABI, which the answer says. 422 when no ABI is found anywhere, naming what was tried."
      })
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/contracts", {
      query: S.ContractListQuery,
      success: S.ContractList,
      error: [S.V2Errors.ValidationError, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "List the key's contracts", description: "Oldest first." }))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/contracts/:contractId", {
      params: { contractId: Schema.String },
      success: S.ContractAnswer,
      error: [S.ContractNotFound, S.V2Errors.ServiceUnavailable, ...edgeErrors(S.V2Errors)]
    }).annotateMerge(OpenApi.annotations({ summary: "Read a contract" }))
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/contracts/:contractId", {
      params: { contractId: Schema.String },
      query: S.ContractRemoveQuery,
      success: S.ContractRemoved,
      error: [
        S.ContractNotFound,
        S.ContractInUse,
        S.V2Errors.ValidationError,
        S.V2Errors.ServiceUnavailable,
        ...edgeErrors(S.V2Errors)
      ]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a contract",
        description:
          "Refused with 409 while bots of the key use it (their rules would no longer check), naming them; with force=true it is deleted and the answer lists the bots it broke."
      })
    )
  )
  .middleware(KeyRateAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "monitoring: contracts",
      description:
        "Contracts watched by bots, by label, with their ABIs. `x-api-key` or `Authorization: Bearer`; another key's contract is a 404."
    })
  )
  .annotate(FlavourOfGroup, "v2") {}
