/**
 * Calibration: how often the word of scraped label sets alone is borne out, learned from the lists Vigil holds.
 *
 * The model is a small L2-regularised logistic regression. Its examples are the addresses some scraped list
 * names; its ground truth is whether an official or curated list (the lists that review what they publish) names
 * the address for a risk, on its own word: an entry that cites a source (a GraphSense tag's `source`) tied to one
 * of the example's own feature lists is a copy of that list, not a confirmation of it, and does not count. Its
 * features come from the scraped lists alone (which of them name it and for what, how many agree, whether one
 * names it as an exchange or service, how long it has been listed), so the truth is never among the features. It answers: of the addresses this scraped evidence names, what share does a reviewed
 * list also name as risky? That share is the calibrated probability of an answer that rests on scraped labels
 * alone; an answer resting on an official or curated record is not graded (those lists are the ground truth).
 *
 * Fitting is deterministic (examples in address order, Newton steps, no randomness), and the held-out split is
 * fixed by a hash of the address, so the same lists give the same model and the same figures every time.
 */
import { Effect, Schema } from "effect"
import type { StoreError } from "../kernel/index.ts"
import { activeOn, type Authority, type IntelRecord } from "./Intel.ts"
import type { Evaluation, Model, Stored } from "./CalibrationModel.ts"
import { Administration, IntelIndex } from "./IntelIndex.ts"
import * as Scoring from "./Scoring.ts"

export { Evaluation, Model, Stored } from "./CalibrationModel.ts"

/** How far a calibration may move a rule-based score, and the floor of any listed address. */
export const bounds = {
  /** At most this many points down from the rule-based score. */
  lower: 25,
  /** At most this many points up. */
  raise: 10,
  /** A listed address never scores below this (the lowest score that is not ALLOW). */
  floor: 15
} as const

/** The penalty the CLI fits with: strong enough that a list seen a few times keeps a weight near zero. */
export const defaultL2 = 1

/** A feature present in fewer training examples than this is left out of the model. */
export const minSupport = 5

/** The share of addresses held out of fitting, chosen by a hash of the address. */
export const heldOutShare = 0.2

const risky = (r: IntelRecord) => Scoring.weights[r.category].weight > 0

