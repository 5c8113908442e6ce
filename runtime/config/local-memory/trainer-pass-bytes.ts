/**
 * Peak tensor bytes of one local trainer pass on the wasm backend (tfjs-backend-wasm with the native training
 * kernels) as tfjs counts them, and the heap that needs: the model's float32 state plus what one micro-batch's
 * forward and backward hold at once. The local
 * trainer differentiates each micro-batch on its own (engine/train/step.ts), so the peak is one micro-batch's
 * activations over the state; the reference and signal forwards run without gradients before it and hold less.
 *
 * What the engine materialises, per row of T tokens (engine/lm/transformer.ts, engine/logprobs.ts):
 * - per layer and attention head, full `[T, T]` score matrices: the scores, the bias added, the softmax, and what
 *   the backward keeps and makes of them;
 * - per layer, `[T, T]` tensors shared by the heads (the causal and padding bias, its broadcast);
 * - per position, logits over the whole vocabulary and their log-softmax, softmax, entropy and gradients;
 * - per layer and position, the hidden-width and MLP-width activations kept for the backward.
 * Each term's count of float32 copies was measured with `watchPeakMemory` (engine/backend/memory.ts) on twelve
 * shapes (1–2 layers, 4–8 heads, hidden 64–128, MLP 128–1024, vocabulary 256–2048, 128–768 tokens, 1–4 rows)
 * and fitted; on those and nine larger passes (up to 2,048 tokens, vocabulary 4,096) it lies between 5% below and
 * 8% above the measured peak (test/runtime/config/trainer-heap.test.ts rechecks small cases against the engine).
 */
import { causalLmParams, type ModelShape } from '../gpu-memory/model-shape';

/** WebAssembly's 32-bit heap: tfjs-backend-wasm's memory grows to this and no further. */
export const WASM_HEAP_BYTES = 4 * 2 ** 30;

/** The heap tfjs-backend-wasm starts with (what a process that has run nothing holds). */
const INITIAL_HEAP_BYTES = 16 * 2 ** 20;

/**
 * The heap a pass grows to, per byte of tfjs' tensor count at its peak: tfjs' count (`tf.memory().numBytes`, what
 * memory.ts watches) runs about twice the heap the same pass needs. Measured in fresh processes on nine passes of
 * 1–2 layers, 4–8 heads, 1,024–2,048 tokens, 1–4 rows (the heap never shrinks, so its size after the pass is the
 * most it needed): between 0.495 and 0.60.
 */
const HEAP_PER_COUNTED_BYTE = { low: 0.495, high: 0.6 } as const;
/** How far the estimate may lie from tfjs' count (the calibration's spread, test/runtime/config/trainer-heap.test.ts). */
const ESTIMATE_ERROR = { below: 0.05, above: 0.08 } as const;

/** The wasm heap a pass of `tensorBytes` (this module's estimate) grows to: the least and the most it may need. */
export function heapBytes(tensorBytes: number): { low: number; high: number } {
  return {
    low: INITIAL_HEAP_BYTES + (tensorBytes * HEAP_PER_COUNTED_BYTE.low) / (1 + ESTIMATE_ERROR.above),
    high: INITIAL_HEAP_BYTES + (tensorBytes * HEAP_PER_COUNTED_BYTE.high) / (1 - ESTIMATE_ERROR.below),
  };
}

/** The most tensor bytes (this module's estimate) whose heap stays within `heap` at the most it may need. */
export function tensorBytesWithin(heap: number): number {
  return ((heap - INITIAL_HEAP_BYTES) * (1 - ESTIMATE_ERROR.below)) / HEAP_PER_COUNTED_BYTE.high;
}

/** float32 copies per element of each term, as measured (see above). */
const COPIES = {
  /** `[T, T]` per layer and head. */
  headScores: 7.75,
  /** `[T, T]` per layer. */
  layerScores: 2.2,
  /** `[T, vocab]` per row. */
  vocab: 17.75,
  /** `[T, hidden]` per layer. */
  hidden: 56,
  /** `[T, intermediate]` per layer. */
  mlp: 11.75,
  /** Per position, whatever the shape (ids, masks, per-token losses and their gradients). */
  position: 700,
} as const;

/** The model's weights, AdamW's two moments and the gradients, all float32. */
const STATE_BYTES_PER_PARAM = 16;
/** Over several micro-batches, the running sum and the sum being formed beside the new gradients (step.ts). */
const ACCUMULATION_BYTES_PER_PARAM = 8;

export interface TrainerPass {
  /** Rows differentiated at once: the micro-batch. */
  rows: number;
  /** Tokens per row (prompt + response, padded to the longest). */
  tokens: number;
  /** More rows in the step than in the pass: gradients are summed over micro-batches. */
  accumulates?: boolean;
  /** LoRA: the base weights are frozen, so only they are held (the adapters' state is negligible). */
  frozenBase?: boolean;
}

export interface TrainerPassBytes {
  /** The peak: state + rows × perRow. */
  total: number;
  state: number;
  perRow: number;
  /** Of perRow: the `[T, T]` attention terms. */
  attentionPerRow: number;
}

export function trainerPassBytes(shape: ModelShape, pass: TrainerPass): TrainerPassBytes {
  const T = pass.tokens;
  const L = shape.numLayers;
  const attention = 4 * L * T * T * (COPIES.headScores * shape.numHeads + COPIES.layerScores);
  const linear =
    4 *
    T *
    (COPIES.vocab * shape.vocabSize +
      L * (COPIES.hidden * shape.hiddenSize + COPIES.mlp * shape.intermediateSize) +
      COPIES.position);
  const perParam = pass.frozenBase ? 4 : STATE_BYTES_PER_PARAM + (pass.accumulates ? ACCUMULATION_BYTES_PER_PARAM : 0);
  const state = perParam * causalLmParams(shape);
  const perRow = attention + linear;
  return { total: state + pass.rows * perRow, state, perRow, attentionPerRow: attention };
}

/** The most tokens per row for which `rows` rows stay within `budget` bytes (0: not even one token). */
export function tokensWithin(shape: ModelShape, rows: number, budget: number): number {
  let lo = 0;
  let hi = 1;
  while (trainerPassBytes(shape, { rows, tokens: hi }).total <= budget) hi *= 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (trainerPassBytes(shape, { rows, tokens: mid }).total <= budget) lo = mid;
    else hi = mid;
  }
  return lo;
}
