/**
 * The SFT losses (negative log-likelihood over the mask):
 *  - `sft` (SFTLossFn): agg(−ℓ). Metric `sft_loss`.
 *  - `sft_is` (SFTISLossFn, CHORD): agg(−ℓ·sg(p)), p = exp(ℓ). Metric `sft_is_loss`.
 *  - `sft_phi` (SFTPhiLossFn, CHORD): agg(−ℓ'·sg(φ(p))), φ(p) = p(1 − p) from the UNclamped p, and ℓ' = min(ℓ,
 *    log cutoff_prob) when cutoff_prob < 1 (no gradient above the cutoff). Metric `sft_phi_loss`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss } from '../loss-agg';
import { detach, metricScalars, tidy } from '../tensor';
import type { PolicyLossInputs, PolicyLossResult } from './types';

export interface SftLossArgs {
  loss_agg_mode: string;
}

export interface SftPhiLossArgs {
  loss_agg_mode: string;
  cutoff_prob: number;
}

export function sftLoss(inputs: PolicyLossInputs, args?: Partial<SftLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'sft') as unknown as SftLossArgs, args);
  return tidy(() => {
    const loss = aggregateLoss(tf.neg(inputs.logprob), inputs.actionMask, a.loss_agg_mode);
    return { loss, metrics: metricScalars({ sft_loss: loss }) };
  });
}

export function sftIsLoss(inputs: PolicyLossInputs, args?: Partial<SftLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'sft_is') as unknown as SftLossArgs, args);
  return tidy(() => {
    const p = detach(tf.exp(inputs.logprob));
    const loss = aggregateLoss(tf.mul(tf.neg(inputs.logprob), p), inputs.actionMask, a.loss_agg_mode);
    return { loss, metrics: metricScalars({ sft_is_loss: loss }) };
  });
}

export function sftPhiArgs(args?: Partial<SftPhiLossArgs> | null): SftPhiLossArgs {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'sft_phi') as unknown as SftPhiLossArgs, args);
  if (!(a.cutoff_prob >= 0 && a.cutoff_prob <= 1))
    throw new AlgorithmArgsError('policy_loss_fn', 'sft_phi', 'cutoff_prob must be in [0, 1]');
  return a;
}

export function sftPhiLoss(inputs: PolicyLossInputs, args?: Partial<SftPhiLossArgs> | null): PolicyLossResult {
  const a = sftPhiArgs(args);
  return tidy(() => {
    const p = tf.exp(inputs.logprob);
    const lp = a.cutoff_prob < 1 ? tf.minimum(inputs.logprob, Math.log(a.cutoff_prob)) : inputs.logprob;
    const phi = detach(tf.mul(p, tf.sub(1, p)));
    const loss = aggregateLoss(tf.mul(tf.neg(lp), phi), inputs.actionMask, a.loss_agg_mode);
    return { loss, metrics: metricScalars({ sft_phi_loss: loss }) };
  });
}
