/**
 * `rec` (RECPolicyLossFn). With ρ = sg(exp(ℓ − ℓ_old)), ε_l/ε_h = epsilon_low/high, ε'_l/ε'_h = *_prime:
 *   clip_mode  none:          in = 1
 *              two-side:      1 − ε_l ≤ ρ ≤ 1 + ε_h
 *              one-side:      (ρ ≤ 1 + ε_h ∧ A ≥ 0) ∨ (A ≤ 0 ∧ ρ ≥ 1 − ε_l)
 *              gspo-one-side: the same with the sequence ratio ρ_seq = exp(sg(masked mean of ℓ − ℓ_old over the row))
 *              ring:          (1 − ε_l ≤ ρ ≤ 1 + ε_h) ∨ (A ≥ 0 ∧ ρ ≤ 1 − ε'_l) ∨ (A ≤ 0 ∧ ρ ≥ 1 + ε'_h)
 *   weight     none: A;  importance_sampling: A·ρ;  gspo_importance_sampling: A·ρ_seq (needs gspo-one-side, as
 *              Trinity, which otherwise fails on an unbound name);  advantage: A·exp(A/temp)
 *   L = −A'·ℓ·in,  then regularizer forward-kl: L − coef·ℓ;  k2: L + coef·(ℓ − ℓ_old)² (no ½)
 *   pg_loss = token masked mean of L (there is no loss_agg_mode argument), or seq-mean-token-mean with
 *   gspo-one-side.
 * Metrics `pg_clipfrac` (masked mean of not-in), `pg_loss`. default_args() sets ε'_l = 0.6, ε'_h = 2 while the
 * constructor defaults are 0.4/0.4.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { aggregateLoss, maskedMean } from '../loss-agg';
import { andF, detach, geF, leF, notF, orF, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export const REC_CLIP_MODES = ['none', 'one-side', 'gspo-one-side', 'two-side', 'ring'] as const;
export const REC_WEIGHTS = ['none', 'importance_sampling', 'gspo_importance_sampling', 'advantage'] as const;
export const REC_REGULARIZERS = ['none', 'k2', 'forward-kl'] as const;

export interface RecPolicyLossArgs {
  epsilon_low: number;
  epsilon_high: number;
  epsilon_low_prime: number;
  epsilon_high_prime: number;
  clip_mode: (typeof REC_CLIP_MODES)[number];
  weight: (typeof REC_WEIGHTS)[number];
  regularizer: (typeof REC_REGULARIZERS)[number];
  regularizer_coef: number;
  temp: number;
}

export function recArgs(args?: Partial<RecPolicyLossArgs> | null): RecPolicyLossArgs {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'rec') as unknown as RecPolicyLossArgs, args);
  const fail = (msg: string): never => {
    throw new AlgorithmArgsError('policy_loss_fn', 'rec', msg);
  };
  if (!(a.epsilon_low > 0 && a.epsilon_low <= 1)) fail(`Invalid epsilon_low: ${a.epsilon_low}`);
  if (!(a.epsilon_high > 0)) fail(`Invalid epsilon_high: ${a.epsilon_high}`);
  if (!(a.epsilon_low_prime > 0 && a.epsilon_low_prime <= 1)) fail(`Invalid epsilon_low_prime: ${a.epsilon_low_prime}`);
  if (!(a.epsilon_high_prime > 0)) fail(`Invalid epsilon_high_prime: ${a.epsilon_high_prime}`);
  if (!REC_CLIP_MODES.includes(a.clip_mode)) fail(`Invalid clip_mode: ${a.clip_mode}`);
  if (!REC_WEIGHTS.includes(a.weight)) fail(`Invalid weight: ${a.weight}`);
  if (!REC_REGULARIZERS.includes(a.regularizer)) fail(`Invalid regularizer: ${a.regularizer}`);
  if (!(a.regularizer_coef >= 0)) fail(`Invalid regularizer_coef: ${a.regularizer_coef}`);
  if (!(a.temp > 0)) fail(`Invalid temp: ${a.temp}`);
  return a;
}

export function recPolicyLoss(inputs: PolicyLossInputs, args?: Partial<RecPolicyLossArgs> | null): PolicyLossResult {
  const a = recArgs(args);
  if (a.weight === 'gspo_importance_sampling' && a.clip_mode !== 'gspo-one-side') {
    throw new AlgorithmArgsError(
      'policy_loss_fn',
      'rec',
      "weight 'gspo_importance_sampling' needs clip_mode 'gspo-one-side' (Trinity fails on an unbound sequence ratio)",
    );
  }
  const { logprob, actionMask } = inputs;
  const oldLogprob = need(inputs.oldLogprob, 'rec', 'old_logprob');
  let advantages: tf.Tensor = need(inputs.advantages, 'rec', 'advantages');
  return tidy(() => {
    const logRatio = tf.sub(logprob, oldLogprob);
    const ratio = detach(tf.exp(logRatio));
    const nonNeg = geF(advantages, 0);
    const nonPos = leF(advantages, 0);
    let seqRatio: tf.Tensor | undefined;
    let inF: tf.Tensor;
    switch (a.clip_mode) {
      case 'two-side':
        inF = andF(geF(ratio, 1 - a.epsilon_low), leF(ratio, 1 + a.epsilon_high));
        break;
      case 'one-side':
        inF = orF(andF(leF(ratio, 1 + a.epsilon_high), nonNeg), andF(nonPos, geF(ratio, 1 - a.epsilon_low)));
        break;
      case 'gspo-one-side':
        seqRatio = tf.expandDims(tf.exp(detach(maskedMean(logRatio, actionMask, -1))), -1);
        inF = orF(andF(leF(seqRatio, 1 + a.epsilon_high), nonNeg), andF(geF(seqRatio, 1 - a.epsilon_low), nonPos));
        break;
      case 'ring':
        inF = orF(
          orF(
            andF(geF(ratio, 1 - a.epsilon_low), leF(ratio, 1 + a.epsilon_high)),
            andF(nonNeg, leF(ratio, 1 - a.epsilon_low_prime)),
          ),
          andF(nonPos, geF(ratio, 1 + a.epsilon_high_prime)),
        );
        break;
      default:
        inF = tf.onesLike(ratio);
    }
    if (a.weight === 'importance_sampling') advantages = tf.mul(advantages, ratio);
    else if (a.weight === 'gspo_importance_sampling') advantages = tf.mul(advantages, seqRatio as tf.Tensor);
    else if (a.weight === 'advantage') advantages = tf.mul(advantages, tf.exp(tf.div(advantages, a.temp)));
    let pgLosses = tf.mul(tf.mul(tf.neg(advantages), logprob), inF);
    if (a.regularizer === 'forward-kl') pgLosses = tf.sub(pgLosses, tf.mul(logprob, a.regularizer_coef));
    else if (a.regularizer === 'k2') pgLosses = tf.add(pgLosses, tf.mul(tf.square(logRatio), a.regularizer_coef));
    const loss = (
      a.clip_mode === 'gspo-one-side'
        ? aggregateLoss(pgLosses, actionMask, 'seq-mean-token-mean')
        : maskedMean(pgLosses, actionMask)
    ) as tf.Scalar;
    const metrics = metricScalars({ pg_clipfrac: maskedMean(notF(inF), actionMask), pg_loss: loss });
    return { loss, metrics };
  });
}
