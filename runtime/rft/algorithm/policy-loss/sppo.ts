/**
 * `sppo` (sPPOPolicyLossFn, arXiv 2108.05828). With ρ = sg(exp(ℓ − ℓ_old)):
 *   in = [1/(1 + ε) ≤ ρ ≤ 1 + ε],   pg_loss = agg(−A·(ℓ − ℓ_old)·in)
 * (the gradient is −A·in·∇ℓ). Metrics `pg_clipfrac` (masked mean of not-in), `pg_loss`. Default ε = 0.3.
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { andF, geF, leF, notF, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface SppoPolicyLossArgs {
  epsilon: number;
  loss_agg_mode: string;
}

export function sppoPolicyLoss(inputs: PolicyLossInputs, args?: Partial<SppoPolicyLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'sppo') as unknown as SppoPolicyLossArgs, args);
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'sppo', 'old_logprob');
  const advantages = need(inputs.advantages, 'sppo', 'advantages');
  return tidy(() => {
    const logRatio = tf.sub(logprob, oldLogprob);
    // ρ is only compared, never differentiated
    const ratio = tf.exp(logRatio);
    const inRange = andF(geF(ratio, 1 / (1 + a.epsilon)), leF(ratio, 1 + a.epsilon));
    const loss = aggregateLoss(tf.mul(tf.mul(tf.neg(advantages), logRatio), inRange), actionMask, a.loss_agg_mode);
    const metrics = metricScalars({ pg_clipfrac: maskedMean(notF(inRange), actionMask), pg_loss: loss });
    return { loss, metrics };
  });
}
