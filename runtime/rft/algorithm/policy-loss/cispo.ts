/**
 * `cispo` (CISPOPolicyLossFn, arXiv 2506.13585). With ρ = exp(ℓ − ℓ_old) (no clamp):
 *   w = sg(clip(ρ, 1 − clip_range_low, 1 + clip_range_high)),  cispo_loss = agg(−A·w·sg(M)·ℓ)
 * M = 1, or with `enable_mask_clip` 0 where (ρ > 1 + mask_clip_range_high and A > 0) or
 * (ρ < 1 − mask_clip_range_low and A < 0). Defaults: low 1.0 (no lower bound in effect), high 0.28.
 * Metrics `cispo_loss`, `ppo_kl` (masked mean of ℓ_old − ℓ), `unmasked_frac` (masked mean of M).
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { andF, detach, gtF, ltF, notF, orF, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface CispoPolicyLossArgs {
  clip_range_low: number;
  clip_range_high: number;
  enable_mask_clip: boolean;
  mask_clip_range_low: number;
  mask_clip_range_high: number;
  loss_agg_mode: string;
}

export function cispoPolicyLoss(
  inputs: PolicyLossInputs,
  args?: Partial<CispoPolicyLossArgs> | null,
): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'cispo') as unknown as CispoPolicyLossArgs, args);
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'cispo', 'old_logprob');
  const advantages = need(inputs.advantages, 'cispo', 'advantages');
  return tidy(() => {
    const logRatio = tf.sub(logprob, oldLogprob);
    const ratio = tf.exp(logRatio);
    const w = tf.clipByValue(ratio, 1 - a.clip_range_low, 1 + a.clip_range_high);
    let mask: tf.Tensor = tf.onesLike(ratio);
    if (a.enable_mask_clip) {
      const high = andF(gtF(ratio, 1 + a.mask_clip_range_high), gtF(advantages, 0));
      const low = andF(ltF(ratio, 1 - a.mask_clip_range_low), ltF(advantages, 0));
      mask = notF(orF(high, low));
    }
    const perToken = tf.mul(tf.mul(tf.mul(tf.neg(advantages), detach(w)), detach(mask)), logprob);
    const loss = aggregateLoss(perToken, actionMask, a.loss_agg_mode);
    const metrics = metricScalars({
      cispo_loss: loss,
      ppo_kl: maskedMean(tf.neg(logRatio), actionMask),
      unmasked_frac: maskedMean(mask, actionMask),
    });
    return { loss, metrics };
  });
}