/** Whether an address goes to the held-out set: a fixed function of the address (FNV-1a, 32 bits). */
export const heldOut = (address: string): boolean => {
  let h = 0x811c9dc5
  for (let i = 0; i < address.length; i++) {
    h ^= address.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h % 1000 < heldOutShare * 1000
}

/** Years from `from` to `to` (ISO dates), at least 0. */
const yearsBetween = (from: string, to: string) =>
  Math.max(0, (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / (365.25 * 86_400_000))

/**
 * The features of an address from its records in force: only scraped records count. Values are 0–1 except
 * `agreement` (further scraped lists naming a risk, up to 3).
 */
export const featuresOf = (
  records: ReadonlyArray<IntelRecord>,
  authorityOf: (list: string) => Authority,
  asOf: string
): ReadonlyMap<string, number> => {
  const scraped = records.filter((r) => authorityOf(r.list) === "scraped")
  const risk = scraped.filter(risky)
  const features = new Map<string, number>([["bias", 1]])
  const lists = new Set(risk.map((r) => r.list))
  for (const list of lists) features.set(`list:${list}`, 1)
  // A scraped sanctions claim is a report, whatever list it is on: only official lists make a sanctions match.
  for (const r of risk)
    features.set(`signal:${r.category === "sanctions" ? Scoring.reported.type : Scoring.weights[r.category].type}`, 1)
  if (lists.size > 1) features.set("agreement", Math.min(3, lists.size - 1))
  if (scraped.some((r) => !risky(r))) features.set("positive", 1)
  const oldest = risk.reduce<string | undefined>(
    (o, r) => (o === undefined || r.listedAt < o ? r.listedAt : o),
    undefined
  )
  if (oldest !== undefined) {
    const age = Math.min(5, yearsBetween(oldest, asOf)) / 5
    if (age > 0) features.set("age", age)
  }
  return features
}

/**
 * Which sources a citation re-publishes: declared ties (a citation containing `cites`, case aside, copies the
 * scraped `lists`), beside the default tie of a citation to every list whose publisher it names.
 */
export const Provenance = Schema.Struct({
  ties: Schema.Array(
    Schema.Struct({
      cites: Schema.String.check(Schema.isMinLength(3)),
      lists: Schema.Array(Schema.String),
      why: Schema.String
    })
  )
})
export type Provenance = typeof Provenance.Type

/** No declared tie: a citation is tied only to the lists whose publisher it names. */
export const noProvenance: Provenance = { ties: [] }

/**
 * Whether an entry citing `cites` copies the scraped list `list` (published by `publisher`): the citation names the
 * publisher (a word of four letters or more of it, e.g. `etherscan` in `https://etherscan.io/labelcloud`), or a
 * declared tie says so.
 */
export const tied = (provenance: Provenance, cites: string, list: string, publisher: string): boolean => {
  const c = cites.toLowerCase().replace(/[^a-z0-9]/g, "")
  const words = publisher
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 4)
  if (words.some((w) => c.includes(w))) return true
  const raw = cites.toLowerCase()
  return provenance.ties.some((t) => raw.includes(t.cites.toLowerCase()) && t.lists.includes(list))
}

/**
 * The ground truth of an address: whether an official or curated list names it for a risk on its own word. An
 * entry that cites a source tied to one of `features` (the scraped lists naming the address for a risk) is a copy
 * of the evidence it would confirm; it does not count. `copied` says the reviewed lists named it only so.
 */
export const truthOf = (
  records: ReadonlyArray<IntelRecord>,
  authorityOf: (list: string) => Authority,
  copies: (cites: string) => boolean = () => false
): { readonly truth: boolean; readonly copied: boolean } => {
  const reviewed = records.filter((r) => authorityOf(r.list) !== "scraped" && risky(r))
  const own = reviewed.filter((r) => r.cites === undefined || !copies(r.cites))
  return { truth: own.length > 0, copied: own.length === 0 && reviewed.length > 0 }
}

/** Whether an address is a training example: some scraped list names it. */
export const isExample = (records: ReadonlyArray<IntelRecord>, authorityOf: (list: string) => Authority): boolean =>
  records.some((r) => authorityOf(r.list) === "scraped")

/**
 * Whether the model grades an answer: it rests on scraped labels alone (a scraped risk record, and no official or
 * curated record in force).
 */
export const grades = (records: ReadonlyArray<IntelRecord>, authorityOf: (list: string) => Authority): boolean =>
  records.some((r) => risky(r)) && records.every((r) => authorityOf(r.list) === "scraped")

/** One address as the fit sees it. */
export interface Example {
  readonly address: string
  readonly features: ReadonlyMap<string, number>
  readonly truth: boolean
  /**
   * The rule-based score of its scraped records alone: the answer it would get were the reviewed lists not there,
   * the evaluation's baseline.
   */
  readonly ruleScore: number
  /** Whether a scraped list names it for a risk: only such answers are calibrated; the others keep their score. */
  readonly graded: boolean
  /** Whether a reviewed list names it only through copies of its own features (then `truth` is false). */
  readonly copied?: boolean
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)))

/** The probability a model gives to features. */
export const probability = (model: Pick<Model, "features" | "weights">, features: ReadonlyMap<string, number>) => {
  let z = 0
  for (let i = 0; i < model.features.length; i++) z += (model.weights[i] ?? 0) * (features.get(model.features[i]!) ?? 0)
  return sigmoid(z)
}

/** Solves `a x = b` for a symmetric positive definite `a` (Cholesky); `a` is d×d, row-major. */
const solve = (a: Array<Array<number>>, b: Array<number>): Array<number> => {
  const d = b.length
  const l = a.map(() => new Array<number>(d).fill(0))
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j]!
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!
      l[i]![j] = i === j ? Math.sqrt(Math.max(s, 1e-12)) : s / l[j]![j]!
    }
  }
  const y = new Array<number>(d).fill(0)
  for (let i = 0; i < d; i++) {
    let s = b[i]!
    for (let k = 0; k < i; k++) s -= l[i]![k]! * y[k]!
    y[i] = s / l[i]![i]!
  }
  const x = new Array<number>(d).fill(0)
  for (let i = d - 1; i >= 0; i--) {
    let s = y[i]!
    for (let k = i + 1; k < d; k++) s -= l[k]![i]! * x[k]!
    x[i] = s / l[i]![i]!
  }
  return x
}

