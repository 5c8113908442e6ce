/**
 * What the current policy says of a batch's response tokens before the update, for the trainer-side advantages that
 * filter tokens by it (clipb, clipv): its log-probs, entropies and the Clip_V signal `necs`. Trinity computes them in
 * the trainer's old-log-prob pass with the example's patches applied (Trinity-RFT 10796ed examples/entropy:
 * clipb_trainer.patch keeps `entropys` in the batch, clipv_trainer.patch and clipv_dp_actor.py add `necs`), at the
 * rollout temperature, without gradients.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../engine/lm/transformer';
import { scoreSequences } from '../../engine/logprobs';
import { sliceRows, type PaddedBatch } from './batch';
import type { StopPoint } from '../stop-point';

export interface PolicySignals {
  /** `[B, R]` log π of each response token under the current weights (Trinity's recomputed `old_log_probs`). */
  logprobs: number[][];
  /** `[B, R]` the entropy of each response position's next-token distribution. */
  entropys: number[][];
  /** `[B, R]` H·Σp² + Σp²·log p of each response position, when asked for. */
  necs?: number[][];
}

export async function policySignals(
  model: CausalLM,
  b: PaddedBatch,
  opts: { temperature: number; necs: boolean; microBatchSize?: number; stop?: StopPoint },
): Promise<PolicySignals> {
  const out: PolicySignals = { logprobs: [], entropys: [], necs: opts.necs ? [] : undefined };
  const micro = opts.microBatchSize ?? b.tokens.length;
  for (let from = 0; from < b.tokens.length; from += micro) {
    await opts.stop?.();
    const mb = sliceRows(b, from, Math.min(b.tokens.length, from + micro));
    const B = mb.tokens.length;
    const parts = tf.tidy(() => {
      const s = scoreSequences(model, tf.tensor2d(mb.tokens, undefined, 'int32'), {
        temperature: opts.temperature,
        entropy: true,
        nec: opts.necs,
        attentionMask: mb.attentionMask,
      });
      // Column t predicts token t+1; responses start at column P.
      const cut = (t: tf.Tensor2D): tf.Tensor2D =>
        tf.slice(t, [0, mb.promptWidth - 1], [B, mb.responseWidth]) as tf.Tensor2D;
      return [cut(s.logprobs), cut(s.entropy!), ...(s.nec ? [cut(s.nec)] : [])];
    });
    const [lp, h, n] = await Promise.all(parts.map((t) => t.array()));
    parts.forEach((t) => t.dispose());
    out.logprobs.push(...lp);
    out.entropys.push(...h);
    if (n) out.necs!.push(...n);
  }
  return out;
}
