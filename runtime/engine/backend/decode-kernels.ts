/**
 * Host kernels for decoding one token per row (model/cached-decoder.ts), on the wasm and cpu backends. With one token
 * per row every tensor of a decode step is small, so a step costs what its kernels cost to dispatch (8–15 µs each on
 * wasm), not what they compute: these replace the ~70 tfjs kernels a layer takes in `CausalLM.forward` by 4 (the
 * matmuls stay tfjs' own, on OpenBLAS or XNNPACK). The loops read and write the backends' own storage (the wasm heap,
 * the cpu backend's arrays) and accumulate in float64.
 *
 * `DecodeAttention` writes the token's key and value into a preallocated cache in place: the cache tensors must be
 * owned by the caller and shared with nothing else. No kernel here has a gradient; they are for inference only.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { DataType, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { nativeBlasAddon, type BlasAddon } from './native-matmul';

export const RMS_NORM = 'TrinityRmsNorm';
export const ADD_RMS_NORM = 'TrinityAddRmsNorm';
export const SWIGLU = 'TrinitySwiGlu';
export const DECODE_ATTENTION = 'TrinityDecodeAttention';

/** The backends these kernels are registered for. */
export const DECODE_KERNEL_BACKENDS = ['wasm', 'cpu'] as const;

type HostArray = Float32Array | Int32Array;

/** A backend's tensor storage as typed arrays. Views are valid until the next `output` (wasm's heap can grow). */
interface HostStore {
  view(t: TensorInfo): HostArray;
  output(shape: number[], dtype: DataType): TensorInfo;
}

interface WasmLike {
  typedArrayFromHeap(t: TensorInfo): HostArray;
  makeOutput(shape: number[], dtype: DataType): TensorInfo;
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { memoryOffset: number } | undefined };
}

/** On wasm with the native addon (and a build that has `fn`): the heap and tensors' float offsets for it. */
function nativeOn(
  backendName: string,
  backend: unknown,
  fn: 'decodeAttention' | 'swiglu',
): { addon: Required<BlasAddon>; heap: () => ArrayBuffer; off: (t: TensorInfo | undefined) => number } | undefined {
  const addon = backendName === 'wasm' ? nativeBlasAddon() : undefined;
  if (!addon?.[fn]) return undefined;
  const be = backend as WasmLike;
  return {
    addon: addon as Required<BlasAddon>,
    heap: () => be.wasm.HEAPU8.buffer as ArrayBuffer,
    off: (t) => {
      if (!t) return -1;
      const d = be.dataIdMap.get(t.dataId);
      if (!d) throw new Error('decode kernel: an input is not on the wasm backend');
      return d.memoryOffset / 4;
    },
  };
}

interface CpuLike {
  data: { get(dataId: object): { values?: unknown } | undefined };
  makeTensorInfo(shape: number[], dtype: DataType, values?: HostArray): TensorInfo;
}

function storeOf(backendName: string, backend: unknown): HostStore {
  if (backendName === 'wasm') {
    const be = backend as WasmLike;
    return { view: (t) => be.typedArrayFromHeap(t), output: (shape, dtype) => be.makeOutput(shape, dtype) };
  }
  const be = backend as CpuLike;
  return {
    view: (t) => {
      const v = be.data.get(t.dataId)?.values;
      if (!(v instanceof Float32Array || v instanceof Int32Array)) throw new Error('decode kernel: input has no data');
      return v;
    },
    output: (shape, dtype) => {
      const n = shape.reduce((a, d) => a * d, 1);
      return be.makeTensorInfo(shape, dtype, dtype === 'int32' ? new Int32Array(n) : new Float32Array(n));
    },
  };
}

/** out[r] = x[r] / rms(x[r]) · w over rows of width d. */
function rmsNormRows(x: HostArray, w: HostArray, out: HostArray, rows: number, d: number, eps: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let ss = 0;
    for (let i = 0; i < d; i++) ss += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) out[o + i] = x[o + i] * inv * w[i];
  }
}

/** `x [N, d]`, `w [d]` → `rmsNorm(x) · w`. */
function rmsNormKernel(backendName: string): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x, w } = inputs as { x: TensorInfo; w: TensorInfo };
    const eps = (attrs as { eps: number }).eps;
    const store = storeOf(backendName, backend);
    const d = x.shape[x.shape.length - 1];
    const out = store.output([...x.shape], 'float32');
    rmsNormRows(store.view(x), store.view(w), store.view(out), x.shape.reduce((a, s) => a * s, 1) / d, d, eps);
    return out;
  };
}

