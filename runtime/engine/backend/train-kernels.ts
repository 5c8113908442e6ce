/**
 * Fused training kernels on the wasm backend, in native/blas-matmul (src/train_kernels.c): each replaces a chain of
 * tfjs kernels, forward and backward, by one native pass over the wasm heap. A 12 M training step dispatched ~2,000
 * kernels, most of them small elementwise ones each making a full pass over memory on one thread
 * (docs/engine-performance.md). Each op here is a registered wasm kernel with a registered gradient (one more kernel):
 *
 * - `tokenLogProbs`: log softmax(z / temperature)[target] per row: row max, logsumexp and the target's logit in one
 *   pass, the gradient in one more (tfjs' logSoftmax + gather: ~10 passes over [tokens, vocab]).
 * - `rmsNorm`: x / √(mean(x²) + eps) · w, and dx, dw.
 * - `swiglu`: silu(gate) · up, and dgate, dup.
 * - `maskedSoftmax`: attention probabilities softmax(scale · scores + bias), bias the additive causal/padding mask
 *   `[1|B, 1, T, Tk]`, and the scores' gradient.
 * - `headsRope`: a projection `[B, T, H·hd]` plus its bias, split into heads `[B, H, T, hd]` and rotated
 *   (rotate-half RoPE; or not, for values), and the gradients of the projection and the bias: no Transpose, no
 *   rotation matmul.
 *
 * The kernels split rows over OpenBLAS's thread count (blas-threads.ts decides it: 2 for a training step nothing
 * computes beside); results are the same bits on any count. `ops.ts` and the model use them when
 * {@link trainKernelsActive}: the wasm backend with the addon loaded (and built with these kernels), unless
 * `TRINITY_WORKBENCH_TRAIN_KERNELS=0` or {@link useTrainKernels}(false); everywhere else the tfjs ops stay.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { KernelFunc, NamedAttrMap, TensorInfo } from '@tensorflow/tfjs-core';
import { nativeBlasAddon, type BlasAddon } from './native-matmul';

/** `0` (or `false`, `off`, `no`) keeps the tfjs ops. */
export const TRAIN_KERNELS_ENV = 'TRINITY_WORKBENCH_TRAIN_KERNELS';

const TOKEN_LOG_PROBS = 'TrinityTokenLogProbs';
const TOKEN_LOG_PROBS_GRAD = 'TrinityTokenLogProbsGrad';
const RMS_NORM = 'TrinityRmsNormTrain';
const RMS_NORM_GRAD = 'TrinityRmsNormTrainGrad';
const SWIGLU = 'TrinitySwiGluTrain';
const SWIGLU_GRAD = 'TrinitySwiGluTrainGrad';
const MASKED_SOFTMAX = 'TrinityMaskedSoftmax';
const MASKED_SOFTMAX_GRAD = 'TrinityMaskedSoftmaxGrad';
const HEADS_ROPE = 'TrinityHeadsRope';
const HEADS = 'TrinityHeads';
const HEADS_ROPE_GRAD = 'TrinityHeadsRopeGrad';

