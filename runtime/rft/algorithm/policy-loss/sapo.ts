/**
 * `sapo` (SAPOPolicyLossFn, Soft Adaptive Policy Optimization, arXiv 2511.20347). With ρ = exp(ℓ − ℓ_old)
 * (no clamp) and τ = tau_pos where A > 0, else tau_neg:
 *   gate = σ(τ(ρ − 1))·4/τ,   sapo_loss = agg(−A·sg(gate)·ℓ)
 * Trinity detaches the gate and multiplies by ℓ, so the gradient is −A·gate·∇ℓ (a REINFORCE-style weight), not
 * the derivative of the gate w.r.t. ρ. Metrics `sapo_loss`, `ppo_kl`, `avg_soft_gate`, `avg_ratio`,
 * `pos_adv_frac` (masked mean of [A > 0]). tau_neg must be ≥ tau_pos.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { asFloat, detach, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface SapoPolicyLossArgs {
  tau_pos: number;
  tau_neg: number;
  loss_agg_mode: string;
}

export function sapoArgs(args?: Partial<SapoPolicyLossArgs> | null): SapoPolicyLossArgs {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'sapo') as unknown as SapoPolicyLossArgs, args);
  if (!(a.tau_neg >= a.tau_pos)) {
    throw new AlgorithmArgsError(
      'policy_loss_fn',
      'sapo',
      `tau_neg (${a.tau_neg}) should be >= tau_pos (${a.tau_pos}) for better training stability`,
    );
  }
  return a;
}

export function sapoPolicyLoss(inputs: PolicyLossInputs, args?: Partial<SapoPolicyLossArgs> | null): PolicyLossResult {
  const a = sapoArgs(args);
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'sapo', 'old_logprob');
  const advantages = need(inputs.advantages, 'sapo', 'advantages');
  return tidy(() => {
    const logRatio = tf.sub(logprob, oldLogprob);
    const ratio = tf.exp(logRatio);
    const pos = tf.greater(advantages, 0);
    const tau = tf.where(pos, tf.fill(advantages.shape, a.tau_pos), tf.fill(advantages.shape, a.tau_neg));
    const gate = tf.mul(tf.sigmoid(tf.mul(tau, tf.sub(ratio, 1))), tf.div(4, tau));
    const loss = aggregateLoss(tf.mul(tf.mul(tf.neg(advantages), detach(gate)), logprob), actionMask, a.loss_agg_mode);
    const metrics = metricScalars({
      sapo_loss: loss,
      ppo_kl: maskedMean(tf.neg(logRatio), actionMask),
      avg_soft_gate: maskedMean(gate, actionMask),
      avg_ratio: maskedMean(ratio, actionMask),
      pos_adv_frac: maskedMean(asFloat(pos), actionMask),
    });
    return { loss, metrics };
  });
}
