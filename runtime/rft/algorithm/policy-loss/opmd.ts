/**
 * `opmd` (OPMDPolicyLossFn): opmd_loss = agg(−A·ℓ, mask, loss_agg_mode) / (1 + tau). No importance ratio (the
 * advantage already holds r − baseline). Metric `opmd_loss`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss } from '../loss-agg';
import { metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface OpmdPolicyLossArgs {
  tau: number;
  loss_agg_mode: string;
}

export function opmdPolicyLoss(inputs: PolicyLossInputs, args?: Partial<OpmdPolicyLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'opmd') as unknown as OpmdPolicyLossArgs, args);
  const advantages = need(inputs.advantages, 'opmd', 'advantages');
  return tidy(() => {
    const agg = aggregateLoss(tf.mul(tf.neg(advantages), inputs.logprob), inputs.actionMask, a.loss_agg_mode);
    const loss = tf.div(agg, 1 + a.tau) as tf.Scalar;
    return { loss, metrics: metricScalars({ opmd_loss: loss }) };
  });
}
