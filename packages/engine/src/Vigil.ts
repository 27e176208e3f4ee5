/**
 * Vigil as a library, without Effect: `createVigil({ db })` opens (or creates) a SQLite database and offers
 * Promise methods over one ManagedRuntime holding the same core services the server answers with (the
 * screening policy and its cache, ingest, API keys). Effect users compose `Engine` and the adapters instead.
 */
import { EvmTransfers } from "@vigil/adapter-evm"
import { SqliteAdapter } from "@vigil/adapter-sqlite"
import {
  ApiKeys,
  type ApiKeyStore,
  Calibration,
  Engine,
  Ingestion,
  Instant,
  IntelIndex,
  Intelligence,
  type IntelResult,
  Exposure,
  Screening,
  type Chain
} from "@vigil/core"
import { Clock, Data, Effect, Layer, ManagedRuntime } from "effect"
import * as BuiltinLists from "./BuiltinLists.ts"
import * as Input from "./Input.ts"

/** Where the database is: a file (created with its folder on first use) or `:memory:`; and the chains' nodes. */
export interface Options {
  readonly db: string
  /** The JSON-RPC URL of each chain's node (by chain id), read for counterparty exposure. Default none. */
  readonly rpcUrls?: Readonly<Record<number, string>>
  /** How counterparty exposure is read (budget, window, dust); defaults in `Exposure.defaultSettings`. */
  readonly exposure?: Partial<Exposure.Settings>
  /**
   * Start a new database with the built-in official lists (OFAC's SDN digital-currency addresses, USDT's freezes on
   * Ethereum; see `BuiltinLists`); default true. A database that holds or held lists is never changed by it.
   */
  readonly builtinLists?: boolean
}

/** Options of one screening. */
export interface ScreenOptions {
  /** Network the address must be valid on; `auto` (default) accepts any. */
  readonly chain?: Chain.Network | "auto"
  /** Screen against the lists as they were on this date (`YYYY-MM-DD`); default today (UTC). */
  readonly asOf?: string
  /** Add the raw records and the score breakdown. */
  readonly includeDetails?: boolean
  /** Apply the calibration model where it grades the answer (`enable_agentic`); default true. */
  readonly agentic?: boolean
  /**
   * Read the address's recent transfers from the nodes of `rpcUrls` and screen its counterparties: `true`, or this
   * screening's settings of it (its dust floor).
   */
  readonly exposure?: boolean | Exposure.Request
}

/** Options of fitting a calibration model. */
export interface CalibrateOptions {
  /** Fit on the lists as they were on this date (`YYYY-MM-DD`); default today (UTC). */
  readonly asOf?: string
  /** The L2 penalty of the fit; default {@link Calibration.defaultL2}. */
  readonly l2?: number
  /** Fit and evaluate, but store nothing. */
  readonly dryRun?: boolean
}