/**
 * Fits weights to examples by Newton's method on the L2-penalised log-likelihood (the bias is not penalised).
 * Features seen in fewer than `minSupport` examples are left out; the rest are sorted by name after `bias`.
 */
export const fit = (
  examples: ReadonlyArray<Example>,
  l2 = defaultL2
): { readonly features: ReadonlyArray<string>; readonly weights: ReadonlyArray<number> } => {
  const support = new Map<string, number>()
  for (const e of examples) for (const f of e.features.keys()) support.set(f, (support.get(f) ?? 0) + 1)
  const features = [
    "bias",
    ...[...support]
      .filter(([f, n]) => f !== "bias" && n >= minSupport)
      .map(([f]) => f)
      .sort()
  ]
  const d = features.length
  const rows = examples.map((e) => features.map((f) => e.features.get(f) ?? 0))
  let w = new Array<number>(d).fill(0)
  for (let iteration = 0; iteration < 100; iteration++) {
    const gradient = w.map((wi, i) => (i === 0 ? 0 : l2 * wi))
    const hessian = features.map((_, i) => features.map((__, j) => (i === j && i !== 0 ? l2 : 0)))
    // A little curvature on the bias too, so an all-positive or all-negative set still has a finite answer.
    hessian[0]![0]! += 1e-6
    rows.forEach((x, n) => {
      let z = 0
      for (let i = 0; i < d; i++) z += w[i]! * x[i]!
      const p = sigmoid(z)
      const r = p - (examples[n]!.truth ? 1 : 0)
      const v = p * (1 - p)
      for (let i = 0; i < d; i++) {
        if (x[i] === 0) continue
        gradient[i]! += r * x[i]!
        for (let j = 0; j <= i; j++) if (x[j] !== 0) hessian[i]![j]! += v * x[i]! * x[j]!
      }
    })
    for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) hessian[i]![j] = hessian[j]![i]!
    const step = solve(hessian, gradient)
    w = w.map((wi, i) => wi - step[i]!)
    if (Math.max(...step.map(Math.abs)) < 1e-10) break
  }
  // Rounded so that the stored model, and every figure computed from it, is the same on every machine.
  return { features, weights: w.map((x) => Math.round(x * 1e9) / 1e9) }
}

/**
 * The calibrated score of an answer whose rule-based score is `ruleScore`: the probability as a score, kept within
 * {@link bounds} of the rule-based one and never below the floor of a listed address.
 */
export const calibratedScore = (ruleScore: number, probability: number): number =>
  Math.max(
    Math.min(bounds.floor, ruleScore),
    Math.min(100, ruleScore + bounds.raise, Math.max(ruleScore - bounds.lower, Math.round(100 * probability)))
  )

const atThreshold = (scored: ReadonlyArray<{ readonly score: number; readonly truth: boolean }>, threshold: number) => {
  const flagged = scored.filter((s) => s.score >= threshold)
  const hits = flagged.filter((s) => s.truth).length
  const positives = scored.filter((s) => s.truth).length
  const round = (x: number) => Math.round(x * 1000) / 1000
  return {
    flagged: flagged.length,
    precision: flagged.length === 0 ? 0 : round(hits / flagged.length),
    recall: positives === 0 ? 0 : round(hits / positives)
  }
}

/**
 * Evaluates a model on examples as if the reviewed lists were hidden: each answer from scraped records alone,
 * calibrated where a scraped list names a risk, against whether a reviewed list names the address.
 */
