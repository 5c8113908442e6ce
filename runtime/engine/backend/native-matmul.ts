/**
 * The native OpenBLAS matmul: an optional accelerator of the wasm backend. native/blas-matmul is a small N-API addon
 * that runs `cblas_sgemm` directly on tfjs-backend-wasm's heap (a plain ArrayBuffer; tensors sit in it at the byte
 * offsets the backend records), so no data is copied. Registered as the wasm `BatchMatMul` kernel, it takes every
 * float32 matmul: both transpose flags and any batch, the attention matmuls included, which stock wasm runs on a
 * scalar loop at 2–3 GFLOP/s (XNNPACK only takes un-transposed batch-1 products). Training runs 1.4–2.4x faster
 * (docs/engine-performance.md).
 *
 * Optional: when the addon was not built (`npm run build:native`, run by npm's postinstall; it needs OpenBLAS's
 * cblas.h, Debian: libopenblas-dev) or libopenblas.so.0 is missing, the stock kernel stays and wasm runs as before.
 * `TRINITY_WORKBENCH_NATIVE_MATMUL=0` disables it. OpenBLAS starts on 1 thread unless `OPENBLAS_NUM_THREADS`
 * asks for more; a training step with nothing computing beside it runs on 2 (blas-threads.ts decides when).
 *
 * Semantics are those of tfjs' own kernels (cpu and wasm): output batch slice i uses A's slice `i % batchA` and B's
 * `i % batchB`, which is numpy broadcasting whenever an operand's batch shape (leading 1s dropped) is a suffix of the
 * output's, the only case tfjs gets right. Where it is not (`[2,1,…]·[1,3,…]`, `[2,1,…]·[2,3,…]`), this kernel
 * broadcasts properly, slice by slice; tfjs' kernels would throw or mix up slices there.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { KernelConfig, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** `0` (or `false`, `off`, `no`) disables the native matmul. */
export const NATIVE_MATMUL_ENV = 'TRINITY_WORKBENCH_NATIVE_MATMUL';
/** The name {@link BackendInfo.accelerators} lists when it is in use. */
export const NATIVE_MATMUL_ACCELERATOR = 'openblas-matmul';
/** Where `npm run build:native` puts the addon, relative to the repository (package) root. */
const NATIVE_MATMUL_ADDON = join('native', 'blas-matmul', 'build', 'Release', 'blas_matmul.node');
const NATIVE_MATMUL_BUILD_HINT =
  'build it with `npm run build:native` (needs OpenBLAS with cblas.h: apt-get install libopenblas-dev)';

/** native/blas-matmul's exports (the fused optimizer kernels use `sumSquares` and `adamw`: train/native-adamw.ts). */
export interface BlasAddon {
  sgemm(
    heap: ArrayBuffer,
    batch: number,
    batchA: number,
    batchB: number,
    m: number,
    n: number,
    k: number,
    aOff: number,
    bOff: number,
    cOff: number,
    transA: boolean,
    transB: boolean,
  ): void;
  /** float64 Σx² of `n` floats at float offset `off`. */
  sumSquares(heap: ArrayBuffer, off: number, n: number): number;
  /** One AdamW step over `n` floats (offsets in floats); `h` is [lr, b1, b2, eps, wd, coef, bc1, bc2]. */
  adamw(
    heap: ArrayBuffer,
    n: number,
    pOff: number,
    gOff: number,
    mOff: number,
    vOff: number,
    pOut: number,
    mOut: number,
    vOut: number,
    h: number[],
  ): void;
  /** Absent from builds before it: decode-kernels.ts then runs its JavaScript twin. Offsets in floats; -1: absent. */
  decodeAttention?(
    heap: ArrayBuffer,
    B: number,
    H: number,
    KV: number,
    hd: number,
    L: number,
    M: number,
    slot: number,
    rows: number,
    eps: number,
    qkv: number,
    pos: number,
    cos: number,
    sin: number,
    keys: number,
    values: number,
    mask: number,
    bias: number,
    qNorm: number,
    kNorm: number,
    out: number,
  ): void;
  /** `out = silu(gate) · up` over `rows` rows of `[gate | up]` (offsets in floats). */
  swiglu?(heap: ArrayBuffer, rows: number, inter: number, guOff: number, outOff: number): void;
  /** One whole decode or prefill step (decode_step.c; `desc` as decode-step.ts builds it). Absent from older builds. */
  decodeStep?(heap: ArrayBuffer, desc: Float64Array): void;
  /** Temperature sampling or the greedy pick from rows of logits (sample_rows.c; native-sampler.ts). Absent from older builds. */
  sampleRows?(
    logits: Float32Array,
    stride: number,
    valid: number,
    scale: number,
    greedy: boolean,
    rows: Int32Array,
    u: Float64Array,
    banned: Int32Array,
    tokens: Int32Array,
    logprobs: Float64Array,
  ): void;
  setThreads(n: number): void;
  getThreads(): number;
  config(): string;
}

