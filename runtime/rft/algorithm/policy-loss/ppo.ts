/**
 * `ppo` (PPOPolicyLossFn): the clipped surrogate with dual clip.
 *   log ρ = clamp(ℓ − ℓ_old, −20, 20)   (ℓ − sg(ℓ) with fallback_to_policy_gradient: ρ = 1, ∇ = ∇ℓ)
 *   L1 = −A·ρ, L2 = −A·clip(ρ, 1 − clip_range_low, 1 + clip_range_high), L = max(L1, L2)
 *   where A < 0: L = min(L, −A·clip_ratio_c)
 *   pg_loss = agg(L, mask, loss_agg_mode)
 * Metrics: `pg_loss`, `pg_clipfrac` = masked mean of [L2 > L1], `pg_clipfrac_lower` = masked mean of
 * [max(L1, L2) > −A·c]·[A < 0], `ppo_kl` = masked mean of −log ρ (clamped). clip_range_low/high fall back to
 * clip_range (default_args: clip_range 0.2, clip_ratio_c 3.0); clip_ratio_c must exceed 1.
 * `enable_sequence_masking` (DeepSeek-V3.2): tokens with A < 0 in sequences whose mean −log ρ over the mask
 * (÷ (Σ mask + 1e-10)) exceeds `delta_sequence_masking` get zero loss; metrics `seq_mask/masked_tokens` (count of
 * such tokens ÷ (Σ mask + 1e-10), padding included) and `seq_mask/mean_sequence_kl`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { andF, asFloat, detach, floatMask, gtF, notF, metricScalars, tidy, type ScalarMetrics } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface PpoPolicyLossArgs {
  clip_range: number | null;
  clip_range_low: number | null;
  clip_range_high: number | null;
  clip_ratio_c: number;
  loss_agg_mode: string;
  enable_sequence_masking: boolean;
  delta_sequence_masking: number;
  fallback_to_policy_gradient: boolean;
}

export function ppoArgs(
  args?: Partial<PpoPolicyLossArgs> | null,
  name = 'ppo',
): PpoPolicyLossArgs & { low: number; high: number } {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'ppo') as unknown as PpoPolicyLossArgs, args);
  const low = a.clip_range_low ?? a.clip_range;
  const high = a.clip_range_high ?? a.clip_range;
  if (!(a.clip_ratio_c > 1))
    throw new AlgorithmArgsError('policy_loss_fn', name, 'clip_ratio_c must be greater than 1.0.');
  if (low == null) throw new AlgorithmArgsError('policy_loss_fn', name, 'clip_range_low must be specified.');
  if (high == null) throw new AlgorithmArgsError('policy_loss_fn', name, 'clip_range_high must be specified.');
  return { ...a, low, high };
}

export function ppoPolicyLoss(inputs: PolicyLossInputs, args?: Partial<PpoPolicyLossArgs> | null): PolicyLossResult {
  const a = ppoArgs(args);
  const { logprob, actionMask } = inputs;
  const advantages = need(inputs.advantages, 'ppo', 'advantages');
  const oldLogprob = a.fallback_to_policy_gradient ? undefined : need(inputs.oldLogprob, 'ppo', 'old_logprob');
  return tidy(() => {
    const rawLogRatio = oldLogprob ? tf.sub(logprob, oldLogprob) : tf.sub(logprob, detach(logprob));
    const logRatio = tf.clipByValue(rawLogRatio, -20, 20);
    const ratio = tf.exp(logRatio);
    const negA = tf.neg(advantages);
    const pg1 = tf.mul(negA, ratio);
    const pg2 = tf.mul(negA, tf.clipByValue(ratio, 1 - a.low, 1 + a.high));
    const clip1 = tf.maximum(pg1, pg2);
    const pg3 = tf.mul(negA, a.clip_ratio_c);
    const clip2 = tf.minimum(pg3, clip1);
    const isNeg = tf.less(advantages, 0);
    let pgLosses = tf.where(isNeg, clip2, clip1);
    const named: Record<string, tf.Tensor> = {
      pg_clipfrac: maskedMean(asFloat(tf.greater(pg2, pg1)), actionMask),
      pg_clipfrac_lower: maskedMean(tf.mul(asFloat(tf.greater(clip1, pg3)), asFloat(isNeg)), actionMask),
      ppo_kl: maskedMean(tf.neg(logRatio), actionMask),
    };
    if (a.enable_sequence_masking) {
      const m = floatMask(actionMask);
      const seqKl = tf.div(tf.sum(tf.mul(tf.neg(logRatio), m), -1), tf.add(tf.sum(m, -1), 1e-10));
      const exceeds = gtF(tf.expandDims(seqKl, -1), a.delta_sequence_masking);
      const shouldMask = andF(asFloat(isNeg), exceeds);
      pgLosses = tf.mul(pgLosses, notF(shouldMask));
      named['seq_mask/masked_tokens'] = tf.div(tf.sum(shouldMask), tf.add(tf.sum(m), 1e-10));
      named['seq_mask/mean_sequence_kl'] = tf.mean(seqKl);
    }
    const loss = aggregateLoss(pgLosses, actionMask, a.loss_agg_mode);
    const read = metricScalars({ ...named, pg_loss: loss });
    const metrics: ScalarMetrics = {
      pg_clipfrac: read.pg_clipfrac,
      pg_clipfrac_lower: read.pg_clipfrac_lower,
      ppo_kl: read.ppo_kl,
      pg_loss: read.pg_loss,
    };
    if (a.enable_sequence_masking) {
      metrics['seq_mask/masked_tokens'] = read['seq_mask/masked_tokens'];
      metrics['seq_mask/mean_sequence_kl'] = read['seq_mask/mean_sequence_kl'];
    }
    return { loss, metrics };
  });
}
