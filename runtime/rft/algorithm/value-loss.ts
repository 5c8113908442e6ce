/**
 * PPO's clipped value loss (veRL's `compute_value_loss`, which Trinity's critic worker calls): the critic's new
 * values may move at most `cliprange_value` from the rollout's before the loss stops rewarding the move.
 *   V_clip = V_old + clip(V − V_old, −c, c)
 *   vf_loss = ½ · agg(max((V − R)², (V_clip − R)²), mask, loss_agg_mode)
 * Metrics: `vf_loss`, `vf_clipfrac` = masked mean of [(V_clip − R)² > (V − R)²], `vpred_mean` = masked mean of V.
 * The loss is differentiable w.r.t. `vpred`; every tensor is [B, T] over response tokens.
 */
import * as tf from '@tensorflow/tfjs-core';
import { aggregateLoss, maskedMean } from './loss-agg';
import { gtF, tidy, type ScalarMetrics } from './tensor';

export interface ValueLossInputs {
  /** the critic's values now (the differentiated input) */
  vpred: tf.Tensor2D;
  /** the values at rollout time (`values` in veRL) */
  oldValues: tf.Tensor2D;
  returns: tf.Tensor2D;
  /** response mask (1 where the loss applies) */
  responseMask: tf.Tensor2D;
}

export interface ValueLossArgs {
  /** veRL's `critic.cliprange_value` */
  cliprangeValue: number;
  lossAggMode: string;
}

export interface ValueLossResult {
  loss: tf.Scalar;
  /** `vf_loss` (the loss itself), `vf_clipfrac`, `vpred_mean`, in that order */
  metrics: ScalarMetrics;
}

export function clippedValueLoss(inputs: ValueLossInputs, args: ValueLossArgs): ValueLossResult {
  const { vpred, oldValues, returns, responseMask } = inputs;
  const c = args.cliprangeValue;
  return tidy(() => {
    const vclip = tf.add(oldValues, tf.clipByValue(tf.sub(vpred, oldValues), -c, c));
    const unclipped = tf.square(tf.sub(vpred, returns));
    const clipped = tf.square(tf.sub(vclip, returns));
    const loss = tf.mul(
      aggregateLoss(tf.maximum(unclipped, clipped), responseMask, args.lossAggMode),
      0.5,
    ) as tf.Scalar;
    const metrics: ScalarMetrics = {
      vf_loss: loss,
      vf_clipfrac: maskedMean(gtF(clipped, unclipped), responseMask) as tf.Scalar,
      vpred_mean: maskedMean(vpred, responseMask) as tf.Scalar,
    };
    return { loss, metrics };
  });
}
