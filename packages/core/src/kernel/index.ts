/** The shared kernel: networks and address formats, store errors and probe, constant-time compare, bounded memo, instants, random ids. */
export * as BoundedMemo from "./BoundedMemo.ts"
export * as Chain from "./Chain.ts"
export * as ConstantTime from "./ConstantTime.ts"
export * as Instant from "./Instant.ts"
export * as RandomIds from "./RandomIds.ts"
export * as StorageProbe from "./StorageProbe.ts"
export * as StoreError from "./StoreError.ts"
export * as Version from "./Version.ts"
