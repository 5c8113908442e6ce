/**
 * Masked reductions and Trinity's `loss_agg_mode`s (trinity/algorithm/utils.py `aggregate_loss`, `masked_sum`,
 * `masked_mean`), as tfjs tensor functions.
 *
 * Facts from Trinity (main):
 *  - `masked_sum` zeroes unmasked positions with a select *and* multiplies by the mask, so NaN/inf sitting under a
 *    zero mask never reaches the sum, and a fractional mask acts as a weight.
 *  - `masked_mean` divides by `mask.sum() + 1e-8` (not `clamp(min=1)`): an all-zero mask gives 0, not NaN.
 *  - `seq-mean-token-sum-norm` divides the *whole batch's* masked sum by `normalizer + 1e-8`, the normalizer
 *    defaulting to the padded sequence length `mask.shape[-1]` — there is no division by the number of sequences.
 *  - the `seq-mean-*` modes take a plain mean over the sequences, fully masked rows included (they count as 0).
 */
import * as tf from '@tensorflow/tfjs-core';
import { LOSS_AGG_MODES as LOSS_AGG_MODE_CHOICES } from '../../config/model/choices';
import { floatMask } from './tensor';

/** The modes `algorithm.loss_agg_mode` accepts, in the config model's order (the model is their one home). */
export const LOSS_AGG_MODES: readonly string[] = LOSS_AGG_MODE_CHOICES.map((c) => c.value);

/** Trinity's epsilon in `masked_mean`'s denominator. */
export const MASKED_MEAN_EPS = 1e-8;

/** Σ mask·values over `axis` (all axes when omitted); positions where mask == 0 contribute exactly 0. */
export function maskedSum(values: tf.Tensor, mask: tf.Tensor, axis?: number): tf.Tensor {
  const m = floatMask(mask);
  const selected = tf.where(tf.notEqual(m, 0), values, tf.zerosLike(values));
  return tf.sum(tf.mul(selected, m), axis);
}

/** maskedSum / (Σ mask + 1e-8) over `axis` (all axes when omitted). */
export function maskedMean(values: tf.Tensor, mask: tf.Tensor, axis?: number): tf.Tensor {
  const m = floatMask(mask);
  return tf.div(maskedSum(values, m, axis), tf.add(tf.sum(m, axis), MASKED_MEAN_EPS));
}

/**
 * Reduces per-token `values` [B, T] to a scalar.
 *  - token-mean: Σ m·v / (Σ m + 1e-8)
 *  - seq-mean-token-sum: mean_b Σ_t m·v
 *  - seq-mean-token-mean: mean_b [Σ_t m·v / (Σ_t m + 1e-8)]
 *  - seq-mean-token-sum-norm: Σ m·v / (normalizer + 1e-8), normalizer = T unless given
 */
export function aggregateLoss(
  values: tf.Tensor,
  mask: tf.Tensor,
  mode: string = 'token-mean',
  normalizer?: number | null,
): tf.Scalar {
  switch (mode) {
    case 'token-mean':
      return maskedMean(values, mask) as tf.Scalar;
    case 'seq-mean-token-sum':
      return tf.mean(maskedSum(values, mask, -1)) as tf.Scalar;
    case 'seq-mean-token-mean':
      return tf.mean(maskedMean(values, mask, -1)) as tf.Scalar;
    case 'seq-mean-token-sum-norm': {
      const norm = normalizer ?? mask.shape[mask.rank - 1];
      return tf.div(maskedSum(values, mask), norm + MASKED_MEAN_EPS) as tf.Scalar;
    }
    default:
      throw new Error(
        `Invalid loss_agg_mode: ${mode}. Choose from [${LOSS_AGG_MODES.map((m) => `'${m}'`).join(', ')}]`,
      );
  }
}