/** The engine's Promise API. Every method rejects with an Error whose message says what went wrong. */
export interface Vigil {
  /** One address: the v3 result, or an `invalid_address` item when no network accepts it. */
  readonly screen: (
    address: string,
    options?: ScreenOptions
  ) => Promise<IntelResult.IntelResult | IntelResult.BatchFailure>
  /** 1 to 25 addresses, screened `concurrency` (1–10, default 3) at a time: results in input order, a summary. */
  readonly screenBatch: (
    addresses: ReadonlyArray<string>,
    options?: Intelligence.BatchOptions
  ) => Promise<IntelResult.BatchResult>
  /** Ingests a list from a file or an http(s) URL (`.bz2` decompressed on the fly) as a new version, atomically. */
  readonly ingest: (source: Ingestion.Sources.SourceSpec) => Promise<Ingestion.Ingest.Outcome>
  /**
   * Fits the calibration model from the lists in force, evaluates it on the held-out addresses and (unless
   * `dryRun`) stores it as the next version: screenings of its date or later use it.
   */
  readonly calibrate: (options?: CalibrateOptions) => Promise<Calibration.Model | Calibration.Stored>
  /** The ingested lists with their current version. */
  readonly lists: () => Promise<ReadonlyArray<IntelIndex.ListStatus>>
  /** Deletes a list and its records (recorded); undefined when there is no such list. */
  readonly deleteList: (list: string) => Promise<IntelIndex.RemoveOutcome | undefined>
  /** Withdraws a list's current version: the list becomes what its earlier versions made it (recorded). */
  readonly rollbackList: (list: string) => Promise<IntelIndex.AmendOutcome>
  /** Corrects the date of a list's version (`YYYY-MM-DD`, not after today) and rebuilds its intervals (recorded). */
  readonly redateList: (list: string, version: number, asOf: string) => Promise<IntelIndex.AmendOutcome>
  /** API keys for a server on the same database: issued once in plain text, stored hashed. */
  readonly keys: {
    readonly create: (request: ApiKeys.IssueRequest) => Promise<ApiKeys.Issued>
    readonly list: () => Promise<ReadonlyArray<ApiKeyStore.ApiKeyRecord>>
    /** The revoked key's record, or undefined when there is no such key. */
    readonly revoke: (id: string) => Promise<ApiKeyStore.ApiKeyRecord | undefined>
  }
  /** Closes the database; the object is unusable afterwards. */
  readonly close: () => Promise<void>
}

/** A failure as the Error a Promise rejects with (`instanceof Error`, `name` and `_tag` "VigilError"). */
class VigilError extends Data.TaggedError("VigilError")<{ readonly message: string }> {
  override readonly name = "VigilError"
}

const rejected = (e: { readonly message: string; readonly _tag: string }) =>
  Effect.fail(new VigilError({ message: `${e._tag}: ${e.message}` }))

