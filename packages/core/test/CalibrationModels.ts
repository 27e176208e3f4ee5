/** Test helper: a calibration model with the given weights and an empty evaluation, as tests store one. */
import type { Calibration } from "@vigil/core"

/** A model of `asOf` weighing `features` (`bias` first) by `weights`. */
export const modelOf = (
  asOf: string,
  features: ReadonlyArray<string>,
  weights: ReadonlyArray<number>
): Calibration.Model => ({
  asOf,
  fittedAt: `${asOf}T00:00:00.000Z`,
  features,
  weights,
  l2: 1,
  training: { examples: 0, positives: 0 },
  evaluation: {
    examples: 0,
    positives: 0,
    brier: 0,
    brierRules: 0,
    block: { flagged: 0, precision: 0, recall: 0 },
    blockRules: { flagged: 0, precision: 0, recall: 0 },
    review: { flagged: 0, precision: 0, recall: 0 },
    reviewRules: { flagged: 0, precision: 0, recall: 0 },
    reliability: []
  }
})
