/**
 * AdamW in one native pass per tensor on the wasm backend. The optimizer's tfjs form costs about 17 kernels per
 * tensor (six full passes over weights, moments and gradient, each a separate dispatch and heap allocation) plus two
 * per tensor for the global norm: at 3 M parameters that was 860 kernels and 15–20 % of a training step.
 * native/blas-matmul's `sumSquares` and `adamw` read the tensors where they sit in the wasm heap, compute in float64
 * and round once, so the result is torch.optim.AdamW's float64 step rounded to float32 (AdamW in adamw.ts uses
 * this when it is available, else its tfjs ops).
 *
 * The update writes fresh outputs (registered as the wasm kernel `TrinityAdamW`) instead of overwriting the
 * variables' buffers in place: a variable's data may be shared with other tensors (a clone or a reshape keeps a
 * reference), and those must keep the old values.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { nativeBlasAddon, type BlasAddon } from '../backend/native-matmul';

const KERNEL = 'TrinityAdamW';

/** The part of tfjs-backend-wasm's `BackendWasm` these kernels need. */
interface WasmBackendLike {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): TensorInfo;
}

/** AdamW's hyperparameters for one step, as the addon takes them. */
export interface AdamWStepParams {
  lr: number;
  b1: number;
  b2: number;
  eps: number;
  weightDecay: number;
  /** Gradient scale (global-norm clipping), 1 for none. */
  coef: number;
  /** Bias corrections 1 − β₁ᵗ and 1 − β₂ᵗ. */
  bc1: number;
  bc2: number;
}

function floatOffset(be: WasmBackendLike, t: TensorInfo): number {
  const d = be.dataIdMap.get(t.dataId);
  if (!d) throw new Error('AdamW (native): a tensor is not on the wasm backend');
  return d.memoryOffset / 4;
}

let addon: BlasAddon | undefined;

const adamwKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { p, g, m, v } = inputs as Record<'p' | 'g' | 'm' | 'v', TensorInfo>;
  const be = backend as unknown as WasmBackendLike;
  const outs = [
    be.makeOutput(p.shape, 'float32'),
    be.makeOutput(p.shape, 'float32'),
    be.makeOutput(p.shape, 'float32'),
  ];
  // After makeOutput: it may grow the heap, which replaces the buffer.
  const heap = be.wasm.HEAPU8.buffer as ArrayBuffer;
  const n = tf.util.sizeFromShape(p.shape);
  const o = outs.map((t) => floatOffset(be, t));
  addon!.adamw(
    heap,
    n,
    floatOffset(be, p),
    floatOffset(be, g),
    floatOffset(be, m),
    floatOffset(be, v),
    o[0],
    o[1],
    o[2],
    (attrs as unknown as { h: number[] }).h,
  );
  return outs;
};

/** The fused optimizer kernels, when the wasm backend is active and the addon is loaded; else undefined. */
export interface NativeAdamW {
  /** float64 Σ g² over every tensor. */
  sumSquares(ts: readonly tf.Tensor[]): number;
  /** The updated weight, first and second moments (new tensors, owned by the caller). */
  step(p: tf.Tensor, g: tf.Tensor, m: tf.Tensor, v: tf.Tensor, h: AdamWStepParams): [tf.Tensor, tf.Tensor, tf.Tensor];
}

const impl: NativeAdamW = {
  sumSquares(ts) {
    const be = tf.backend() as unknown as WasmBackendLike;
    const heap = be.wasm.HEAPU8.buffer as ArrayBuffer;
    let s = 0;
    for (const t of ts) s += addon!.sumSquares(heap, floatOffset(be, t), t.size);
    return s;
  },
  step(p, g, m, v, h) {
    const attrs = { h: [h.lr, h.b1, h.b2, h.eps, h.weightDecay, h.coef, h.bc1, h.bc2] };
    return tf.engine().runKernel(KERNEL, { p, g, m, v }, attrs as unknown as tf.NamedAttrMap) as [
      tf.Tensor,
      tf.Tensor,
      tf.Tensor,
    ];
  },
};

/**
 * The native AdamW for these tensors, or undefined where it does not apply (another backend, the addon not built or
 * disabled, a non-float32 tensor). Registers the kernel on first use.
 */
export function nativeAdamW(tensors: readonly tf.Tensor[]): NativeAdamW | undefined {
  if (tf.getBackend() !== 'wasm') return undefined;
  addon = nativeBlasAddon();
  if (!addon || typeof addon.adamw !== 'function') return undefined;
  if (tensors.some((t) => t.dtype !== 'float32')) return undefined;
  if (!tf.getKernel(KERNEL, 'wasm'))
    tf.registerKernel({ kernelName: KERNEL, backendName: 'wasm', kernelFunc: adamwKernel });
  return impl;
}