/** native/blas-matmul's training kernels (offsets in floats; -1 for an absent optional operand). */
export interface TrainKernelsAddon {
  tokenLogProbs(heap: ArrayBuffer, n: number, v: number, z: number, t: number, out: number, invTemp: number): void;
  tokenLogProbsGrad(
    heap: ArrayBuffer,
    n: number,
    v: number,
    z: number,
    t: number,
    dy: number,
    dx: number,
    invTemp: number,
  ): void;
  rmsNorm(heap: ArrayBuffer, rows: number, d: number, x: number, w: number, out: number, eps: number): void;
  rmsNormGrad(
    heap: ArrayBuffer,
    rows: number,
    d: number,
    x: number,
    w: number,
    dy: number,
    dx: number,
    dw: number,
    eps: number,
  ): void;
  swiglu2(heap: ArrayBuffer, n: number, gate: number, up: number, out: number): void;
  swiglu2Grad(heap: ArrayBuffer, n: number, gate: number, up: number, dy: number, dgate: number, dup: number): void;
  maskedSoftmax(
    heap: ArrayBuffer,
    B: number,
    H: number,
    T: number,
    Tk: number,
    biasBatch: number,
    s: number,
    bias: number,
    out: number,
    scale: number,
  ): void;
  maskedSoftmaxGrad(
    heap: ArrayBuffer,
    rows: number,
    Tk: number,
    p: number,
    dy: number,
    dx: number,
    scale: number,
  ): void;
  headsRope(
    heap: ArrayBuffer,
    B: number,
    T: number,
    H: number,
    hd: number,
    x: number,
    bias: number,
    cos: number,
    sin: number,
    out: number,
  ): void;
  headsRopeGrad(
    heap: ArrayBuffer,
    B: number,
    T: number,
    H: number,
    hd: number,
    dy: number,
    cos: number,
    sin: number,
    dx: number,
    dbias: number,
  ): void;
  trainKernelThreads(): number;
}

/** The part of tfjs-backend-wasm's `BackendWasm` these kernels need. */
interface WasmBackendLike {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): TensorInfo;
}

function isOff(v: string | undefined): boolean {
  const s = v?.trim().toLowerCase();
  return s === '0' || s === 'false' || s === 'off' || s === 'no';
}

let switchedOn = true;

function loadedAddon(): TrainKernelsAddon | undefined {
  const a = nativeBlasAddon() as (BlasAddon & Partial<TrainKernelsAddon>) | undefined;
  return a && typeof a.headsRopeGrad === 'function' ? (a as unknown as TrainKernelsAddon) : undefined;
}

/** Whether the fused kernels run here: wasm with an addon that has them, not disabled. Registers them on first use. */
export function trainKernelsActive(): boolean {
  if (!switchedOn || isOff(process.env[TRAIN_KERNELS_ENV]) || tf.getBackend() !== 'wasm') return false;
  if (!loadedAddon()) return false;
  registerTrainKernels();
  return true;
}

/** Turns the fused kernels on or off in this thread (tests and paired A/B benches). Returns whether they are active. */
export function useTrainKernels(on: boolean): boolean {
  switchedOn = on;
  return trainKernelsActive();
}

function offsets(be: WasmBackendLike): (t: TensorInfo | undefined) => number {
  return (t) => {
    if (!t) return -1;
    const d = be.dataIdMap.get(t.dataId);
    if (!d) throw new Error('train kernel: an input is not on the wasm backend');
    return d.memoryOffset / 4;
  };
}

/** Runs `body` with the addon, the heap (taken after every output is made: makeOutput may grow it) and offsets. */
function native<T>(
  backend: unknown,
  outputs: (be: WasmBackendLike) => T,
  body: (a: TrainKernelsAddon, heap: ArrayBuffer, off: (t: TensorInfo | undefined) => number, outs: T) => void,
): T {
  const be = backend as WasmBackendLike;
  const a = loadedAddon();
  if (!a) throw new Error('train kernel: the native addon is not loaded');
  const outs = outputs(be);
  body(a, be.wasm.HEAPU8.buffer as ArrayBuffer, offsets(be), outs);
  return outs;
}

const size = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

const tokenLogProbsKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { logits, targets } = inputs as { logits: TensorInfo; targets: TensorInfo };
  const { invTemp } = attrs as unknown as { invTemp: number };
  const [n, v] = logits.shape;
  return native(
    backend,
    (be) => be.makeOutput([n], 'float32'),
    (a, heap, o, out) => a.tokenLogProbs(heap, n, v, o(logits), o(targets), o(out), invTemp),
  );
};

const tokenLogProbsGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { logits, targets, dy } = inputs as { logits: TensorInfo; targets: TensorInfo; dy: TensorInfo };
  const { invTemp } = attrs as unknown as { invTemp: number };
  const [n, v] = logits.shape;
  return native(
    backend,
    (be) => be.makeOutput([n, v], 'float32'),
    (a, heap, o, dx) => a.tokenLogProbsGrad(heap, n, v, o(logits), o(targets), o(dy), o(dx), invTemp),
  );
};

const rmsNormKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, w } = inputs as { x: TensorInfo; w: TensorInfo };
  const { eps } = attrs as unknown as { eps: number };
  const d = w.shape[0];
  return native(
    backend,
    (be) => be.makeOutput([...x.shape], 'float32'),
    (a, heap, o, out) => a.rmsNorm(heap, size(x.shape) / d, d, o(x), o(w), o(out), eps),
  );
};

const rmsNormGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, w, dy } = inputs as { x: TensorInfo; w: TensorInfo; dy: TensorInfo };
  const { eps } = attrs as unknown as { eps: number };
  const d = w.shape[0];
  return native(
    backend,
    (be) => [be.makeOutput([...x.shape], 'float32'), be.makeOutput([d], 'float32')],
    (a, heap, o, [dx, dw]) => a.rmsNormGrad(heap, size(x.shape) / d, d, o(x), o(w), o(dy), o(dx), o(dw), eps),
  );
};

const swigluKernel: KernelFunc = ({ inputs, backend }) => {
  const { gate, up } = inputs as { gate: TensorInfo; up: TensorInfo };
  return native(
    backend,
    (be) => be.makeOutput([...gate.shape], 'float32'),
    (a, heap, o, out) => a.swiglu2(heap, size(gate.shape), o(gate), o(up), o(out)),
  );
};

const swigluGradKernel: KernelFunc = ({ inputs, backend }) => {
  const { gate, up, dy } = inputs as { gate: TensorInfo; up: TensorInfo; dy: TensorInfo };
  return native(
    backend,
    (be) => [be.makeOutput([...gate.shape], 'float32'), be.makeOutput([...gate.shape], 'float32')],
    (a, heap, o, [dg, du]) => a.swiglu2Grad(heap, size(gate.shape), o(gate), o(up), o(dy), o(dg), o(du)),
  );
};

const maskedSoftmaxKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { scores, bias } = inputs as { scores: TensorInfo; bias: TensorInfo };
  const { scale } = attrs as unknown as { scale: number };
  const [B, H, T, Tk] = scores.shape;
  return native(
    backend,
    (be) => be.makeOutput([...scores.shape], 'float32'),
    (a, heap, o, out) => a.maskedSoftmax(heap, B, H, T, Tk, bias.shape[0], o(scores), o(bias), o(out), scale),
  );
};

const maskedSoftmaxGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { probs, dy } = inputs as { probs: TensorInfo; dy: TensorInfo };
  const { scale } = attrs as unknown as { scale: number };
  const Tk = probs.shape[probs.shape.length - 1];
  return native(
    backend,
    (be) => be.makeOutput([...probs.shape], 'float32'),
    (a, heap, o, dx) => a.maskedSoftmaxGrad(heap, size(probs.shape) / Tk, Tk, o(probs), o(dy), o(dx), scale),
  );
};

interface HeadsAttrs {
  heads: number;
}

const headsRopeKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, bias, cos, sin } = inputs as Record<'x' | 'bias' | 'cos' | 'sin', TensorInfo | undefined>;
  const { heads } = attrs as unknown as HeadsAttrs;
  const [B, T, width] = x!.shape;
  const hd = width / heads;
  return native(
    backend,
    (be) => be.makeOutput([B, heads, T, hd], 'float32'),
    (a, heap, o, out) => a.headsRope(heap, B, T, heads, hd, o(x), o(bias), o(cos), o(sin), o(out)),
  );
};

const headsRopeGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { dy, cos, sin } = inputs as Record<'dy' | 'cos' | 'sin', TensorInfo | undefined>;
  const { withBias } = attrs as unknown as { withBias: boolean };
  const [B, H, T, hd] = dy!.shape;
  return native(
    backend,
    (be) => [be.makeOutput([B, T, H * hd], 'float32'), ...(withBias ? [be.makeOutput([H * hd], 'float32')] : [])],
    (a, heap, o, [dx, dbias]) => a.headsRopeGrad(heap, B, T, H, hd, o(dy!), o(cos), o(sin), o(dx), o(dbias)),
  );
};