export const evaluate = (model: Pick<Model, "features" | "weights">, examples: ReadonlyArray<Example>): Evaluation => {
  const scored = examples.map((e) => {
    const p = probability(model, e.features)
    return {
      truth: e.truth,
      p,
      score: e.graded ? calibratedScore(e.ruleScore, p) : e.ruleScore,
      rule: e.ruleScore
    }
  })
  const brier = (f: (s: (typeof scored)[number]) => number) =>
    scored.length === 0
      ? 0
      : Math.round((scored.reduce((a, s) => a + (f(s) - (s.truth ? 1 : 0)) ** 2, 0) / scored.length) * 10_000) / 10_000
  const rules = scored.map((s) => ({ score: s.rule, truth: s.truth }))
  const reliability = Array.from({ length: 10 }, (_, i) => {
    const inBin = scored.filter((s) => Math.min(9, Math.floor(s.p * 10)) === i)
    const mean = (f: (s: (typeof scored)[number]) => number) =>
      inBin.length === 0 ? 0 : Math.round((inBin.reduce((a, s) => a + f(s), 0) / inBin.length) * 1000) / 1000
    return {
      from: i / 10,
      to: (i + 1) / 10,
      count: inBin.length,
      predicted: mean((s) => s.p),
      observed: mean((s) => (s.truth ? 1 : 0))
    }
  })
  return {
    examples: scored.length,
    positives: scored.filter((s) => s.truth).length,
    brier: brier((s) => s.p),
    brierRules: brier((s) => s.rule / 100),
    block: atThreshold(scored, 85),
    blockRules: atThreshold(rules, 85),
    review: atThreshold(scored, 60),
    reviewRules: atThreshold(rules, 60),
    reliability
  }
}

/** Fits a model on the examples not held out and evaluates it on those held out. */
export const train = (
  examples: ReadonlyArray<Example>,
  options: { readonly asOf: string; readonly fittedAt: string; readonly l2?: number }
): Model => {
  const ordered = [...examples].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
  const learn = ordered.filter((e) => !heldOut(e.address))
  const test = ordered.filter((e) => heldOut(e.address))
  const l2 = options.l2 ?? defaultL2
  const fitted = fit(learn, l2)
  return {
    asOf: options.asOf,
    fittedAt: options.fittedAt,
    features: fitted.features,
    weights: fitted.weights,
    l2,
    training: {
      examples: learn.length,
      positives: learn.filter((e) => e.truth).length,
      copied: learn.filter((e) => e.copied === true).length
    },
    evaluation: evaluate(fitted, test)
  }
}

/** The model a screening of `asOf` uses: the newest stored for that day or before it, if any. */
export const modelOn = <M extends Pick<Stored, "asOf" | "version">>(
  models: ReadonlyArray<M>,
  asOf: string
): M | undefined =>
  models.reduce<M | undefined>(
    (best, m) =>
      m.asOf <= asOf && (best === undefined || m.asOf > best.asOf || (m.asOf === best.asOf && m.version > best.version))
        ? m
        : best,
    undefined
  )

/** What a calibration did to one answer. */
export interface Applied {
  readonly model: number
  /** The day of the lists the model was fitted on, and when it was fitted. */
  readonly modelAsOf: string
  readonly fittedAt: string
  readonly probability: number
  readonly ruleScore: number
  readonly score: number
  readonly band: Scoring.Band
  readonly action: Scoring.Action
  /** One sentence: what changed and why. */
  readonly sentence: string
}

/**
 * Calibrates an assessment of `records` (in force on `asOf`) with `model`, or undefined when the model does not
 * grade it (no scraped risk record, or an official or curated record in force): those answers stay rule-based.
 */
export const apply = (
  assessment: Pick<Scoring.Assessment, "score">,
  records: ReadonlyArray<IntelRecord>,
  authorityOf: (list: string) => Authority,
  model: Stored,
  asOf: string
): Applied | undefined => {
  if (!grades(records, authorityOf)) return undefined
  const p = probability(model, featuresOf(records, authorityOf, asOf))
  const score = calibratedScore(assessment.score, p)
  const band = Scoring.band(score)
  const lists = [...new Set(records.filter(risky).map((r) => r.list))].sort()
  const share = p < 0.005 ? "fewer than 1%" : p > 0.995 ? "more than 99%" : `about ${Math.round(p * 100)}%`
  const moved =
    score === assessment.score
      ? `keeps the score at ${score}`
      : `moves the score from ${assessment.score} to ${score}${
          score === assessment.score - bounds.lower || score === assessment.score + bounds.raise
            ? ` (as far as a calibration may move it)`
            : ""
        }`
  return {
    model: model.version,
    modelAsOf: model.asOf,
    fittedAt: model.fittedAt,
    // Two decimals, never a flat 0 or 1 (no list is that sure).
    probability: Math.min(0.99, Math.max(0.01, Math.round(p * 100) / 100)),
    ruleScore: assessment.score,
    score,
    band,
    action: Scoring.actions[band],
    sentence: `Calibration (model ${model.version}, fitted on the lists as of ${model.asOf}) ${moved}: the scraped evidence of ${lists.join(", ")} alone is borne out by an official or curated list for ${share} of the addresses it names.`
  }
}