export type NativeMatmulLoad =
  | { ok: true; path: string; config: string; threads: number }
  | { ok: false; disabled: boolean; reason: string };

/** The part of tfjs-backend-wasm's `BackendWasm` this kernel needs. */
interface WasmBackendLike {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): TensorInfo;
}

function nativeMatmulDisabled(): boolean {
  const v = process.env[NATIVE_MATMUL_ENV]?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

/**
 * The addon's path: found by walking up from this file's directory, so it resolves from the sources
 * (runtime/engine/backend, under tsx) and from the esbuild bundles in dist/ (cli.js, explorer-worker.js) alike.
 */
function findNativeMatmulAddon(from = __dirname): string | undefined {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    const p = join(dir, NATIVE_MATMUL_ADDON);
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

function wantedThreads(): number {
  const n = Number(process.env.OPENBLAS_NUM_THREADS);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

let addon: BlasAddon | undefined;
let loaded: NativeMatmulLoad | undefined;

/** Loads the addon once per thread (it is context-aware, so worker threads load their own). Never throws. */
export function loadNativeMatmul(): NativeMatmulLoad {
  if (nativeMatmulDisabled())
    return { ok: false, disabled: true, reason: `disabled by $${NATIVE_MATMUL_ENV}=${process.env[NATIVE_MATMUL_ENV]}` };
  if (loaded) return loaded;
  const path = findNativeMatmulAddon();
  if (!path) {
    loaded = {
      ok: false,
      disabled: false,
      reason: `the addon ${NATIVE_MATMUL_ADDON} is not built; ${NATIVE_MATMUL_BUILD_HINT}`,
    };
    return loaded;
  }
  const threads = wantedThreads();
  // OpenBLAS sizes its thread pool from OPENBLAS_NUM_THREADS when the library loads: ask for ours, then restore the
  // variable, so child processes (e.g. a PyTorch peer) are not affected.
  const before = process.env.OPENBLAS_NUM_THREADS;
  process.env.OPENBLAS_NUM_THREADS = String(threads);
  try {
    const m = require(path) as BlasAddon;
    m.setThreads(threads);
    addon = m;
    loaded = { ok: true, path, config: m.config(), threads: m.getThreads() };
  } catch (e) {
    const msg = ((e as Error).message ?? String(e)).split('\n')[0];
    loaded = {
      ok: false,
      disabled: false,
      reason: `${path} does not load: ${msg}${/libopenblas/.test(msg) ? ' (apt-get install libopenblas0)' : ''}`,
    };
  } finally {
    if (before === undefined) delete process.env.OPENBLAS_NUM_THREADS;
    else process.env.OPENBLAS_NUM_THREADS = before;
  }
  return loaded;
}

/** The loaded addon, when {@link loadNativeMatmul} succeeded in this thread (and it is not disabled). */
export function nativeBlasAddon(): BlasAddon | undefined {
  return nativeMatmulDisabled() ? undefined : addon;
}

function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, d) => a * d, 1);
}

/** True when `batch` (an operand's batch shape) is, leading 1s dropped, a suffix of `out`: then `i % size` is its slice. */
function moduloBroadcasts(batch: readonly number[], out: readonly number[]): boolean {
  let s = 0;
  while (s < batch.length && batch[s] === 1) s++;
  const rest = batch.slice(s);
  if (rest.length > out.length) return false;
  const tail = out.slice(out.length - rest.length);
  return rest.every((d, i) => d === tail[i]);
}

/** The flat slice of an operand with batch shape `batch` that output batch index `i` (of shape `out`) uses. */
function broadcastIndex(i: number, out: readonly number[], batch: readonly number[]): number {
  let idx = 0;
  let stride = 1;
  let rem = i;
  for (let d = out.length - 1, e = batch.length - 1; d >= 0; d--, e--) {
    const coord = rem % out[d];
    rem = Math.floor(rem / out[d]);
    if (e >= 0) {
      if (batch[e] !== 1) idx += coord * stride;
      stride *= batch[e];
    }
  }
  return idx;
}

let original: KernelConfig | undefined;

