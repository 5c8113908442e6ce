/**
 * `topr` (TOPRPolicyLossFn, tapered off-policy REINFORCE, arXiv 2503.14286). With ρ = exp(ℓ − ℓ_old) (no clamp):
 *   α = clip(ρ, 0, 1) where A ≤ advantage_threshold, else 1;   topr_loss = agg(−sg(α)·A·ℓ)
 * Metrics `topr_loss`, `avg_alpha` (masked mean of α), `avg_ratio` (masked mean of ρ).
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { detach, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface ToprPolicyLossArgs {
  advantage_threshold: number;
  loss_agg_mode: string;
}

export function toprPolicyLoss(inputs: PolicyLossInputs, args?: Partial<ToprPolicyLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'topr') as unknown as ToprPolicyLossArgs, args);
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'topr', 'old_logprob');
  const rewards = need(inputs.advantages, 'topr', 'advantages');
  return tidy(() => {
    const ratio = tf.exp(tf.sub(logprob, oldLogprob));
    const alpha = tf.where(
      tf.lessEqual(rewards, a.advantage_threshold),
      tf.clipByValue(ratio, 0, 1),
      tf.onesLike(ratio),
    );
    const loss = aggregateLoss(tf.mul(tf.mul(tf.neg(detach(alpha)), rewards), logprob), actionMask, a.loss_agg_mode);
    const metrics = metricScalars({
      topr_loss: loss,
      avg_alpha: maskedMean(alpha, actionMask),
      avg_ratio: maskedMean(ratio, actionMask),
    });
    return { loss, metrics };
  });
}
