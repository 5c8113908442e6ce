/**
 * The shape every policy loss shares (Trinity's `PolicyLossFn.__call__(logprob, **kwargs) -> (loss, metrics)`).
 * All tensors are [B, T] float32 over response tokens; the loss is differentiable w.r.t. `logprob`. Metric names
 * are Trinity's (the actor logs them as `actor/<name>`); values are scalars left on the
 * device (the trainer reads a step's metrics back at once, asynchronously).
 */
import type * as tf from '@tensorflow/tfjs-core';
import type { ScalarMetrics } from '../tensor';

export interface PolicyLossInputs {
  /** log π_θ of the taken tokens (the differentiated input) */
  logprob: tf.Tensor2D;
  /** log-probs of the policy that generated the data (π_old) */
  oldLogprob?: tf.Tensor2D;
  /** reference-model log-probs (dpo) */
  refLogprob?: tf.Tensor2D;
  advantages?: tf.Tensor2D;
  /** response/action mask (1 where the loss applies) */
  actionMask: tf.Tensor2D;
  /** per row: true for expert (SFT) rows (mix, mix_chord) */
  expertMask?: ArrayLike<boolean>;
  /** the global training step (mix_chord's mu schedule); Trinity takes one value per row, all equal */
  step?: number | ArrayLike<number>;
}

export interface PolicyLossResult {
  loss: tf.Scalar;
  metrics: ScalarMetrics;
}

/** The inputs a loss reads besides `logprob` (Trinity's `select_keys`, in Trinity's names). */
export type PolicyLossKey = 'old_logprob' | 'ref_logprob' | 'advantages' | 'action_mask' | 'expert_mask' | 'step';

export function need<T>(value: T | undefined, fn: string, field: string): T {
  if (value === undefined) throw new Error(`policy_loss_fn '${fn}': needs '${field}'`);
  return value;
}
