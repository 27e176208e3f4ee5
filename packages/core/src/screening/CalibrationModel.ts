/** The stored form of a calibration model and its evaluation (see Calibration). */
import { Schema } from "effect"

/** Precision and recall of the answers at one threshold, and how many were flagged there. */
const AtThreshold = Schema.Struct({
  flagged: Schema.Int,
  precision: Schema.Finite,
  recall: Schema.Finite
})

/** One bin of the reliability table: predictions in [from, to), their mean, and the share observed positive. */
const Bin = Schema.Struct({
  from: Schema.Finite,
  to: Schema.Finite,
  count: Schema.Int,
  predicted: Schema.Finite,
  observed: Schema.Finite
})

/** How a model fares on the addresses it did not learn from, beside the rule-based answer on the same ones. */
export const Evaluation = Schema.Struct({
  examples: Schema.Int,
  positives: Schema.Int,
  /** Mean squared error of the calibrated probability. */
  brier: Schema.Finite,
  /** The same for the rule-based answer, its score read as a probability (score / 100). */
  brierRules: Schema.Finite,
  /** Answers at BLOCK (score 85 or more), calibrated and rule-based. */
  block: AtThreshold,
  blockRules: AtThreshold,
  /** Answers at REVIEW or above (score 60 or more), calibrated and rule-based. */
  review: AtThreshold,
  reviewRules: AtThreshold,
  reliability: Schema.Array(Bin)
})
export type Evaluation = typeof Evaluation.Type

/** A fitted model, as stored: what it weighs, what it learned from, and its evaluation. */
export const Model = Schema.Struct({
  /** The day the lists were read as of: screenings of this day or later (until a newer model) use it. */
  asOf: Schema.String,
  /** When it was fitted (ISO instant). */
  fittedAt: Schema.String,
  /** Feature names; `bias` first. */
  features: Schema.Array(Schema.String),
  /** One weight per feature. */
  weights: Schema.Array(Schema.Finite),
  /** The L2 penalty it was fitted with. */
  l2: Schema.Finite,
  training: Schema.Struct({
    examples: Schema.Int,
    positives: Schema.Int,
    /**
     * Examples a reviewed list names only through entries that cite a source of the example's own features (a
     * copy): not counted as positives. Absent in models fitted before provenance was read.
     */
    copied: Schema.optionalKey(Schema.Int)
  }),
  evaluation: Evaluation
})
export type Model = typeof Model.Type

/** A model in the store, numbered 1, 2, … in the order they were stored. */
export const Stored = Schema.Struct({ version: Schema.Int, ...Model.fields })
export type Stored = typeof Stored.Type
