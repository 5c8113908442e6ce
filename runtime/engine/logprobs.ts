/** Per-token log probabilities and entropies of whole sequences in one forward pass (the trainer's view). */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from './lm/transformer';
import { tokenEntropy, tokenLogProbs, tokenNec } from './ops';

export interface SequenceScores {
  /** `[B, T-1]`: entry t is log π(ids[t+1] | ids[..t]) at `temperature`. */
  logprobs: tf.Tensor2D;
  /** `[B, T-1]`, present when asked for. */
  entropy?: tf.Tensor2D;
  /** `[B, T-1]` H·Σp² + Σp²·log p of each next-token distribution, present when asked for. */
  nec?: tf.Tensor2D;
}

export interface ScoreOptions {
  temperature?: number;
  entropy?: boolean;
  nec?: boolean;
  /**
   * `[B, T]` 1 for real tokens, 0 for padding, for batches padded on the left (veRL's layout: prompts left-padded so
   * every response starts in the same column). Positions then count real tokens only, as in generation. Without
   * it, padding may only sit at the end of rows (causal attention keeps it away from earlier tokens).
   */
  attentionMask?: number[][];
  /**
   * Score only the last `tail` columns (`[B, tail]` results: a trainer's response tokens). The same values as those
   * columns of the full scores; the model skips the rest of its last layer and head (CausalLM.forward's `tail`).
   * With {@link SCORE_TAIL_ENV} off every column is scored, so callers cut by the width they get.
   */
  tail?: number;
}

/** `0` (or `false`, `off`, `no`): score every column and cut afterwards, as before `tail` (paired A/B benches). */
export const SCORE_TAIL_ENV = 'TRINITY_WORKBENCH_SCORE_TAIL';

function tailSwitchedOff(): boolean {
  const v = process.env[SCORE_TAIL_ENV]?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

export function scoreSequences(model: CausalLM, ids: tf.Tensor2D, opts: ScoreOptions = {}): SequenceScores {
  const [B, T] = ids.shape;
  if (T < 2) throw new Error('scoreSequences: sequences need at least 2 tokens');
  const inputs = tf.slice(ids, [0, 0], [B, T - 1]) as tf.Tensor2D;
  if (opts.tail !== undefined && !(Number.isInteger(opts.tail) && opts.tail >= 1))
    throw new Error(`scoreSequences: tail must be a positive integer, got ${opts.tail}`);
  const tail = opts.tail !== undefined && opts.tail < T - 1 && !tailSwitchedOff() ? opts.tail : undefined;
  const targets = tf.slice(ids, [0, T - (tail ?? T - 1)], [B, tail ?? T - 1]);
  let forwardOpts = {};
  if (opts.attentionMask) {
    const mask = opts.attentionMask;
    if (mask.length !== B || mask.some((r) => r.length !== T))
      throw new Error(`scoreSequences: attentionMask must be [${B}, ${T}]`);
    const positions = mask.map((row) => {
      let n = 0;
      return row.slice(0, T - 1).map((m) => (m ? n++ : 0));
    });
    forwardOpts = {
      positions: tf.tensor2d(positions, [B, T - 1], 'int32'),
      keyMask: tf.tensor2d(
        mask.map((r) => r.slice(0, T - 1)),
        [B, T - 1],
      ),
    };
  }
  const logits = model.logits(model.forward(inputs, { ...forwardOpts, tail }).hidden);
  const temperature = opts.temperature ?? 1;
  return {
    logprobs: tokenLogProbs(logits, targets, temperature) as tf.Tensor2D,
    entropy: opts.entropy ? (tokenEntropy(logits, temperature) as tf.Tensor2D) : undefined,
    nec: opts.nec ? (tokenNec(logits, temperature) as tf.Tensor2D) : undefined,
  };
}
