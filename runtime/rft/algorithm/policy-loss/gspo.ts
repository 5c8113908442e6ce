/**
 * `gspo` (GSPOLossFn, GSPO-token, arXiv 2507.18071): a sequence-level importance ratio with per-token gradients.
 *   s_i = masked mean over the row of (ℓ − ℓ_old)   (÷ (Σ mask + 1e-8))
 *   log ρ_{i,t} = ℓ_{i,t} − sg(ℓ_{i,t}) + sg(s_i)    (value s_i, gradient ∇ℓ) — no clamping
 *   L = max(−A·ρ, −A·clip(ρ, 1 − low, 1 + high)),  pg_loss = agg(L, mask, loss_agg_mode)
 * No dual clip. Metrics `pg_loss`, `pg_clipfrac` (masked mean of [clipped > unclipped]), `ppo_kl` (token masked
 * mean of ℓ_old − ℓ), `ppo_kl_seq` (mean over rows of −s_i). default_args: low 3e-4, high 4e-4,
 * seq-mean-token-mean (Trinity only warns for another mode; and from v0.4.0 the config's `algorithm.loss_agg_mode`
 * — token-mean unless set — overwrites it).
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { asFloat, detach, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface GspoPolicyLossArgs {
  clip_range: number | null;
  clip_range_low: number | null;
  clip_range_high: number | null;
  loss_agg_mode: string;
}

export function gspoArgs(
  args?: Partial<GspoPolicyLossArgs> | null,
): GspoPolicyLossArgs & { low: number; high: number } {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'gspo') as unknown as GspoPolicyLossArgs, args);
  const low = a.clip_range_low ?? a.clip_range;
  const high = a.clip_range_high ?? a.clip_range;
  if (low == null)
    throw new AlgorithmArgsError('policy_loss_fn', 'gspo', 'Either clip_range or clip_range_low must be specified.');
  if (high == null)
    throw new AlgorithmArgsError('policy_loss_fn', 'gspo', 'Either clip_range or clip_range_high must be specified.');
  return { ...a, low, high };
}

export function gspoPolicyLoss(inputs: PolicyLossInputs, args?: Partial<GspoPolicyLossArgs> | null): PolicyLossResult {
  const a = gspoArgs(args);
  const { low, high } = a;
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'gspo', 'old_logprob');
  const advantages = need(inputs.advantages, 'gspo', 'advantages');
  return tidy(() => {
    const logRatio = tf.sub(logprob, oldLogprob);
    const seq = maskedMean(logRatio, actionMask, -1);
    const logSeqRatio = tf.add(tf.sub(logprob, detach(logprob)), tf.expandDims(detach(seq), -1));
    const ratio = tf.exp(logSeqRatio);
    const negA = tf.neg(advantages);
    const pg = tf.mul(negA, ratio);
    const pgClipped = tf.mul(negA, tf.clipByValue(ratio, 1 - low, 1 + high));
    const loss = aggregateLoss(tf.maximum(pg, pgClipped), actionMask, a.loss_agg_mode);
    const metrics = metricScalars({
      pg_clipfrac: maskedMean(asFloat(tf.greater(pgClipped, pg)), actionMask),
      ppo_kl: maskedMean(tf.neg(logRatio), actionMask),
      pg_loss: loss,
      ppo_kl_seq: tf.mean(tf.neg(seq)),
    });
    return { loss, metrics };
  });
}
