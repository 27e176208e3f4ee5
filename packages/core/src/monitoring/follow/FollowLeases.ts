/**
 * Port: who follows each chain when several instances share one store. A chain is followed by the instance
 * holding its lease; the holder renews it well within its time to live, and when the holder dies (or loses the
 * store) the lease runs out and another instance takes the chain over from the stored cursor. Times are the
 * store's: a networked store reads its own clock, so instances whose clocks disagree still agree on expiry.
 *
 * The lease saves work and says who follows what; it is not what keeps alerts exactly-once. Two followers of one
 * chain (a holder that stalled past its lease while another took over) are kept apart by the cursor's
 * compare-and-set (`FollowStore.advance`): one of them finds the cursor moved and writes nothing.
 */
import { Context, type Effect } from "effect"
import { Instant, type StoreError } from "../../kernel/index.ts"

/** A chain's lease: who holds it, since which change of holder (`term`, counting from 1), until when. */
export interface Lease {
  readonly chainId: number
  readonly holder: string
  readonly term: number
  /** ISO instant after which another instance may take the chain. */
  readonly expiresAt: string
}

/** The leases of followed chains. */
export class FollowLeases extends Context.Service<
  FollowLeases,
  {
    /**
     * Takes the chain's lease for `holder`, or renews it when `holder` has it, for `ttlMillis` from now: the lease
     * when `holder` holds it; undefined when another holder's lease has not run out. Taking it from another holder
     * (whose lease ran out, or who released it) raises the term; renewing keeps it.
     */
    readonly hold: (
      chainId: number,
      holder: string,
      ttlMillis: number
    ) => Effect.Effect<Lease | undefined, StoreError.StoreError>
    /** Ends `holder`'s lease of the chain at once (a clean shutdown), so another instance need not wait it out. */
    readonly release: (chainId: number, holder: string) => Effect.Effect<void, StoreError.StoreError>
    /** Every chain's lease, run out or not, by chain. */
    readonly leases: () => Effect.Effect<ReadonlyArray<Lease>, StoreError.StoreError>
  }
>()("@vigil/core/FollowLeases") {}

/**
 * What {@link FollowLeases.hold} decides at `now` (ms) given the chain's lease as stored: the lease to store and
 * answer, or undefined when another holder's lease has not run out. For stores that decide in process.
 */
export const decide = (
  current: Lease | undefined,
  chainId: number,
  holder: string,
  now: number,
  ttlMillis: number
): Lease | undefined => {
  const expiresAt = Instant.iso(now + ttlMillis)
  if (current === undefined) return { chainId, holder, term: 1, expiresAt }
  if (current.holder === holder) return { ...current, expiresAt }
  if (Date.parse(current.expiresAt) > now) return undefined
  return { chainId, holder, term: current.term + 1, expiresAt }
}

/** The lease as {@link FollowLeases.release} leaves it at `now`: run out, so the next holder takes it at once. */
export const released = (lease: Lease, now: number): Lease => ({ ...lease, expiresAt: Instant.iso(now - 1) })
