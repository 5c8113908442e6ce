/** Per-token log probabilities and entropies of whole sequences in one forward pass (the trainer's view). */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from './model/transformer';
import { tokenEntropy, tokenLogProbs } from './ops';

export interface SequenceScores {
  /** `[B, T-1]`: entry t is log π(ids[t+1] | ids[..t]) at `temperature`. */
  logprobs: tf.Tensor2D;
  /** `[B, T-1]`, present when asked for. */
  entropy?: tf.Tensor2D;
}

/**
 * Scores right-padded sequences `ids [B, T]` (prompt then response, padding at the end: causal attention means
 * padding never reaches earlier tokens, so no mask is needed here; the caller masks the loss).
 */
export function scoreSequences(model: CausalLM, ids: tf.Tensor2D, opts: { temperature?: number; entropy?: boolean } = {}): SequenceScores {
  const [B, T] = ids.shape;
  if (T < 2) throw new Error('scoreSequences: sequences need at least 2 tokens');
  const inputs = tf.slice(ids, [0, 0], [B, T - 1]) as tf.Tensor2D;
  const targets = tf.slice(ids, [0, 1], [B, T - 1]);
  const logits = model.logits(model.forward(inputs).hidden);
  const temperature = opts.temperature ?? 1;
  return {
    logprobs: tokenLogProbs(logits, targets, temperature) as tf.Tensor2D,
    entropy: opts.entropy ? (tokenEntropy(logits, temperature) as tf.Tensor2D) : undefined,
  };
}