/** Opens (or creates) the database at `options.db` and returns the engine. */
export const createVigil = (options: Options): Vigil => {
  const rpcUrls = new Map(Object.entries(options.rpcUrls ?? {}).map(([id, url]) => [Number(id), url]))
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Engine.screening,
      ApiKeys.ApiKeys.layer,
      Exposure.Exposure.layer({ ...Exposure.defaultSettings, ...options.exposure }).pipe(
        Layer.provide(EvmTransfers.layer(rpcUrls))
      )
    ).pipe(
      Layer.provideMerge(
        Layer.effectDiscard(options.builtinLists === false ? Effect.void : Effect.asVoid(BuiltinLists.seed)).pipe(
          Layer.provideMerge(SqliteAdapter.layer({ filename: options.db }))
        )
      )
    )
  )
  const run = <A>(effect: Effect.Effect<A, VigilError, ManagedRuntime.ManagedRuntime.Services<typeof runtime>>) =>
    runtime.runPromise(effect)

  return {
    screen: (address, screenOptions = {}) => {
      const answered: Effect.Effect<
        IntelResult.IntelResult,
        Screening.InvalidAddress,
        Intelligence.Intelligence | Screening.Screening
      > =
        screenOptions.asOf === undefined
          ? Effect.flatMap(Effect.service(Intelligence.Intelligence), (i) =>
              Effect.map(
                i.single(address, {
                  policy: "v3",
                  ...(screenOptions.chain === undefined ? {} : { chain: screenOptions.chain }),
                  includeDetails: screenOptions.includeDetails === true,
                  ...(screenOptions.agentic === false ? { agentic: false } : {})
                }),
                Intelligence.restamped
              )
            )
          : Effect.flatMap(Effect.service(Screening.Screening), (s) => s.screen(address, screenOptions))
      // Counterparty exposure, when asked for: read beside the screening, judged against the lists of its day.
      const request =
        screenOptions.exposure === true ? {} : screenOptions.exposure === false ? undefined : screenOptions.exposure
      const screened =
        request !== undefined
          ? Effect.zipWith(
              answered,
              Effect.flatMap(Instant.today, (today) =>
                Effect.flatMap(Effect.service(Exposure.Exposure), (e) =>
                  e.of(address, screenOptions.asOf ?? today, screenOptions.chain ?? "auto", request)
                )
              ),
              Exposure.annotate,
              { concurrent: true }
            )
          : answered
      return run(
        screened.pipe(
          Effect.catchTag("InvalidAddress", (e) => Effect.succeed(Intelligence.invalidAddress(address, e.message)))
        )
      )
    },
    screenBatch: (addresses, batchOptions = {}) => {
      const { maxAddresses, maxConcurrency } = Intelligence.batchLimits
      if (addresses.length === 0 || addresses.length > maxAddresses)
        return Promise.reject(
          new VigilError({ message: `a batch holds 1 to ${maxAddresses} addresses, not ${addresses.length}` })
        )
      const concurrency = batchOptions.concurrency
      if (
        concurrency !== undefined &&
        !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= maxConcurrency)
      )
        return Promise.reject(
          new VigilError({ message: `concurrency must be a whole number from 1 to ${maxConcurrency}` })
        )
      return run(Effect.flatMap(Effect.service(Intelligence.Intelligence), (i) => i.batch(addresses, batchOptions)))
    },
    calibrate: (calibrateOptions = {}) =>
      run(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          return yield* Calibration.calibrate({
            asOf: calibrateOptions.asOf ?? Instant.day(now),
            fittedAt: Instant.iso(now),
            ...(calibrateOptions.l2 === undefined ? {} : { l2: calibrateOptions.l2 }),
            store: calibrateOptions.dryRun !== true
          })
        }).pipe(Effect.catchTags({ CalibrationRefused: rejected, StoreError: rejected }))
      ),
    ingest: (source) =>
      run(
        Effect.gen(function* () {
          const { request, parser } = yield* Ingestion.Sources.plan(source, Input.originKey(source.input))
          const input = yield* Input.open(source.input)
          return yield* Input.ingest(request, parser, input.bytes)
        }).pipe(
          Effect.catchTags({
            InvalidSource: rejected,
            InputError: rejected,
            IngestFailed: rejected,
            StoreError: rejected
          })
        )
      ),
    lists: () =>
      run(
        Effect.flatMap(Effect.service(IntelIndex.IntelIndex), (i) => i.lists).pipe(
          Effect.catchTag("StoreError", rejected)
        )
      ),
    deleteList: (list) =>
      run(
        Effect.flatMap(Effect.service(IntelIndex.Administration), (i) =>
          Effect.flatMap(Instant.now, (at) => i.remove(list, at))
        ).pipe(Effect.catchTag("StoreError", rejected))
      ),
    rollbackList: (list) =>
      run(Ingestion.Ingest.rollback(list).pipe(Effect.catchTags({ AmendRefused: rejected, StoreError: rejected }))),
    redateList: (list, version, asOf) =>
      run(
        Ingestion.Ingest.redate(list, version, asOf).pipe(
          Effect.catchTags({ AmendRefused: rejected, StoreError: rejected })
        )
      ),
    keys: {
      create: (request) =>
        run(
          Effect.flatMap(Effect.service(ApiKeys.ApiKeys), (k) => k.issue(request)).pipe(
            Effect.catchTags({ InvalidKeyRequest: rejected, StoreError: rejected })
          )
        ),
      list: () =>
        run(
          Effect.flatMap(Effect.service(ApiKeys.ApiKeys), (k) => k.list).pipe(Effect.catchTag("StoreError", rejected))
        ),
      revoke: (id) =>
        run(
          Effect.flatMap(Effect.service(ApiKeys.ApiKeys), (k) => k.revoke(id)).pipe(
            Effect.catchTag("StoreError", rejected)
          )
        )
    },
    close: () => runtime.dispose()
  }
}
