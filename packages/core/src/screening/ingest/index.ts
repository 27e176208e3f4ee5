/** List parsers and the ingest that stores their records as list versions. */
export * as AddressList from "./AddressList.ts"
export * as GraphSense from "./GraphSense.ts"
export * as Ingest from "./Ingest.ts"
export * as Labels from "./Labels.ts"
export * as OfacSdnCsv from "./OfacSdnCsv.ts"
export * as OfacSdnXml from "./OfacSdnXml.ts"
export * as Parser from "./Parser.ts"
export * as UsdtEvents from "./UsdtEvents.ts"
