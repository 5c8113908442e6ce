/**
 * Trinity's KL functions (trinity/algorithm/kl_fn/kl_fn.py, registry `KL_FN`): one class serves both
 * `algorithm.kl_loss_fn` (a loss term added in the actor) and `algorithm.kl_penalty_fn` (subtracted from the
 * token-level rewards in the trainer before a trainer-side advantage is computed).
 *
 * Per-token estimators of KL(π_θ ‖ π_ref), with ℓ = log π_θ, ℓ_ref = log π_ref, ℓ_old = log π_old:
 *  - none:         0
 *  - k1:           ℓ − ℓ_ref
 *  - k2:           ½ (ℓ − ℓ_ref)²
 *  - k3:           exp(ℓ_ref − ℓ) − 1 − (ℓ_ref − ℓ)                 (no clamping)
 *  - low_var_kl:   d = clamp(ℓ_ref − ℓ, −20, 20); clamp(exp(d) − d − 1, −10, 10)
 *  - abs:          |ℓ − ℓ_ref|
 *  - corrected_k3: k3 · clamp(exp(ℓ − ℓ_old), 0, 2) when ℓ_old is given (the weight is NOT detached), else k3
 *
 * Loss form: `kl_loss = agg(kl, mask, loss_agg_mode)`, the returned loss is `kl_loss · kl_coef`, metrics
 * `kl_loss` (unscaled) and `kl_coef` (the trainer logs them as `actor/kl_loss`, `actor/kl_coef`). `none` returns
 * a zero loss and no metrics.
 *
 * Penalty form: `token_level_rewards = token_level_scores − kl_coef · kl · response_mask`, with kl computed from
 * the *old* (rollout-time) log-probs and the reference's; metrics `kl` = mean over sequences of the per-sequence
 * masked mean of kl, and `kl_coef` = the coefficient used (logged as `critic/kl`, `critic/kl_coef`). Then the
 * coefficient is updated (only here, never in the loss form). `none` passes the scores through with no metrics.
 *
 * Coefficient control: fixed unless `adaptive`, then (Ziegler et al.) `kl_coef *= 1 + clip(kl / target_kl − 1,
 * −0.2, 0.2) · batch_size / horizon`, batch_size = the number of sequences. Trinity main writes the clip as
 * `torch.clip(<python float>, …)`, which raises TypeError, so an adaptive penalty crashes there; this module
 * implements the intended controller (the one veRL's AdaptiveKLController implements).
 */
import * as tf from '@tensorflow/tfjs-core';
import { aggregateLoss } from './loss-agg';
import { defaultFnArgs, AlgorithmArgsError, withDefaults } from './args';
import { tidy, metricScalars, type ScalarMetrics } from './tensor';

export const KL_FN_NAMES = ['none', 'k1', 'k2', 'k3', 'low_var_kl', 'abs', 'corrected_k3'] as const;
export type KlFnName = (typeof KL_FN_NAMES)[number];

export interface KlFnArgs {
  adaptive: boolean;
  kl_coef: number;
  target_kl: number | null;
  horizon: number | null;
}

export interface KlLossInputs {
  logprob: tf.Tensor;
  refLogprob?: tf.Tensor;
  actionMask: tf.Tensor;
  /** algorithm.loss_agg_mode (the actor passes the algorithm's, not the policy loss's). Default token-mean. */
  lossAggMode?: string;
  /** used by corrected_k3 only */
  oldLogprob?: tf.Tensor;
}

export interface KlLossResult {
  loss: tf.Scalar;
  metrics: ScalarMetrics;
}

export interface KlPenaltyInputs {
  /** [B][T] token-level scores (the outcome reward sits on the last response token) */
  tokenLevelScores: number[][];
  /** [B][T] log-probs of the policy that generated the data (veRL's `old_log_probs`) */
  oldLogprob: number[][];
  /** [B][T] reference-model log-probs (Trinity raises KeyError when they are missing) */
  refLogprob?: number[][];
  /** [B][T] response mask */
  responseMask: number[][];
}

export interface KlPenaltyResult {
  tokenLevelRewards: number[][];
  metrics: Record<string, number>;
}

function isKlFnName(name: string): name is KlFnName {
  return (KL_FN_NAMES as readonly string[]).includes(name);
}

/** The per-token KL estimate as a tensor (differentiable). */
export function klTensor(name: KlFnName, logprob: tf.Tensor, refLogprob: tf.Tensor, oldLogprob?: tf.Tensor): tf.Tensor {
  switch (name) {
    case 'none':
      return tf.zerosLike(logprob);
    case 'k1':
      return tf.sub(logprob, refLogprob);
    case 'k2':
      return tf.mul(tf.square(tf.sub(logprob, refLogprob)), 0.5);
    case 'k3':
      return k3Tensor(logprob, refLogprob);
    case 'low_var_kl': {
      const d = tf.clipByValue(tf.sub(refLogprob, logprob), -20, 20);
      return tf.clipByValue(tf.sub(tf.sub(tf.exp(d), d), 1), -10, 10);
    }
    case 'abs':
      return tf.abs(tf.sub(logprob, refLogprob));
    case 'corrected_k3': {
      const k3 = k3Tensor(logprob, refLogprob);
      if (!oldLogprob) return k3;
      const w = tf.clipByValue(tf.exp(tf.sub(logprob, oldLogprob)), 0, 2);
      return tf.mul(w, k3);
    }
  }
}

