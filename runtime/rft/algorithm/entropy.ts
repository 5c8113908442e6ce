/**
 * Trinity's entropy loss functions (trinity/algorithm/entropy_loss_fn/entropy_loss_fn.py, registry
 * `ENTROPY_LOSS_FN`):
 *  - default: `entropy_loss = agg(entropy, action_mask, loss_agg_mode)`; returns `entropy_loss · entropy_coef`
 *  - mix:     the same over the rows whose `expert_mask` is false (expert/SFT rows carry no entropy bonus);
 *             `expert_mask` is required
 *  - none:    zero, no metrics
 * Metric: `entropy_loss` (unscaled; logged as `actor/entropy_loss`).
 *
 * The actor SUBTRACTS the returned value: `policy_loss = pg_loss − entropy_loss + kl_loss`, so a positive
 * `entropy_coef` is an entropy bonus. `entropy_coef` has no constructor default (a written
 * `entropy_loss_fn_args` without it crashes Trinity); default_args() gives 0.0. The actor passes
 * `algorithm.loss_agg_mode` as the aggregation.
 */
import * as tf from '@tensorflow/tfjs-core';
import { aggregateLoss } from './loss-agg';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from './args';
import { metricScalars, selectRows, tidy, type ScalarMetrics } from './tensor';

export const ENTROPY_LOSS_FN_NAMES = ['default', 'mix', 'none'] as const;
export type EntropyLossFnName = (typeof ENTROPY_LOSS_FN_NAMES)[number];

export interface EntropyLossArgs {
  entropy_coef: number;
}

export interface EntropyLossInputs {
  /** [B, T] per-token entropy of the current policy */
  entropy: tf.Tensor2D;
  actionMask: tf.Tensor2D;
  /** per row: true for expert (SFT) rows; required by `mix` */
  expertMask?: ArrayLike<boolean>;
  /** algorithm.loss_agg_mode; default token-mean */
  lossAggMode?: string;
}

export interface EntropyLossResult {
  /** entropy_coef · aggregated entropy (to be subtracted from the policy loss) */
  loss: tf.Scalar;
  metrics: ScalarMetrics;
}

export function isEntropyLossFnName(name: string): name is EntropyLossFnName {
  return (ENTROPY_LOSS_FN_NAMES as readonly string[]).includes(name);
}

export function entropyLoss(
  name: string,
  inputs: EntropyLossInputs,
  args?: Partial<EntropyLossArgs> | null,
): EntropyLossResult {
  if (!isEntropyLossFnName(name)) throw new AlgorithmArgsError('entropy_loss_fn', name, 'not registered');
  const a = withDefaults(defaultFnArgs('entropy_loss_fn', name) as unknown as EntropyLossArgs, args);
  if (name === 'none') return { loss: tf.scalar(0), metrics: {} };
  const { lossAggMode = 'token-mean' } = inputs;
  let { entropy, actionMask } = inputs;
  return tidy(() => {
    if (name === 'mix') {
      const expert = inputs.expertMask;
      if (!expert)
        throw new AlgorithmArgsError('entropy_loss_fn', name, 'expert_mask is required for MixEntropyLossFn');
      if (expert.length !== entropy.shape[0]) {
        throw new AlgorithmArgsError(
          'entropy_loss_fn',
          name,
          `len(expert_mask)=${expert.length} != entropy.shape[0]=${entropy.shape[0]}`,
        );
      }
      const usual = Array.from(expert, (e) => !e);
      entropy = selectRows(entropy, usual);
      actionMask = selectRows(actionMask, usual);
    }
    const agg = aggregateLoss(entropy, actionMask, lossAggMode);
    return { loss: tf.mul(agg, a.entropy_coef) as tf.Scalar, metrics: metricScalars({ entropy_loss: agg }) };
  });
}
