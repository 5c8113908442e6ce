/**
 * Trinity's `difficulty_based` data selector (trinity/buffer/selector/selector.py `DifficultyBasedSelector`,
 * trinity/buffer/selector/difficulty_estimator.py `InterpolationBetaPREstimator`; the same from v0.3.2 to main).
 *
 * Each task's pass rate is a Beta(α, β) belief, starting at Beta(1, 1). Feedback (the indices of tasks just run and
 * their mean rewards) updates a capability coefficient (an EMA of where the observed pass rate sits between the
 * dataset's two feature columns), interpolates every task's pass rate from its features with it (`p̃`, clipped to
 * [0, 1]; the observed tasks take their observed rate), and moves every belief:
 *   α ← (1 − λ)·α + λ + (1 − ρ)·s̄ + ρ·p̃·m,   β ← (1 − λ)·β + λ + (1 − ρ)·f̄ + ρ·(1 − p̃)·m
 * with s̄ = rate·m and f̄ = (1 − rate)·m on the observed tasks, 0 elsewhere (`adaptive_rho` halves ρ when the
 * interpolation's mean absolute error on the observed tasks is ≥ 0.25). A batch takes the tasks whose predicted
 * pass rate (the Beta mean, or a Beta draw with `do_sample`) is nearest `target_reward`: the top-k of
 * −|target − pr| when `tau` is 0, else k draws without replacement from softmax(scores / tau).
 *
 * Randomness is reseeded per batch with `seed + current_index`, as Trinity does: the Beta draws with NumPy's
 * `default_rng` (numpy-distributions.ts: within ~1e-13 of NumPy's). Trinity's softmax sampling is
 * `torch.multinomial(replacement=False)` on a torch generator, whose stream is not reproducible here; the same
 * algorithm (top-k of p / q with q ~ Exp(1), torch's CPU path) runs on the engine's seeded generator instead. Ties in
 * the greedy top-k go to the lower index (torch leaves their order unspecified).
 *
 * Only `current_index` is checkpointed, as in Trinity: a resumed run starts the estimator afresh.
 */
import { Rng } from '../../engine/random';
import { npMean } from '../numpy/numpy-stats';
import { DataError } from '../../config/datasets/data-error';
import { defaultRng, type NumpyGenerator } from '../numpy/numpy-random';

export interface EstimatorOptions {
  /** Repeat times per task (the pseudo-count scale). */
  m: number;
  /** Discount of the previous belief. */
  lamb: number;
  /** Weight of the interpolated pseudo counts. */
  rho: number;
  capCoefUpdateDiscount?: number;
  adaptiveRho?: boolean;
}

export class InterpolationBetaPREstimator {
  readonly n: number;
  readonly alphas: Float64Array;
  readonly betas: Float64Array;
  rho: number;
  capCoef: number | null = null;
  private readonly m: number;
  private readonly lamb: number;
  private readonly discount: number;
  private readonly adaptiveRho: boolean;

  /** `features`: per task, the two anchor pass rates ([easier-model, stronger-model] in Trinity's example). */
  constructor(
    private readonly features: readonly (readonly [number, number])[],
    opts: EstimatorOptions,
  ) {
    this.n = features.length;
    this.m = opts.m;
    this.lamb = opts.lamb;
    this.rho = opts.rho;
    this.discount = opts.capCoefUpdateDiscount ?? 0.9;
    this.adaptiveRho = opts.adaptiveRho ?? false;
    this.alphas = new Float64Array(this.n).fill(1);
    this.betas = new Float64Array(this.n).fill(1);
  }

