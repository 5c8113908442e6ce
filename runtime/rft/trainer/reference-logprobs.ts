/**
 * The reference model's log-probs of response tokens (the KL loss's, DPO's and the KL penalty's `ref_log_prob`),
 * without gradients. The trainer computes them for its batch; in `both` mode with the explorer in a worker thread,
 * the worker computes them for the experiences it has just made (so that forward runs on the explorer's core while
 * the trainer trains) and the trainer takes them from the experiences. Either way the same quantity: the same
 * padded layout, the same kernel, the same temperature.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../engine/lm/transformer';
import { scoreSequences } from '../../engine/logprobs';
import { nativeTailLogprobs } from '../../engine/lm/native-scorer';
import { responseLength, type Experience } from '../experience';
import { padBatch, sliceRows, type PaddedBatch } from './batch';
import type { StopPoint } from '../stop-point';

/** log π and (optionally) entropy of each response token of `b`, `[B, R]`, through `scoreSequences`. */
export function responseScores(
  model: CausalLM,
  b: PaddedBatch,
  temperature: number,
  withEntropy: boolean,
): { logprob: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const ids = tf.tensor2d(b.tokens, undefined, 'int32');
  // Column t of the scores predicts token t+1; responses start at column P, so they are the last R columns of the
  // P + R - 1 scored ones: only those are computed (the last layer and the head skip the prompt's positions).
  const s = scoreSequences(model, ids, {
    temperature,
    entropy: withEntropy,
    attentionMask: b.attentionMask,
    tail: b.responseWidth,
  });
  const B = b.tokens.length;
  const cols = s.logprobs.shape[1];
  const cut = (t: tf.Tensor2D): tf.Tensor2D =>
    cols === b.responseWidth ? t : (tf.slice(t, [0, b.promptWidth - 1], [B, b.responseWidth]) as tf.Tensor2D);
  return { logprob: cut(s.logprobs), entropy: s.entropy ? cut(s.entropy) : undefined };
}

/**
 * `[B, R]` reference log-probs of `b`'s response columns, `microBatchSize` rows per forward (all when undefined),
 * `stop` awaited before each.
 */
export async function batchReferenceLogprobs(
  reference: CausalLM,
  b: PaddedBatch,
  temperature: number,
  microBatchSize?: number,
  stop?: StopPoint,
): Promise<number[][]> {
  const out: number[][] = [];
  const micro = microBatchSize ?? b.tokens.length;
  for (let from = 0; from < b.tokens.length; from += micro) {
    await stop?.();
    const mb = sliceRows(b, from, Math.min(b.tokens.length, from + micro));
    // One native kernel where the backend has it (no gradient needed): the response columns are the last R.
    const lp =
      nativeTailLogprobs(reference, mb.tokens, mb.attentionMask, mb.responseWidth, temperature) ??
      tf.tidy(() => responseScores(reference, mb, temperature, false).logprob);
    out.push(...(await lp.array()));
    lp.dispose();
  }
  return out;
}

/** Sets `refLogprobs` (one per response token) on each experience, batched as the trainer would pad them. */
export async function attachReferenceLogprobs(
  reference: CausalLM,
  exps: Experience[],
  opts: { temperature: number; padTokenId: number; microBatchSize?: number; stop?: StopPoint },
): Promise<void> {
  if (exps.length === 0) return;
  const rows = await batchReferenceLogprobs(
    reference,
    padBatch(exps, opts.padTokenId),
    opts.temperature,
    opts.microBatchSize,
    opts.stop,
  );
  exps.forEach((e, i) => (e.refLogprobs = rows[i].slice(0, responseLength(e))));
}

/**
 * `[B, R]` reference log-probs of `b` (made from `rows` by padBatch) from the experiences, when every row carries
 * them for its whole response; undefined otherwise (the trainer then computes them).
 */
export function carriedReferenceLogprobs(rows: readonly Experience[], b: PaddedBatch): number[][] | undefined {
  if (!rows.every((e) => e.refLogprobs?.length === responseLength(e))) return undefined;
  return rows.map((e) => Array.from({ length: b.responseWidth }, (_, t) => e.refLogprobs![t] ?? 0));
}