function k3Tensor(logprob: tf.Tensor, refLogprob: tf.Tensor): tf.Tensor {
  const logr = tf.sub(refLogprob, logprob);
  return tf.sub(tf.sub(tf.exp(logr), 1), logr);
}

/** The per-token KL estimate for one token, in float64 (the penalty form runs on the host). */
export function klScalar(name: KlFnName, logprob: number, refLogprob: number, oldLogprob?: number): number {
  switch (name) {
    case 'none':
      return 0;
    case 'k1':
      return logprob - refLogprob;
    case 'k2':
      return 0.5 * (logprob - refLogprob) ** 2;
    case 'k3': {
      const logr = refLogprob - logprob;
      return Math.exp(logr) - 1 - logr;
    }
    case 'low_var_kl': {
      const d = Math.min(20, Math.max(-20, refLogprob - logprob));
      return Math.min(10, Math.max(-10, Math.exp(d) - d - 1));
    }
    case 'abs':
      return Math.abs(logprob - refLogprob);
    case 'corrected_k3': {
      const logr = refLogprob - logprob;
      const k3 = Math.exp(logr) - 1 - logr;
      if (oldLogprob === undefined) return k3;
      return Math.min(2, Math.max(0, Math.exp(logprob - oldLogprob))) * k3;
    }
  }
}

/** A KL function with its (possibly adaptive) coefficient; one instance per role, as in Trinity. */
export class KlFn {
  readonly name: KlFnName;
  readonly args: KlFnArgs;
  /** the current coefficient (changes only through {@link applyKlPenaltyToReward} when adaptive) */
  klCoef: number;

  constructor(name: string, args?: Partial<KlFnArgs> | null) {
    if (!isKlFnName(name)) throw new AlgorithmArgsError('kl_fn', name, 'not registered');
    this.name = name;
    this.args = withDefaults(defaultFnArgs('kl_fn', name) as unknown as KlFnArgs, args);
    if (this.args.adaptive && (this.args.target_kl == null || this.args.horizon == null)) {
      throw new AlgorithmArgsError('kl_fn', name, 'Target KL and horizon must be provided for adaptive KL.');
    }
    this.klCoef = this.args.kl_coef;
  }

  /** Per-token KL tensor. */
  calculateKl(logprob: tf.Tensor, refLogprob: tf.Tensor, oldLogprob?: tf.Tensor): tf.Tensor {
    return klTensor(this.name, logprob, refLogprob, oldLogprob);
  }

  /** The KL loss term (already multiplied by kl_coef) and its metrics. */
  klLoss(inputs: KlLossInputs): KlLossResult {
    if (this.name === 'none') return { loss: tf.scalar(0), metrics: {} };
    const { logprob, refLogprob, actionMask, lossAggMode = 'token-mean', oldLogprob } = inputs;
    if (!refLogprob)
      throw new AlgorithmArgsError('kl_fn', this.name, 'the KL loss needs refLogprob (reference-model log-probs)');
    const coef = this.klCoef;
    return tidy(() => {
      const kl = klTensor(this.name, logprob, refLogprob, oldLogprob);
      const klLoss = aggregateLoss(kl, actionMask, lossAggMode);
      const metrics = { ...metricScalars({ kl_loss: klLoss }), kl_coef: tf.scalar(coef) };
      return { loss: tf.mul(klLoss, coef) as tf.Scalar, metrics };
    });
  }

  /** Subtracts kl_coef·kl from the token-level scores (float64, host side); updates the coefficient after. */
  applyKlPenaltyToReward(inputs: KlPenaltyInputs): KlPenaltyResult {
    const { tokenLevelScores, oldLogprob, refLogprob, responseMask } = inputs;
    if (this.name === 'none') return { tokenLevelRewards: tokenLevelScores.map((r) => [...r]), metrics: {} };
    if (!refLogprob)
      throw new AlgorithmArgsError(
        'kl_fn',
        this.name,
        "the KL penalty needs refLogprob (Trinity raises KeyError: 'ref_log_prob')",
      );
    const coef = this.klCoef;
    const B = tokenLevelScores.length;
    let seqMeanSum = 0;
    const rewards = tokenLevelScores.map((scores, i) => {
      let klSum = 0;
      let maskSum = 0;
      const row = scores.map((s, t) => {
        const m = responseMask[i][t];
        // Trinity multiplies by the mask (kl·m); skipping m = 0 only differs where padding holds non-finite log-probs
        const kl = m === 0 ? 0 : klScalar(this.name, oldLogprob[i][t], refLogprob[i][t]) * m;
        klSum += kl * m;
        maskSum += m;
        return s - coef * kl;
      });
      seqMeanSum += klSum / (maskSum + 1e-8);
      return row;
    });
    const currentKl = B > 0 ? seqMeanSum / B : NaN;
    this.updateKlCoef(currentKl, B);
    return { tokenLevelRewards: rewards, metrics: { kl: currentKl, kl_coef: coef } };
  }

  /** The adaptive controller's step (no-op when not adaptive). */
  updateKlCoef(currentKl: number, batchSize: number): void {
    if (!this.args.adaptive) return;
    const target = this.args.target_kl as number;
    const err = Math.min(0.2, Math.max(-0.2, currentKl / target - 1));
    this.klCoef *= 1 + (err * batchSize) / (this.args.horizon as number);
  }
}