/**
 * The examples of the lists in force on `asOf`: every address some scraped list names, read in pages; a reviewed
 * entry tied by `provenance` to one of the address's feature lists is not its ground truth.
 */
export const examplesOn = (
  asOf: string,
  provenance: Provenance = noProvenance
): Effect.Effect<ReadonlyArray<Example>, StoreError.StoreError, IntelIndex> =>
  Effect.gen(function* () {
    const index = yield* IntelIndex
    const lists = yield* index.lists
    const authority = new Map(lists.map((l) => [l.list, l.authority]))
    const publisher = new Map(lists.map((l) => [l.list, l.source]))
    const authorityOf = (list: string): Authority => authority.get(list) ?? "scraped"
    const examples: Array<Example> = []
    const add = (address: string, records: ReadonlyArray<IntelRecord>) => {
      if (!isExample(records, authorityOf)) return
      const scraped = records.filter((r) => authorityOf(r.list) === "scraped")
      const features = [...new Set(scraped.filter(risky).map((r) => r.list))]
      const { truth, copied } = truthOf(records, authorityOf, (cites) =>
        features.some((l) => tied(provenance, cites, l, publisher.get(l) ?? ""))
      )
      examples.push({
        address,
        features: featuresOf(records, authorityOf, asOf),
        truth,
        copied,
        ruleScore: Scoring.assess(scraped, { authorityOf, officialLists: "the official lists" }).score,
        graded: scraped.some(risky)
      })
    }
    let after = ""
    while (true) {
      const page = yield* index.scan(after, pageSize)
      if (page.length === 0) break
      let start = 0
      for (let i = 1; i <= page.length; i++) {
        if (i < page.length && page[i]!.address === page[start]!.address) continue
        const address = page[start]!.address
        add(
          address,
          page.slice(start, i).filter((r) => activeOn(r, asOf))
        )
        start = i
      }
      after = page.at(-1)!.address
    }
    return examples
  })

/** Addresses read per page when the index is read whole. */
const pageSize = 2_000

/** A model cannot be fitted from the lists as they are: nothing was stored. */
export class CalibrationRefused extends Schema.TaggedError<CalibrationRefused>()("CalibrationRefused", {
  message: Schema.String
}) {}

/**
 * Fits a model from the lists in force on `asOf` and evaluates it on the held-out addresses; stores it as the next
 * version unless `store` is false. Refused when the lists give no example of one of the two outcomes.
 */
export const calibrate = (options: {
  readonly asOf: string
  readonly fittedAt: string
  readonly l2?: number
  readonly store: boolean
  /** Declared ties of citations to the lists they copy, beside the publisher's name. */
  readonly provenance?: Provenance
}): Effect.Effect<Model | Stored, StoreError.StoreError | CalibrationRefused, IntelIndex | Administration> =>
  Effect.gen(function* () {
    const examples = yield* examplesOn(options.asOf, options.provenance)
    const positives = examples.filter((e) => e.truth).length
    if (positives === 0 || positives === examples.length) {
      return yield* new CalibrationRefused({
        message:
          examples.length === 0
            ? `no scraped list names an address on ${options.asOf}: there is nothing to calibrate (ingest label sets with --authority scraped, and official or curated lists to check them against)`
            : positives === 0
              ? `no address a scraped list names on ${options.asOf} is named for a risk by an official or curated list: there is no ground truth to learn from`
              : `every address a scraped list names on ${options.asOf} is also named by an official or curated list: there is no counter-example to learn from`
      })
    }
    const model = train(examples, options)
    if (!options.store) return model
    const administration = yield* Administration
    return yield* administration.storeModel(model)
  })
