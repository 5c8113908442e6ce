/**
 * A whole cached-decoding step of a Llama-family model as one wasm kernel, on the native addon's `decodeStep`
 * (native/blas-matmul/src/decode_step.c): the embedding lookup, every layer and the LM head in one call, T tokens per
 * row (1 for a decode step, the prompt for the prefill, a whole sequence for scoring reference log-probs). It replaces the ~13 kernels a layer takes in
 * decode-kernels.ts, whose dispatch (8–15 µs each) and per-kernel outputs were a third of a 12 M decode step.
 *
 * Only on wasm with an addon that has `decodeStep`; elsewhere model/cached-decoder.ts keeps decode-kernels.ts.
 * The kernel writes each token's key and value into the preallocated cache tensors in place: they must be owned by
 * the caller and shared with nothing else. No gradient; inference only.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { nativeBlasAddon } from './native-matmul';

export const DECODE_STEP = 'TrinityDecodeStep';
/** `0` (or `false`, `off`, `no`) turns the one-kernel step off: decoding then takes decode-kernels.ts's kernels. */
export const DECODE_STEP_ENV = 'TRINITY_WORKBENCH_DECODE_STEP';

/** One layer's tensors, as the forward pass applies them (LoRA already merged into the weights). */
export interface DecodeStepLayer {
  ln1: tf.Tensor;
  /** `[d, H·hd]`, `[d, KV·hd]`, `[d, KV·hd]`. */
  q: tf.Tensor;
  k: tf.Tensor;
  v: tf.Tensor;
  qBias?: tf.Tensor;
  kBias?: tf.Tensor;
  vBias?: tf.Tensor;
  qNorm?: tf.Tensor;
  kNorm?: tf.Tensor;
  /** `[H·hd, d]`. */
  o: tf.Tensor;
  oBias?: tf.Tensor;
  ln2: tf.Tensor;
  /** `[d, I]` each. */
  gate: tf.Tensor;
  up: tf.Tensor;
  gateBias?: tf.Tensor;
  upBias?: tf.Tensor;
  /** `[I, d]`. */
  down: tf.Tensor;
  downBias?: tf.Tensor;
  /** The cache, `[B, KV, L, hd]` each, written in place. */
  keys: tf.Tensor;
  values: tf.Tensor;
}

/** In decode_step.c's order (its DL_* enum). */
const LAYER_FIELDS = [
  'ln1',
  'q',
  'k',
  'v',
  'qBias',
  'kBias',
  'vBias',
  'qNorm',
  'kNorm',
  'o',
  'oBias',
  'ln2',
  'gate',
  'up',
  'gateBias',
  'upBias',
  'down',
  'downBias',
  'keys',
  'values',
] as const satisfies readonly (keyof DecodeStepLayer)[];

export interface DecodeStepInputs {
  /** `[B, T]` int32: the tokens fed, and their positions (rows of the RoPE tables). */
  ids: tf.Tensor;
  positions: tf.Tensor;
  /** `[B, M]`: 1 for real tokens among the first M cache slots (the prompt); slots from M on are all real. */
  mask: tf.Tensor;
  /** `[V, d]`. */
  embed: tf.Tensor;
  /** `[maxPositions, hd/2]`. */
  cos: tf.Tensor;
  sin: tf.Tensor;
  finalNorm: tf.Tensor;
  /** `[d, V]`, or the `[V, d]` embedding itself when `headTransposed` (tied embeddings). */
  head: tf.Tensor;
  layers: readonly DecodeStepLayer[];
  /** `[B, cols]` int32: when given, the output is each of the last `cols` tokens' log-prob of its target. */
  targets?: tf.Tensor;
}

export interface DecodeStepAttrs {
  /** The cache slot of the first token fed: token t of a row goes to slot + t and attends to slots 0..slot+t. */
  slot: number;
  heads: number;
  kvHeads: number;
  eps: number;
  headTransposed: boolean;
  /** How many trailing tokens of each row reach the head (default 1: the last). */
  cols?: number;
  /** Of the target log-probs (softmax of logits / temperature); default 1. */
  temperature?: number;
}

