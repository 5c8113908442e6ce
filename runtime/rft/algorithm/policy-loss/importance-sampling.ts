/**
 * `importance_sampling` (ImportanceSamplingLossFn; used for on-policy distillation): unclipped
 *   log ρ = clamp(ℓ − ℓ_old, −20, 20),  pg_loss = agg(−A·ρ)
 * Metrics `pg_loss`, `ratio/mean` (masked mean of ρ), `approx_kl` (masked mean of −log ρ).
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface ImportanceSamplingLossArgs {
  loss_agg_mode: string;
}

export function importanceSamplingLoss(
  inputs: PolicyLossInputs,
  args?: Partial<ImportanceSamplingLossArgs> | null,
): PolicyLossResult {
  const a = withDefaults(
    defaultFnArgs('policy_loss_fn', 'importance_sampling') as unknown as ImportanceSamplingLossArgs,
    args,
  );
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'importance_sampling', 'old_logprob');
  const advantages = need(inputs.advantages, 'importance_sampling', 'advantages');
  return tidy(() => {
    const logRatio = tf.clipByValue(tf.sub(logprob, oldLogprob), -20, 20);
    const ratio = tf.exp(logRatio);
    const loss = aggregateLoss(tf.mul(tf.neg(advantages), ratio), actionMask, a.loss_agg_mode);
    const metrics = metricScalars({
      pg_loss: loss,
      'ratio/mean': maskedMean(ratio, actionMask),
      approx_kl: maskedMean(tf.neg(logRatio), actionMask),
    });
    return { loss, metrics };
  });
}