const run = (name: string, inputs: tf.NamedTensorMap, attrs: object = {}): tf.Tensor | tf.Tensor[] =>
  tf.engine().runKernel(name, inputs, attrs as NamedAttrMap) as tf.Tensor | tf.Tensor[];

/*
 * tfjs calls each input's gradient closure inside its own tidy, which would dispose the other outputs of a
 * two-output gradient kernel; so those run when the node's gradient is asked for (every gradient tensor lives until
 * the backward pass ends anyway: engine.gradients' one tidy) and the closures hand out their parts.
 */
function registerGradients(): void {
  tf.registerGradient({
    kernelName: TOKEN_LOG_PROBS,
    inputsToSave: ['logits', 'targets'],
    gradFunc: (dy, saved, attrs) => {
      const [logits, targets] = saved;
      return {
        logits: () => run(TOKEN_LOG_PROBS_GRAD, { logits, targets, dy: dy as tf.Tensor }, attrs) as tf.Tensor,
        targets: () => tf.zerosLike(targets),
      };
    },
  });
  tf.registerGradient({
    kernelName: RMS_NORM,
    inputsToSave: ['x', 'w'],
    gradFunc: (dy, saved, attrs) => {
      const [x, w] = saved;
      const [dx, dw] = run(RMS_NORM_GRAD, { x, w, dy: dy as tf.Tensor }, attrs) as tf.Tensor[];
      return { x: () => dx, w: () => dw };
    },
  });
  tf.registerGradient({
    kernelName: SWIGLU,
    inputsToSave: ['gate', 'up'],
    gradFunc: (dy, saved) => {
      const [gate, up] = saved;
      const [dg, du] = run(SWIGLU_GRAD, { gate, up, dy: dy as tf.Tensor }) as tf.Tensor[];
      return { gate: () => dg, up: () => du };
    },
  });
  tf.registerGradient({
    kernelName: MASKED_SOFTMAX,
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [probs] = saved;
      const ds = (): tf.Tensor => run(MASKED_SOFTMAX_GRAD, { probs, dy: dy as tf.Tensor }, attrs) as tf.Tensor;
      return {
        scores: ds,
        // The mask is a constant of the forward pass; its gradient (never asked for in training) for completeness.
        bias: () => {
          const { scale, biasShape } = attrs as unknown as { scale: number; biasShape: number[] };
          return tf.reshape(tf.sum(tf.div(ds(), scale), biasShape[0] === 1 ? [0, 1] : [1], true), biasShape);
        },
      };
    },
  });
  const headsGrad = (dy: tf.Tensor, rope: tf.NamedTensorMap, withBias: boolean): Record<string, () => tf.Tensor> => {
    const [dx, dbias] = run(HEADS_ROPE_GRAD, { dy, ...rope }, { withBias }) as tf.Tensor[];
    return withBias ? { x: () => dx, bias: () => dbias } : { x: () => dx };
  };
  tf.registerGradient({
    kernelName: HEADS_ROPE,
    inputsToSave: ['cos', 'sin'],
    gradFunc: (dy, [cos, sin], attrs) => ({
      ...headsGrad(dy as tf.Tensor, { cos, sin }, (attrs as unknown as { withBias: boolean }).withBias),
      cos: () => tf.zerosLike(cos),
      sin: () => tf.zerosLike(sin),
    }),
  });
  tf.registerGradient({
    kernelName: HEADS,
    gradFunc: (dy, _saved, attrs) =>
      headsGrad(dy as tf.Tensor, {}, (attrs as unknown as { withBias: boolean }).withBias),
  });
}

let registered = false;