interface WasmLike {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): TensorInfo;
  disposeData(dataId: object): boolean;
}

const HEADER = ['ids', 'positions', 'mask', 'embed', 'cos', 'sin', 'finalNorm', 'head'] as const;
/** decode_step.c's DS_COUNT: 14 sizes, the 8 HEADER offsets, head transposed, out, cols, targets, temperature. */
const HEADER_LENGTH = 27;

const decodeStepKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const ins = inputs as Record<string, TensorInfo | undefined>;
  const a = attrs as unknown as DecodeStepAttrs & { layers: number };
  const be = backend as unknown as WasmLike;
  const addon = nativeBlasAddon();
  if (!addon?.decodeStep) throw new Error(`${DECODE_STEP}: the native addon has no decodeStep`);
  const [B, T] = ins.ids!.shape;
  const [vocab, d] = ins.embed!.shape;
  const [, KV, L, hd] = ins['0.keys']!.shape;
  const cols = a.cols ?? 1;
  const out = be.makeOutput(ins.targets ? [B, cols] : cols === 1 ? [B, vocab] : [B, cols, vocab], 'float32');
  const off = (t: TensorInfo | undefined): number => {
    if (!t) return -1;
    const m = be.dataIdMap.get(t.dataId);
    if (!m) throw new Error(`${DECODE_STEP}: an input is not on the wasm backend`);
    return m.memoryOffset / 4;
  };
  const desc = new Float64Array(HEADER_LENGTH + a.layers * LAYER_FIELDS.length);
  // decode_step.c's DS_* header: sizes, then offsets.
  desc.set([
    B,
    T,
    d,
    a.heads,
    KV,
    hd,
    ins['0.gate']!.shape[1],
    vocab,
    a.layers,
    L,
    ins.mask!.shape[1],
    a.slot,
    ins.cos!.shape[0],
    a.eps,
    ...HEADER.map((k) => off(ins[k])),
    a.headTransposed ? 1 : 0,
    off(out),
    cols,
    off(ins.targets),
    a.temperature ?? 1,
  ]);
  for (let i = 0; i < a.layers; i++)
    LAYER_FIELDS.forEach((f, j) => (desc[HEADER_LENGTH + i * LAYER_FIELDS.length + j] = off(ins[`${i}.${f}`])));
  try {
    // After makeOutput: it may grow the heap, which replaces the buffer (offsets stay).
    addon.decodeStep(be.wasm.HEAPU8.buffer as ArrayBuffer, desc);
  } catch (e) {
    be.disposeData(out.dataId);
    throw e;
  }
  return out;
};

/** Whether the one-kernel step can run on the active backend (wasm with a native addon that has it) and is on. */
export function decodeStepAvailable(): boolean {
  const off = process.env[DECODE_STEP_ENV]?.trim().toLowerCase();
  if (off === '0' || off === 'false' || off === 'off' || off === 'no') return false;
  if (tf.getBackend() !== 'wasm' || !nativeBlasAddon()?.decodeStep) return false;
  if (tf.getKernel(DECODE_STEP, 'wasm') == null)
    tf.registerKernel({ kernelName: DECODE_STEP, backendName: 'wasm', kernelFunc: decodeStepKernel });
  return true;
}

/**
 * Logits `[B, V]` of the last token of each row (`[B, cols, V]` of the last `cols`), or with `targets` their log-probs
 * `[B, cols]`; each token's key and value join the cache.
 */
export function decodeStep(x: DecodeStepInputs, attrs: DecodeStepAttrs): tf.Tensor2D {
  const named: tf.NamedTensorMap = {};
  for (const k of HEADER) named[k] = x[k];
  if (x.targets) named.targets = x.targets;
  x.layers.forEach((l, i) => {
    for (const f of LAYER_FIELDS) {
      const t = l[f];
      if (t) named[`${i}.${f}`] = t;
    }
  });
  return tf.engine().runKernel(DECODE_STEP, named, {
    ...attrs,
    layers: x.layers.length,
  } as unknown as tf.NamedAttrMap) as tf.Tensor2D;
}