  /** Trinity's `update(ref_indices, ref_pass_rates)` (float64, NumPy's operation order). */
  update(indices: readonly number[], passRates: readonly number[]): void {
    // np.mean of an empty list is NaN, which would poison every belief; Trinity never sends an empty one.
    if (indices.length === 0) return;
    const refPassRate = npMean(passRates);
    // np.mean(features[ref], axis=0): a running sum down each column.
    let s0 = 0;
    let s1 = 0;
    for (const i of indices) {
      s0 += this.features[i][0];
      s1 += this.features[i][1];
    }
    const a0 = s0 / indices.length;
    const a1 = s1 / indices.length;
    const capEstimate = (refPassRate - a0) / (a1 - a0 + 1e-6);
    this.capCoef =
      this.capCoef === null ? capEstimate : this.discount * this.capCoef + (1 - this.discount) * capEstimate;
    const sBar = new Float64Array(this.n);
    const fBar = new Float64Array(this.n);
    indices.forEach((i, j) => {
      sBar[i] = passRates[j] * this.m;
      fBar[i] = (1 - passRates[j]) * this.m;
    });
    const pTilde = Float64Array.from(this.features, ([f0, f1]) =>
      Math.min(Math.max((f1 - f0) * this.capCoef! + f0, 0), 1),
    );
    const mae = npMean(indices.map((i, j) => Math.abs(pTilde[i] - passRates[j])));
    if (this.adaptiveRho && mae >= 0.25) this.rho = this.rho * 0.5;
    indices.forEach((i, j) => {
      pTilde[i] = passRates[j];
    });
    const { lamb, rho, m } = this;
    for (let i = 0; i < this.n; i++) {
      this.alphas[i] = (1 - lamb) * this.alphas[i] + lamb + (1 - rho) * sBar[i] + rho * pTilde[i] * m;
      this.betas[i] = (1 - lamb) * this.betas[i] + lamb + (1 - rho) * fBar[i] + rho * (1 - pTilde[i]) * m;
    }
  }

  /** `predict_pr`: the Beta means, or one Beta draw per task with `doSample`. */
  predictPr(rng: NumpyGenerator, doSample: boolean): Float64Array {
    if (doSample) return rng.beta(this.alphas, this.betas);
    return this.alphas.map((a, i) => a / (a + this.betas[i]));
  }
}

export interface DifficultySelectorOptions {
  seed: number;
  kwargs: Record<string, unknown>;
  start: number;
  name: string;
}

export interface DifficultySelector {
  currentIndex: number;
  readonly estimator: InterpolationBetaPREstimator;
  scores(): Float64Array;
  getIndices(batchSize: number): number[];
  feedback(indices: readonly number[], values: readonly number[]): void;
}

export function difficultyBasedSelector(
  features: readonly (readonly [number, number])[],
  opts: DifficultySelectorOptions,
): DifficultySelector {
  const kw = opts.kwargs;
  const num = (key: string, fallback: number): number => {
    const v = kw[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new DataError(`${opts.name}: data_selector.kwargs.${key} must be a number, got ${JSON.stringify(v)}`);
    return v;
  };
  const estimator = new InterpolationBetaPREstimator(features, {
    m: num('m', 16),
    lamb: num('lamb', 0.2),
    rho: num('rho', 0.2),
    adaptiveRho: Boolean(kw.adaptive_rho),
  });
  const doSample = Boolean(kw.do_sample);
  const targetReward = num('target_reward', 1.0);
  const tau = num('tau', 1.0);
  const seed = opts.seed;
  return {
    currentIndex: opts.start,
    estimator,
    scores() {
      const pr = estimator.predictPr(defaultRng(seed + this.currentIndex), doSample);
      return pr.map((p) => -Math.abs(targetReward - p));
    },
    getIndices(batchSize) {
      const scores = this.scores();
      const picked =
        tau === 0
          ? topK(scores, batchSize)
          : sampleWithoutReplacement(softmax(scores.map((s) => s / tau)), batchSize, new Rng(seed + this.currentIndex));
      this.currentIndex += batchSize;
      return picked;
    },
    feedback(indices, values) {
      estimator.update(indices, values);
    },
  };
}

/** `torch.topk(x, k).indices`: largest first; equal values by lower index. */
function topK(x: Float64Array, k: number): number[] {
  if (k > x.length) throw new Error(`selected index k out of range (k = ${k}, ${x.length} rows)`);
  const order = Array.from(x.keys());
  order.sort((a, b) => (x[a] === x[b] ? a - b : x[b] - x[a]));
  return order.slice(0, k);
}

function softmax(logits: Float64Array): Float64Array {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const e = logits.map((v) => Math.exp(v - max));
  let sum = 0;
  for (const v of e) sum += v;
  return e.map((v) => v / sum);
}

/** `torch.multinomial(p, k, replacement=False)`'s CPU algorithm: the k largest p / q, q ~ Exp(1) per category. */
function sampleWithoutReplacement(p: Float64Array, k: number, rng: Rng): number[] {
  if (k > p.length)
    throw new Error(`cannot sample n_sample > prob_dist.size(-1) samples without replacement (${k} > ${p.length})`);
  const keys = p.map((pi) => pi / -Math.log(1 - rng.uniform()));
  return topK(keys, k);
}