/** `x`, `r [N, d]`, `w [d]` → `[x + r, rmsNorm(x + r) · w]`: a residual add and the next norm in one. */
function addRmsNormKernel(backendName: string): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x, r, w } = inputs as { x: TensorInfo; r: TensorInfo; w: TensorInfo };
    const eps = (attrs as { eps: number }).eps;
    const store = storeOf(backendName, backend);
    const d = x.shape[x.shape.length - 1];
    const rows = x.shape.reduce((a, s) => a * s, 1) / d;
    const sumInfo = store.output([...x.shape], 'float32');
    const normInfo = store.output([...x.shape], 'float32');
    const xv = store.view(x);
    const rv = store.view(r);
    const sum = store.view(sumInfo);
    for (let i = 0; i < rows * d; i++) sum[i] = xv[i] + rv[i];
    rmsNormRows(sum, store.view(w), store.view(normInfo), rows, d, eps);
    return [sumInfo, normInfo];
  };
}

/** `gu [N, 2I]` (gate, then up) → `silu(gate) · up`, `[N, I]`. */
function swigluKernel(backendName: string): KernelFunc {
  return ({ inputs, backend }) => {
    const { gu } = inputs as { gu: TensorInfo };
    const store = storeOf(backendName, backend);
    const [n, two] = gu.shape;
    const inter = two / 2;
    const outInfo = store.output([n, inter], 'float32');
    const native = nativeOn(backendName, backend, 'swiglu');
    if (native) {
      native.addon.swiglu(native.heap(), n, inter, native.off(gu), native.off(outInfo));
      return outInfo;
    }
    const g = store.view(gu);
    const out = store.view(outInfo);
    for (let r = 0; r < n; r++) {
      const src = r * two;
      const dst = r * inter;
      for (let i = 0; i < inter; i++) {
        const a = g[src + i];
        out[dst + i] = (a / (1 + Math.exp(-a))) * g[src + inter + i];
      }
    }
    return outInfo;
  };
}

export interface DecodeAttentionAttrs {
  /** The cache position this token's key and value go to (earlier ones are the context). */
  slot: number;
  heads: number;
  kvHeads: number;
  /** Of the optional q/k RMS norms (Qwen3). */
  eps: number;
}

let scratch = new Float64Array(0);

function scratchOf(n: number): Float64Array {
  if (scratch.length < n) scratch = new Float64Array(n);
  return scratch;
}

/**
 * `out[0..hd)` = rotate-half RoPE of `src[off..off+hd) + bias[boff..]`, RMS-normed by `norm` first when given.
 * `cos`/`sin` rows hold hd/2 columns.
 */
function loadHead(
  src: HostArray,
  off: number,
  bias: HostArray | undefined,
  boff: number,
  norm: HostArray | undefined,
  eps: number,
  cos: HostArray,
  sin: HostArray,
  row: number,
  hd: number,
  tmp: Float64Array,
  out: Float64Array,
  outOff: number,
): void {
  for (let i = 0; i < hd; i++) tmp[i] = bias ? src[off + i] + bias[boff + i] : src[off + i];
  if (norm) {
    let ss = 0;
    for (let i = 0; i < hd; i++) ss += tmp[i] * tmp[i];
    const inv = 1 / Math.sqrt(ss / hd + eps);
    for (let i = 0; i < hd; i++) tmp[i] = tmp[i] * inv * norm[i];
  }
  const half = hd / 2;
  const c = row * half;
  for (let i = 0; i < half; i++) {
    const x1 = tmp[i];
    const x2 = tmp[i + half];
    out[outOff + i] = x1 * cos[c + i] - x2 * sin[c + i];
    out[outOff + i + half] = x2 * cos[c + i] + x1 * sin[c + i];
  }
}

/**
 * One token per row of rotary, grouped-query attention over a preallocated cache.
 * Inputs: `qkv [B, (H + 2·KV)·hd]` (q, k, v projections side by side, before their biases), `positions [B]` int32,
 * `cos`, `sin [maxPositions, hd/2]`, `keys`, `values [B, KV, L, hd]` (the cache), `mask [B, M]` (1 for real tokens
 * among the first M cache slots; slots from M on are all real), and optionally `bias [(H + 2·KV)·hd]`,
 * `qNorm`, `kNorm [hd]`. Writes the token's rotated key and its value at `slot`, then attends over slots 0..slot.
 * Output: `[B, H·hd]`, the heads side by side.
 */
