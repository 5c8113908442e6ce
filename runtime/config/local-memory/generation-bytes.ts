/**
 * Peak tensor bytes of one batched generation on the wasm backend (engine/lm/native-decoder.ts): a KV cache
 * allocated once per engine call for every row, prompt and new tokens together (keys and values per layer,
 * `[rows, kv heads, tokens, head dim]` float32), and the logits over the vocabulary that each decode step samples
 * from. The prefill feeds the prompt through the same kernel, so no `[T, T]` score matrix is held. Measured with
 * `watchPeakMemory` on eight generations (2–4 layers, hidden 64–256, vocabulary 256–8,192, 4–64 rows of 80–1,040
 * tokens): the estimate lies between 15% below (the smallest, 1.9 MB) and at the peak.
 */
import { causalLmParams, type ModelShape } from '../gpu-memory/model-shape';

/** float32 copies of one row's logits held at a decode step. */
const LOGITS_COPIES = 1;

/** How far the estimate may lie from tfjs' count (the calibration's spread above). */
export const GENERATION_ESTIMATE_ERROR = { below: 0.16, above: 0.02 } as const;

export interface Generation {
  /** Rows decoded in one engine call. */
  rows: number;
  /** Tokens per row: the longest prompt and the new tokens. */
  tokens: number;
}

/** The KV cache and logits of one engine call. */
export function generationBytes(shape: ModelShape, g: Generation): number {
  const headDim = shape.headDim;
  const kv = 2 * 4 * shape.numLayers * shape.numKvHeads * headDim * g.tokens * g.rows;
  return kv + 4 * LOGITS_COPIES * g.rows * shape.vocabSize;
}

/** The model's float32 weights, which the explorer holds as its own copy. */
export function weightBytes(shape: ModelShape): number {
  return 4 * causalLmParams(shape);
}
