/**
 * Log-probabilities of the tails of whole sequences without gradients (the RFT trainer's reference log-probs), as
 * one native kernel per call (backend/decode-step.ts in scoring mode) instead of `scoreSequences`' forward of ~80
 * kernels per layer. Same quantity: the same attention mask and positions (real tokens counted from 0), the same
 * temperature; results agree to float32 rounding (the log-softmax runs in float64). Undefined where the one-kernel
 * step cannot run (then the caller scores through `scoreSequences`).
 */
import type * as tf from '@tensorflow/tfjs-core';
import { NativeDecoder } from './native-decoder';
import type { CausalLM } from './transformer';

/**
 * For rows of `tokens` `[B, T]` with `attentionMask` (1 on real tokens): `[B, cols]`, column j the log-prob at
 * `temperature` of token T - cols + j given the tokens before it, i.e. the last `cols` columns of
 * `scoreSequences(model, tokens, { temperature, attentionMask }).logprobs`.
 */
export function nativeTailLogprobs(
  model: CausalLM,
  tokens: readonly (readonly number[])[],
  attentionMask: readonly (readonly number[])[],
  cols: number,
  temperature: number,
): tf.Tensor2D | undefined {
  const B = tokens.length;
  const T = tokens[0]?.length ?? 0;
  if (B === 0 || T < 2 || cols < 1 || cols > T - 1 || !NativeDecoder.supports(model)) return undefined;
  const M = T - 1;
  const ids = new Int32Array(B * M);
  const positions = new Int32Array(B * M);
  const mask = new Float32Array(B * M);
  const targets = new Int32Array(B * cols);
  tokens.forEach((row, b) => {
    if (row.length !== T || attentionMask[b].length !== T) throw new Error('nativeTailLogprobs: ragged rows');
    let n = 0;
    for (let t = 0; t < M; t++) {
      ids[b * M + t] = row[t];
      mask[b * M + t] = attentionMask[b][t] ? 1 : 0;
      positions[b * M + t] = attentionMask[b][t] ? n++ : 0;
    }
    for (let j = 0; j < cols; j++) targets[b * cols + j] = row[T - cols + j];
  });
  const decoder = new NativeDecoder(model, mask, B, M, 0);
  try {
    return decoder.scoreTail(ids, positions, targets, cols, temperature);
  } finally {
    decoder.dispose();
  }
}