function registerTrainKernels(): void {
  if (registered) return;
  registered = true;
  const kernels: [string, KernelFunc][] = [
    [TOKEN_LOG_PROBS, tokenLogProbsKernel],
    [TOKEN_LOG_PROBS_GRAD, tokenLogProbsGradKernel],
    [RMS_NORM, rmsNormKernel],
    [RMS_NORM_GRAD, rmsNormGradKernel],
    [SWIGLU, swigluKernel],
    [SWIGLU_GRAD, swigluGradKernel],
    [MASKED_SOFTMAX, maskedSoftmaxKernel],
    [MASKED_SOFTMAX_GRAD, maskedSoftmaxGradKernel],
    [HEADS_ROPE, headsRopeKernel],
    [HEADS, headsRopeKernel],
    [HEADS_ROPE_GRAD, headsRopeGradKernel],
  ];
  for (const [kernelName, kernelFunc] of kernels)
    if (!tf.getKernel(kernelName, 'wasm')) tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc });
  registerGradients();
}

const f32 = (t: tf.Tensor): tf.Tensor => (t.dtype === 'float32' ? t : tf.cast(t, 'float32'));

/** log softmax(logits / temperature)[target] per row: logits `[N, V]`, targets `[N]` → `[N]`. */
export function fusedTokenLogProbs(logits: tf.Tensor2D, targets: tf.Tensor1D, temperature: number): tf.Tensor1D {
  if (!(temperature > 0)) throw new Error(`tokenLogProbs: temperature must be > 0, got ${temperature}`);
  const t = targets.dtype === 'int32' ? targets : tf.cast(targets, 'int32');
  return run(TOKEN_LOG_PROBS, { logits: f32(logits), targets: t }, { invTemp: 1 / temperature }) as tf.Tensor1D;
}

/** x `[..., d]` / √(mean(x²) + eps) · w `[d]`. */
export function fusedRmsNorm(x: tf.Tensor, w: tf.Tensor, eps: number): tf.Tensor {
  return run(RMS_NORM, { x: f32(x), w: f32(w) }, { eps }) as tf.Tensor;
}

/** silu(gate) · up, same shapes. */
export function fusedSwiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  return run(SWIGLU, { gate: f32(gate), up: f32(up) }) as tf.Tensor;
}

/** softmax(scale · scores + bias) over the last axis: scores `[B, H, T, Tk]`, bias `[1|B, 1, T, Tk]`. */
export function fusedMaskedSoftmax(scores: tf.Tensor4D, bias: tf.Tensor, scale: number): tf.Tensor4D {
  return run(MASKED_SOFTMAX, { scores: f32(scores), bias: f32(bias) }, { scale, biasShape: bias.shape }) as tf.Tensor4D;
}

/**
 * x `[B, T, heads·hd]` (+ bias `[heads·hd]`) → `[B, heads, T, hd]`, rotated by rotate-half RoPE when cos and sin
 * `[B, T, hd/2]` are given (x·cos + rotate_half(x)·sin, as ops.applyRopeRotation).
 */
export function fusedHeadsRope(
  x: tf.Tensor3D,
  heads: number,
  bias?: tf.Tensor1D,
  rope?: { cos: tf.Tensor; sin: tf.Tensor },
): tf.Tensor4D {
  const inputs: tf.NamedTensorMap = { x: f32(x) };
  if (bias) inputs.bias = f32(bias);
  if (rope) {
    inputs.cos = f32(rope.cos);
    inputs.sin = f32(rope.sin);
  }
  return run(rope ? HEADS_ROPE : HEADS, inputs, { heads, withBias: bias !== undefined }) as tf.Tensor4D;
}

/** Where the fused forms apply: shapes the kernels take (callers fall back to the tfjs ops otherwise). */
export const fusedShapes = {
  maskedSoftmax(scores: readonly number[], bias: readonly number[]): boolean {
    return (
      scores.length === 4 &&
      bias.length === 4 &&
      (bias[0] === 1 || bias[0] === scores[0]) &&
      bias[1] === 1 &&
      bias[2] === scores[2] &&
      bias[3] === scores[3]
    );
  },
};