function decodeAttentionKernel(backendName: string): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const ins = inputs as Record<string, TensorInfo | undefined>;
    const { slot, heads: H, kvHeads: KV, eps } = attrs as unknown as DecodeAttentionAttrs;
    const keysInfo = ins.keys!;
    const [B, , L, hd] = keysInfo.shape;
    const M = ins.mask!.shape[1];
    if (slot < 0 || slot >= L) throw new Error(`${DECODE_ATTENTION}: slot ${slot} is outside the cache (${L})`);
    const store = storeOf(backendName, backend);
    const outInfo = store.output([B, H * hd], 'float32');
    const native = nativeOn(backendName, backend, 'decodeAttention');
    if (native) {
      const o = native.off;
      // prettier-ignore
      native.addon.decodeAttention(
        native.heap(), B, H, KV, hd, L, M, slot, ins.cos!.shape[0], eps, o(ins.qkv), o(ins.positions), o(ins.cos),
        o(ins.sin), o(keysInfo), o(ins.values), o(ins.mask), o(ins.bias), o(ins.qNorm), o(ins.kNorm), o(outInfo),
      );
      return outInfo;
    }
    const v = (t: TensorInfo | undefined): HostArray | undefined => (t ? store.view(t) : undefined);
    const qkv = v(ins.qkv)!;
    const pos = v(ins.positions)!;
    const cos = v(ins.cos)!;
    const sin = v(ins.sin)!;
    const keys = v(keysInfo)!;
    const values = v(ins.values)!;
    const mask = v(ins.mask)!;
    const bias = v(ins.bias);
    const qNorm = v(ins.qNorm);
    const kNorm = v(ins.kNorm);
    const out = store.view(outInfo);
    const width = (H + 2 * KV) * hd;
    const groups = H / KV;
    const scale = 1 / Math.sqrt(hd);
    const s = scratchOf(3 * hd + slot + 1);
    const tmp = s.subarray(0, hd);
    const q = s.subarray(hd, 2 * hd);
    const acc = s.subarray(2 * hd, 3 * hd);
    const scores = s.subarray(3 * hd, 3 * hd + slot + 1);
    for (let b = 0; b < B; b++) {
      const row = pos[b];
      const base = b * width;
      for (let g = 0; g < KV; g++) {
        const dst = ((b * KV + g) * L + slot) * hd;
        const kOff = (H + g) * hd;
        loadHead(qkv, base + kOff, bias, kOff, kNorm, eps, cos, sin, row, hd, tmp, q, 0);
        for (let i = 0; i < hd; i++) keys[dst + i] = q[i];
        const vOff = (H + KV + g) * hd;
        for (let i = 0; i < hd; i++)
          values[dst + i] = bias ? qkv[base + vOff + i] + bias[vOff + i] : qkv[base + vOff + i];
      }
      for (let h = 0; h < H; h++) {
        loadHead(qkv, base + h * hd, bias, h * hd, qNorm, eps, cos, sin, row, hd, tmp, q, 0);
        const kv = (b * KV + Math.floor(h / groups)) * L * hd;
        let max = -Infinity;
        for (let j = 0; j <= slot; j++) {
          if (j < M && mask[b * M + j] === 0) {
            scores[j] = -Infinity;
            continue;
          }
          const k0 = kv + j * hd;
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += q[i] * keys[k0 + i];
          const sc = dot * scale;
          scores[j] = sc;
          if (sc > max) max = sc;
        }
        acc.fill(0);
        let sum = 0;
        for (let j = 0; j <= slot; j++) {
          if (scores[j] === -Infinity) continue;
          const p = Math.exp(scores[j] - max);
          sum += p;
          const v0 = kv + j * hd;
          for (let i = 0; i < hd; i++) acc[i] += p * values[v0 + i];
        }
        const o = b * H * hd + h * hd;
        for (let i = 0; i < hd; i++) out[o + i] = acc[i] / sum;
      }
    }
    return outInfo;
  };
}

const KERNELS: Record<string, (backendName: string) => KernelFunc> = {
  [RMS_NORM]: rmsNormKernel,
  [ADD_RMS_NORM]: addRmsNormKernel,
  [SWIGLU]: swigluKernel,
  [DECODE_ATTENTION]: decodeAttentionKernel,
};

/** Registers the decode kernels on `backendName` (once per process). False when it is not one they support. */
export function registerDecodeKernels(backendName: string): boolean {
  if (!(DECODE_KERNEL_BACKENDS as readonly string[]).includes(backendName)) return false;
  for (const [kernelName, make] of Object.entries(KERNELS)) {
    if (tf.getKernel(kernelName, backendName) == null)
      tf.registerKernel({ kernelName, backendName, kernelFunc: make(backendName) });
  }
  return true;
}