function memoryOffset(be: WasmBackendLike, t: TensorInfo): number {
  const d = be.dataIdMap.get(t.dataId);
  if (!d) throw new Error('BatchMatMul (OpenBLAS): an input is not on the wasm backend');
  return d.memoryOffset / 4;
}

const nativeBatchMatMul: KernelFunc = (args) => {
  const a = args.inputs.a as TensorInfo;
  const b = args.inputs.b as TensorInfo;
  const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
  if (!addon || a.dtype !== 'float32' || b.dtype !== 'float32') return original!.kernelFunc(args);
  const be = args.backend as unknown as WasmBackendLike;
  const ra = a.shape.length;
  const rb = b.shape.length;
  const innerA = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
  const innerB = transposeB ? b.shape[rb - 1] : b.shape[rb - 2];
  const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
  const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
  tf.util.assert(
    innerA === innerB,
    () =>
      `Error in matMul: inner shapes (${innerA}) and (${innerB}) of Tensors with shapes ${a.shape} and ${b.shape} and transposeA=${transposeA} and transposeB=${transposeB} must match.`,
  );
  const batchShapeA = a.shape.slice(0, -2);
  const batchShapeB = b.shape.slice(0, -2);
  const outBatch = tf.broadcast_util.assertAndGetBroadcastShape(batchShapeA, batchShapeB);
  const out = be.makeOutput([...outBatch, m, n], 'float32');
  const batch = sizeOf(outBatch);
  if (batch === 0 || m === 0 || n === 0) return out;
  const batchA = sizeOf(batchShapeA);
  const batchB = sizeOf(batchShapeB);
  // After makeOutput: it may grow the heap, which replaces the buffer.
  const heap = be.wasm.HEAPU8.buffer as ArrayBuffer;
  const aOff = memoryOffset(be, a);
  const bOff = memoryOffset(be, b);
  const cOff = memoryOffset(be, out);
  if (moduloBroadcasts(batchShapeA, outBatch) && moduloBroadcasts(batchShapeB, outBatch)) {
    addon.sgemm(heap, batch, batchA, batchB, m, n, innerA, aOff, bOff, cOff, transposeA, transposeB);
  } else {
    const k = innerA;
    for (let i = 0; i < batch; i++) {
      const ia = broadcastIndex(i, outBatch, batchShapeA);
      const ib = broadcastIndex(i, outBatch, batchShapeB);
      addon.sgemm(
        heap,
        1,
        1,
        1,
        m,
        n,
        k,
        aOff + ia * m * k,
        bOff + ib * k * n,
        cOff + i * m * n,
        transposeA,
        transposeB,
      );
    }
  }
  return out;
};

export type NativeMatmulStatus =
  | { installed: true; config: string; threads: number }
  | { installed: false; disabled: boolean; reason: string };

let status: NativeMatmulStatus | undefined;

/**
 * Loads the addon and, when it loads, registers it as the wasm `BatchMatMul` kernel (keeping the stock kernel for
 * non-float32 inputs and for {@link useNativeMatmul}(false)). Idempotent; never throws.
 */
export function installNativeMatmul(): NativeMatmulStatus {
  const l = loadNativeMatmul();
  if (!l.ok) {
    status = { installed: false, disabled: l.disabled, reason: l.reason };
    return status;
  }
  const current = tf.getKernel(tf.BatchMatMul, 'wasm');
  if (!current) {
    status = { installed: false, disabled: false, reason: 'the wasm backend has no BatchMatMul kernel to replace' };
    return status;
  }
  if (current.kernelFunc !== nativeBatchMatMul) {
    original = current;
    tf.unregisterKernel(tf.BatchMatMul, 'wasm');
    tf.registerKernel({ ...current, kernelFunc: nativeBatchMatMul });
  }
  status = { installed: true, config: l.config, threads: l.threads };
  return status;
}

/** What {@link installNativeMatmul} last did in this thread (undefined before it ran). */
export function nativeMatmulStatus(): NativeMatmulStatus | undefined {
  return status;
}

/**
 * Switches the wasm `BatchMatMul` kernel between the native one and tfjs' stock one (for A/B measurements and
 * tests). Returns whether the native kernel is now active: false when it was never installed.
 */
export function useNativeMatmul(on: boolean): boolean {
  if (!original || !status?.installed) return false;
  const current = tf.getKernel(tf.BatchMatMul, 'wasm');
  const isNative = current?.kernelFunc === nativeBatchMatMul;
  if (on === isNative) return on;
  tf.unregisterKernel(tf.BatchMatMul, 'wasm');
  tf.registerKernel(on ? { ...original, kernelFunc: nativeBatchMatMul } : original);
  return on;
}
