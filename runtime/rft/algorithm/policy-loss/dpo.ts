/**
 * `dpo` (DPOLossFn, sigmoid loss with label smoothing). Rows alternate chosen (even) / rejected (odd).
 * Trinity's `masked_sum` is called without an axis, so each of the four log-prob sums runs over ALL chosen (or
 * rejected) rows of the micro-batch at once: with more than one pair per micro-batch the pairs are pooled into a
 * single logit, not averaged per pair. Reproduced as is:
 *   Δ_c = Σ_chosen m·(ℓ − ℓ_ref),  Δ_r = Σ_rejected m·(ℓ − ℓ_ref),  z = β(Δ_c − Δ_r)
 *   loss = −log σ(z)·(1 − label_smoothing) − log σ(−z)·label_smoothing      (log σ(x) = −softplus(−x))
 * Metrics `chosen_reward` = β·Δ_c, `rejected_reward` = β·Δ_r, `accuracy_mean` = [Δ_c > Δ_r], `dpo_loss`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { defaultFnArgs, withDefaults } from '../args';
import { maskedSum } from '../loss-agg';
import { asFloat, floatMask, metricScalars, tidy } from '../tensor';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

export interface DpoLossArgs {
  beta: number;
  label_smoothing: number;
}

const logSigmoid = (x: tf.Tensor): tf.Tensor => tf.neg(tf.softplus(tf.neg(x)));

export function dpoLoss(inputs: PolicyLossInputs, args?: Partial<DpoLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'dpo') as unknown as DpoLossArgs, args);
  const { logprob, actionMask } = inputs;
  const refLogprob = need(inputs.refLogprob, 'dpo', 'ref_logprob');
  const B = logprob.shape[0];
  return tidy(() => {
    const even = tf.tensor2d(
      Array.from({ length: B }, (_, i) => (i % 2 === 0 ? 1 : 0)),
      [B, 1],
    );
    const m = floatMask(actionMask);
    const chosenMask = tf.mul(m, even);
    const rejectedMask = tf.mul(m, tf.sub(1, even));
    const chosenRatio = tf.sub(maskedSum(logprob, chosenMask), maskedSum(refLogprob, chosenMask));
    const rejectedRatio = tf.sub(maskedSum(logprob, rejectedMask), maskedSum(refLogprob, rejectedMask));
    const z = tf.mul(tf.sub(chosenRatio, rejectedRatio), a.beta);
    const losses = tf.sub(
      tf.mul(tf.neg(logSigmoid(z)), 1 - a.label_smoothing),
      tf.mul(logSigmoid(tf.neg(z)), a.label_smoothing),
    );
    const loss = tf.mean(losses) as tf.Scalar;
    const metrics = metricScalars({
      chosen_reward: tf.mul(chosenRatio, a.beta),
      rejected_reward: tf.mul(rejectedRatio, a.beta),
      accuracy_mean: asFloat(tf.greater(chosenRatio, rejectedRatio)),
      dpo_loss: loss,
    });
    return { loss, metrics };
  });
}
