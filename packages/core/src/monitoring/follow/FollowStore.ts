/**
 * Port: what following a chain live keeps, so that a restart or a second instance takes over where the last
 * step ended: each chain's cursor (the last block processed) with the hashes of its recent blocks (to see a
 * reorganisation), and the alerts with their identity. Advancing the cursor stores the step's alerts and their
 * notification deliveries in the same transaction, so a crash leaves either all of a step or none of it; and
 * only when the cursor is still where the step began, so two instances never both take one step.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type { WebhookStore } from "../../delivery/index.ts"
import type { StoreError } from "../../kernel/index.ts"
import type { Alert } from "../alerts/Alert.ts"
import * as Evaluator from "../rules/Evaluator.ts"

/** A processed block: its number, hash and parent's hash. */
export interface Mark {
  readonly number: number
  readonly hash: string
  readonly parentHash: string
}

/** The evidence of an alert (the evaluator's), kept as JSON. */
export const Evidence = Evaluator.Evidence

/** An alert's stored evidence column: the JSON of its {@link Evidence}. */
export const EvidenceJson = Schema.fromJsonString(Evidence)

/** Evidence as its stored column's text: what encoding {@link EvidenceJson} writes, by plain code where it can. */
export const evidenceText = Evaluator.encodeEvidence

/** An alert's stored transactions column: the JSON of its transaction hashes by the rule's labels. */
export const TransactionsJson = Schema.fromJsonString(Schema.Record(Schema.String, Schema.String))

export { Alert } from "../alerts/Alert.ts"

/**
 * How far a bot was run on its chain: every block from `from` (its `watchingFrom`) through `through` was
 * evaluated for it. A bot whose coverage stops below the chain's cursor (created while the follower was past its
 * first block, or skipped for a while) is run over the blocks it lacks before it joins the others.
 */
export interface Coverage {
  readonly botId: string
  readonly from: number
  readonly through: number
}

/** A step's outcome when another process moved the cursor first. */
export type Advance = "advanced" | "moved"

/** Cursors, recent block hashes and alerts of followed chains. */
export class FollowStore extends Context.Service<
  FollowStore,
  {
    /** The chain's last processed block, if it was ever followed. */
    readonly cursor: (chainId: number) => Effect.Effect<Mark | undefined, StoreError.StoreError>
    /** How far each bot of the chain was run, by bot id. */
    readonly coverage: (chainId: number) => Effect.Effect<ReadonlyMap<string, Coverage>, StoreError.StoreError>
    /** The chain's processed blocks from `from` up, ascending (the recent ones are kept: `keep` per chain). */
    readonly marks: (chainId: number, from: number) => Effect.Effect<ReadonlyArray<Mark>, StoreError.StoreError>
    /**
     * One step, all or nothing, if the cursor is still `expected` (undefined: never followed): records `blocks`
     * (ascending, the last becomes the cursor), stores those of `alerts` not stored yet (by id) and, for those
     * only, their deliveries (`correlationId` = the alert's id), records `coverage` (replacing each bot's), and
     * forgets marks more than `keep` below the new cursor. With no `blocks` the cursor stays: a step that only
     * runs bots over blocks they lack. `moved` (nothing written) when another process moved the cursor.
     */
    readonly advance: (
      chainId: number,
      expected: Mark | undefined,
      step: {
        readonly blocks: ReadonlyArray<Mark>
        readonly alerts: ReadonlyArray<Alert>
        readonly deliveries: ReadonlyArray<WebhookStore.Delivery>
        readonly keep: number
        readonly coverage?: ReadonlyArray<Coverage>
      }
    ) => Effect.Effect<{ readonly outcome: Advance; readonly stored: ReadonlyArray<string> }, StoreError.StoreError>
    /**
     * A reorganisation, all or nothing, if the cursor is still `expected`: forgets the marks above `ancestor`,
     * which becomes the cursor, retracts the alerts of `retract` (those not retracted yet) at `at`, and stores
     * `deliveries` (the retraction notices; `correlationId` = `<alert id>:retraction`).
     */
    readonly rewind: (
      chainId: number,
      expected: Mark,
      step: {
        readonly ancestor: Mark
        readonly retract: ReadonlyArray<string>
        readonly at: string
        readonly deliveries: ReadonlyArray<WebhookStore.Delivery>
      }
    ) => Effect.Effect<Advance, StoreError.StoreError>
    /**
     * Re-anchors the chain's follower (an operator's way out of a reorganisation deeper than the hashes kept), all
     * or nothing: forgets every mark of the chain, sets the cursor to `to`, retracts `retract` and marks
     * `unverify` unverified at `at` (those not retracted yet), and stores `deliveries` (their notices;
     * `correlationId` = `<alert id>:retraction` or `<alert id>:unverified`).
     */
    readonly reset: (
      chainId: number,
      to: Mark,
      step: {
        readonly retract: ReadonlyArray<string>
        readonly unverify: ReadonlyArray<string>
        readonly at: string
        readonly deliveries: ReadonlyArray<WebhookStore.Delivery>
      }
    ) => Effect.Effect<void, StoreError.StoreError>
    /** The chain's alerts not retracted whose block is above `number`: what a reorganisation down to it orphans. */
    readonly orphaned: (chainId: number, number: number) => Effect.Effect<ReadonlyArray<Alert>, StoreError.StoreError>
  }
>()("@vigil/core/FollowStore") {}

/**
 * Port: the alerts a follower stored, as they are read back: a bot's recent ones (its notification limits), how
 * many a chain retracted (metrics), and one or a page of a bot's (the API).
 */
export class AlertLog extends Context.Service<
  AlertLog,
  {
    /** The bot's alerts not retracted whose block time is `since` or later, oldest first. */
    readonly recent: (botId: string, since: number) => Effect.Effect<ReadonlyArray<Alert>, StoreError.StoreError>
    /** How many of the chain's alerts were retracted, ever: by a follower's reorganisation or by a re-anchoring. */
    readonly retracted: (chainId: number) => Effect.Effect<number, StoreError.StoreError>
    /** One of the bot's alerts, by id; undefined when the key's bot has no such alert. */
    readonly alert: (
      keyId: string,
      botId: string,
      id: string
    ) => Effect.Effect<Alert | undefined, StoreError.StoreError>
    /**
     * The bot's alerts, newest first: at most `limit`, older than the alert `before` when given, only active
     * (neither retracted nor unverified), only retracted or only unverified ones when asked.
     */
    readonly alerts: (
      keyId: string,
      botId: string,
      query: {
        readonly limit: number
        readonly before?: string
        readonly state?: "active" | "retracted" | "unverified"
      }
    ) => Effect.Effect<ReadonlyArray<Alert>, StoreError.StoreError>
  }
>()("@vigil/core/FollowStore/AlertLog") {}

/** Both ports, as an adapter implements them over one store. */
export type Both = FollowStore["Service"] & AlertLog["Service"]

/** The layer of both ports from an adapter's one implementation. */
export const layerOf = <E, R>(
  make: Effect.Effect<Both, E, R>
): Layer.Layer<FollowStore | AlertLog, E, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(Effect.map(make, (store) => Context.make(FollowStore, store).pipe(Context.add(AlertLog, store))))
