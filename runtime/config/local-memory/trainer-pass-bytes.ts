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
export const INITIAL_HEAP_BYTES = 16 * 2 ** 20;

/**
 * The heap a pass grows to, per byte of tfjs' tensor count at its peak. For the activations tfjs' count
 * (`tf.memory().numBytes`, what memory.ts watches) runs about twice the heap the same pass needs: measured in fresh
 * processes on nine passes of 1–2 layers, 4–8 heads, 1,024–2,048 tokens, 1–4 rows (the heap never shrinks, so its
 * size after the pass is the most it needed), between 0.495 and 0.60. Parameter-sized tensors (weights, AdamW's
 * moments, gradients) are counted as they are held: on a 19.4M-parameter model with one to four of them beside the
 * weights, the heap read 0.88–1.03 of the count (it grows in steps of about 96 MiB).
 */
export const HEAP_PER_COUNTED_BYTE = {
  activations: { low: 0.495, high: 0.6 },
  parameters: { low: 0.85, high: 1.05 },
} as const;
/** How far the activations' estimate may lie from tfjs' count (the calibration's spread, trainer-heap.test.ts). */
const ESTIMATE_ERROR = { below: 0.05, above: 0.08 } as const;

/** The wasm heap a pass (this module's estimate) grows to: the least and the most it may need. */
export function heapBytes(est: TrainerPassBytes): { low: number; high: number } {
  const at = (bound: 'low' | 'high'): number => {
    const p = HEAP_PER_COUNTED_BYTE.parameters[bound];
    const a =
      HEAP_PER_COUNTED_BYTE.activations[bound] /
      (bound === 'low' ? 1 + ESTIMATE_ERROR.above : 1 - ESTIMATE_ERROR.below);
    // The reference model may not be held (see TrainerPass.reference): the least the pass needs leaves it out.
    const reference = bound === 'low' ? est.reference : 0;
    return INITIAL_HEAP_BYTES + (Math.max(est.state, est.update) - reference) * p + est.activations * a;
  };
  return { low: at('low'), high: at('high') };
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
/**
 * Where the parameters dominate, the step peaks later, from the end of the backward into the optimizer update, with
 * the pass's activations still held: in float32 copies, of every parameter (weights, AdamW's moments, gradients, the
 * moments being formed) and of the embedding matrix besides (its gathered gradient made dense, and the tied head's).
 * A least-squares fit of `watchPeakMemory`'s peak on five shapes of 3–13M parameters with tied embeddings (2–6 layers,
 * hidden 256–512, vocabulary 1,024–16,384, 1–4 rows of 16–32 tokens): every step within 1.3% of it.
 */
const UPDATE_COPIES = {
  whole: { params: 4.9, embedding: 3.0 },
  accumulated: { params: 6.0, embedding: 2.8 },
} as const;
/** What the explorer's model holds: its weights (its KV caches are freed when a generation ends). */
const EXPLORER_BYTES_PER_PARAM = 4;
/** What a frozen reference model holds: its weights. */
const REFERENCE_BYTES_PER_PARAM = 4;
/** What PPO's critic holds while the actor trains: its weights and AdamW's two moments (its own update peaks as the actor's). */
const CRITIC_IDLE_BYTES_PER_PARAM = 12;

/** What the trainer keeps of its own model between steps: the weights and AdamW's two moments (its gradients are freed). */
const IDLE_BYTES_PER_PARAM = 12;

/**
 * What the trainer holds between its steps, when an explorer generates beside it in the same heap: its model's weights
 * and AdamW's moments (LoRA: the frozen base alone), an idle critic's, and the reference model's where it may hold it.
 */
export function trainerIdleBytes(
  shape: ModelShape,
  held: Pick<TrainerPass, 'frozenBase' | 'reference' | 'criticParams'>,
): number {
  const params = causalLmParams(shape);
  return (
    (held.frozenBase ? 4 : IDLE_BYTES_PER_PARAM) * params +
    CRITIC_IDLE_BYTES_PER_PARAM * (held.criticParams ?? 0) +
    (held.reference ? REFERENCE_BYTES_PER_PARAM * params : 0)
  );
}

export interface TrainerPass {
  /** Rows differentiated at once: the micro-batch. */
  rows: number;
  /** Tokens per row (prompt + response, padded to the longest). */
  tokens: number;
  /**
   * Of those, the response's (the batch's widest): only these positions get logits over the vocabulary, the trainer
   * scoring the response columns alone (logprobs.ts `tail`). All of them when not given.
   */
  responseTokens?: number;
  /** More rows in the step than in the pass: gradients are summed over micro-batches. */
  accumulates?: boolean;
  /** LoRA: the base weights are frozen, so only they are held (the adapters' state is negligible). */
  frozenBase?: boolean;
  /**
   * The trainer reads reference log-probs (a KL loss or penalty, DPO): it holds the frozen reference model unless
   * the explorer's worker computes them (run-both.ts), so only the most the pass may need counts it.
   */
  reference?: boolean;
  /** PPO's critic: its parameter count (the actor's when it has the same model). */
  criticParams?: number;
  /** The explorer runs in the trainer's thread (run-both.ts): its own copy of the weights is in the same heap. */
  explorerWeights?: boolean;
}

export interface TrainerPassBytes {
  /** The peak by tfjs' count: the activations over the pass's state or the update's, whichever is larger. */
  total: number;
  /** Parameter-sized tensors held during the pass: the actor's state, a reference model, an idle critic. */
  state: number;
  /** The pass's activations: rows × perRow. */
  activations: number;
  perRow: number;
  /** Of perRow: the `[T, T]` attention terms. */
  attentionPerRow: number;
  /** Parameter-sized tensors at the peak from the end of the backward into the optimizer update. */
  update: number;
  /** Of state and update: the reference model's weights, where it may be held. */
  reference: number;
}

export function trainerPassBytes(shape: ModelShape, pass: TrainerPass): TrainerPassBytes {
  const T = pass.tokens;
  const L = shape.numLayers;
  const attention = 4 * L * T * T * (COPIES.headScores * shape.numHeads + COPIES.layerScores);
  const R = Math.min(T, pass.responseTokens ?? T);
  const linear =
    4 *
    (R * COPIES.vocab * shape.vocabSize +
      T * (L * (COPIES.hidden * shape.hiddenSize + COPIES.mlp * shape.intermediateSize) + COPIES.position));
  const params = causalLmParams(shape);
  const reference = pass.reference ? REFERENCE_BYTES_PER_PARAM * params : 0;
  const held =
    reference +
    CRITIC_IDLE_BYTES_PER_PARAM * (pass.criticParams ?? 0) +
    (pass.explorerWeights ? EXPLORER_BYTES_PER_PARAM * params : 0);
  const perParam = pass.frozenBase ? 4 : STATE_BYTES_PER_PARAM + (pass.accumulates ? ACCUMULATION_BYTES_PER_PARAM : 0);
  const state = perParam * params + held;
  const copies = pass.accumulates ? UPDATE_COPIES.accumulated : UPDATE_COPIES.whole;
  const update = pass.frozenBase
    ? state
    : 4 * (copies.params * params + copies.embedding * shape.vocabSize * shape.hiddenSize) + held;
  const perRow = attention + linear;
  const activations = pass.rows * perRow;
  return {
    total: Math.max(state, update) + activations,
    state,
    activations,
    perRow,
    attentionPerRow: attention,
    update,
    reference,
  };
}

/** The most rows, up to `most`, of `pass.tokens` whose heap stays within `heap` at the most it may need. */
export function rowsWithin(shape: ModelShape, pass: TrainerPass, heap: number, most: number): number {
  let rows = 0;
  while (rows < most && heapBytes(trainerPassBytes(shape, { ...pass, rows: rows + 1 })).high <= heap) rows++;
  return rows;
}

/** The most tokens per row for which `pass.rows` rows' heap stays within `heap` at the most (0: not even one token). */
export function tokensWithin(shape: ModelShape, pass: TrainerPass, heap: number): number {
  const fits = (tokens: number): boolean => heapBytes(trainerPassBytes(shape, { ...pass, tokens })).high <= heap;
  if (!fits(1)) return 0;
  let lo = 1;
  let hi = 2;
  while (fits(hi)) hi *= 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
