/**
 * Kernels the wasm backend lacks, computed on the host. tfjs-backend-wasm 4.22 has no `UnsortedSegmentSum`, which
 * is the gradient of `tf.gather` (embedding lookups), so training any model with an embedding fails on wasm without
 * it (tfjs-runtime.md §2.4).
 *
 * Semantics follow tfjs-backend-cpu's kernel exactly for finite inputs: `segmentIds` is aligned with `x` by inserting
 * `rank(x) - rank(ids)` unit axes after its first axis, the two are broadcast together to a shape B, and output row s
 * is the sum over B's axis 0 of the elements whose id is s: shape `[numSegments, ...B.slice(1)]`, always float32.
 * Ids that are negative or ≥ numSegments contribute nothing. Sums run in float64 in ascending order along axis 0,
 * as cpu's do, so results are bit-identical. Two deliberate differences: a non-finite x element only reaches its own
 * segment (cpu multiplies every element by a 0/1 mask, so an Inf turns every other segment's slot into NaN), and
 * `numSegments = 0` gives an empty tensor (cpu throws).
 *
 * Also `Identity` (`tf.clone`) and `Cast` to the tensor's own dtype, which stock wasm runs as full copies, share the
 * input's buffer instead (a reference count, as wasm's `Reshape` and tfjs-backend-cpu's `Identity` do). They matter
 * for training: tfjs' engine clones every tensor it saves for the backward pass (`saveTensorsForBackwardMode`), and
 * `Multiply`'s gradient casts both operands to float32, so a 12M-parameter training step copied ~670 activations for
 * nothing (~10 % of the step on this 2-core machine, more at 1M). Values are unchanged; only the copy goes. Sharing is
 * safe because no kernel here writes a tensor's buffer in place except into buffers it allocated itself (the decode
 * KV cache, from `tf.pad`); tensors stay immutable.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { DataType, KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';

type HostArray = ArrayLike<number>;

/** The part of tfjs-backend-wasm's `BackendWasm` a host kernel needs. */
interface WasmBackendLike {
  readSync(dataId: object): unknown;
  makeOutput(shape: number[], dtype: DataType): TensorInfo;
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array;
  incRef(dataId: object): void;
  disposeData(dataId: object): boolean;
}

interface SegmentSumPlan {
  /** The broadcast shape B of x and the aligned ids. */
  b: number[];
  /** x's and the ids' strides in B's coordinates (0 along broadcast axes). */
  xStrides: number[];
  idStrides: number[];
  /** True when ids are one id per row of an un-broadcast x (the gather-gradient case). */
  rows: boolean;
  outShape: number[];
}

function size(shape: readonly number[]): number {
  return shape.reduce((a, d) => a * d, 1);
}

function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let d = shape.length - 2; d >= 0; d--) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

function plan(xShape: readonly number[], idsShape: readonly number[], numSegments: number): SegmentSumPlan {
  if (!Number.isInteger(numSegments) || numSegments < 0)
    throw new Error(`unsortedSegmentSum: numSegments must be a non-negative integer, got ${numSegments}`);
  const extra = xShape.length - idsShape.length;
  const e =
    extra > 0 ? [...idsShape.slice(0, 1), ...new Array<number>(extra).fill(1), ...idsShape.slice(1)] : [...idsShape];
  const n = Math.max(xShape.length, e.length);
  const xa = [...new Array<number>(n - xShape.length).fill(1), ...xShape];
  const ea = [...new Array<number>(n - e.length).fill(1), ...e];
  const b = xa.map((xd, d) => {
    const ed = ea[d];
    if (xd !== ed && xd !== 1 && ed !== 1)
      throw new Error(
        `unsortedSegmentSum: segmentIds of shape [${idsShape}] cannot be broadcast with x of shape [${xShape}]`,
      );
    return xd === 1 ? ed : xd;
  });
  if (n === 0) throw new Error('unsortedSegmentSum: x and segmentIds are both scalars; there is no axis to sum over');
  const xc = contiguousStrides(xa);
  const ec = contiguousStrides(ea);
  const xStrides = xa.map((d, i) => (d === 1 && b[i] !== 1 ? 0 : xc[i]));
  const idStrides = ea.map((d, i) => (d === 1 && b[i] !== 1 ? 0 : ec[i]));
  const rows = xa.every((d, i) => d === b[i]) && ea[0] === b[0] && ea.slice(1).every((d) => d === 1);
  return { b, xStrides, idStrides, rows, outShape: [numSegments, ...b.slice(1)] };
}

/** The output shape of `unsortedSegmentSum(x, segmentIds, numSegments)`; throws where the inputs do not fit. */
export function unsortedSegmentSumShape(
  xShape: readonly number[],
  idsShape: readonly number[],
  numSegments: number,
): number[] {
  return plan(xShape, idsShape, numSegments).outShape;
}

/**
 * Computes `unsortedSegmentSum` on the host into `out` (length = size of {@link unsortedSegmentSumShape}; any
 * previous contents are overwritten). `x` and `ids` are row-major.
 */
function unsortedSegmentSumInto(
  x: HostArray,
  xShape: readonly number[],
  ids: HostArray,
  idsShape: readonly number[],
  numSegments: number,
  out: Float32Array,
): void {
  const p = plan(xShape, idsShape, numSegments);
  const outer = p.b[0];
  const rest = size(p.b.slice(1));
  if (out.length !== numSegments * rest)
    throw new Error(`unsortedSegmentSum: output has ${out.length} elements, expected ${numSegments * rest}`);
  out.fill(0);
  if (numSegments === 0 || rest === 0 || outer === 0) return;
  if (p.rows && outer * 8 < numSegments) {
    // Few rows into many segments (the gradient of a gather from a flattened [N·V] tensor: N rows, N·V segments):
    // sort the rows by id (ties by row, so each segment sums its rows in ascending order, as below) instead of
    // walking every segment.
    const ks: number[] = [];
    for (let k = 0; k < outer; k++) if (ids[k] >= 0 && ids[k] < numSegments) ks.push(k);
    ks.sort((a, b) => ids[a] - ids[b] || a - b);
    const acc = new Float64Array(rest);
    for (let q = 0; q < ks.length; ) {
      const id = ids[ks[q]];
      acc.fill(0);
      for (; q < ks.length && ids[ks[q]] === id; q++) {
        const base = ks[q] * rest;
        for (let j = 0; j < rest; j++) acc[j] += x[base + j];
      }
      out.set(acc, id * rest);
    }
    return;
  }
  if (p.rows) {
    // One id per row of x: bucket the rows by id (stable, so each segment sums its rows in ascending order).
    const start = new Int32Array(numSegments + 1);
    for (let k = 0; k < outer; k++) {
      const id = ids[k];
      if (id >= 0 && id < numSegments) start[id + 1]++;
    }
    for (let s = 0; s < numSegments; s++) start[s + 1] += start[s];
    const order = new Int32Array(start[numSegments]);
    const fill = start.slice(0, numSegments);
    for (let k = 0; k < outer; k++) {
      const id = ids[k];
      if (id >= 0 && id < numSegments) order[fill[id]++] = k;
    }
    const acc = new Float64Array(rest);
    for (let s = 0; s < numSegments; s++) {
      if (start[s] === start[s + 1]) continue;
      acc.fill(0);
      for (let q = start[s]; q < start[s + 1]; q++) {
        const base = order[q] * rest;
        for (let j = 0; j < rest; j++) acc[j] += x[base + j];
      }
      out.set(acc, s * rest);
    }
    return;
  }
  // General case: walk B in row-major order (axis 0 outermost, so each sum runs in ascending order along it).
  const rank = p.b.length;
  const acc = new Float64Array(numSegments * rest);
  const idx = new Array<number>(rank).fill(0);
  let xo = 0;
  let io = 0;
  const total = size(p.b);
  for (let flat = 0; flat < total; flat++) {
    const id = ids[io];
    if (id >= 0 && id < numSegments) acc[id * rest + (flat % rest)] += x[xo];
    for (let d = rank - 1; d >= 0; d--) {
      if (++idx[d] < p.b[d]) {
        xo += p.xStrides[d];
        io += p.idStrides[d];
        break;
      }
      xo -= p.xStrides[d] * (p.b[d] - 1);
      io -= p.idStrides[d] * (p.b[d] - 1);
      idx[d] = 0;
    }
  }
  out.set(acc);
}

const unsortedSegmentSumWasm: KernelFunc = ({ inputs, backend, attrs }) => {
  const x = inputs.x as TensorInfo;
  const segmentIds = inputs.segmentIds as TensorInfo;
  const numSegments = Number((attrs as { numSegments?: unknown } | undefined)?.numSegments);
  if (x.dtype === 'complex64' || x.dtype === 'string')
    throw new Error(`unsortedSegmentSum: x of dtype ${x.dtype} is not supported`);
  const be = backend as WasmBackendLike;
  // readSync copies out of the wasm heap, so these stay valid when makeOutput grows the heap below.
  const xv = be.readSync(x.dataId) as HostArray;
  const iv = be.readSync(segmentIds.dataId) as HostArray;
  const shape = unsortedSegmentSumShape(x.shape, segmentIds.shape, numSegments);
  const out = be.makeOutput(shape, 'float32');
  unsortedSegmentSumInto(xv, x.shape, iv, segmentIds.shape, numSegments, be.typedArrayFromHeap(out) as Float32Array);
  return out;
};

/** The output is the input's own buffer, one more reference to it (freed when the last tensor on it is disposed). */
function shareInput(x: TensorInfo, backend: unknown, dtype: DataType = x.dtype): TensorInfo {
  (backend as WasmBackendLike).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype };
}

/** Marks the kernels registered here, so registering again wraps nothing twice. */
const SHARING = Symbol('trinity-sharing-kernel');

/**
 * Replaces wasm's `Identity` and `Cast` with kernels that share the input's buffer where the values stay the same
 * (any numeric Identity; a Cast to the dtype the tensor already has) and run the stock kernel otherwise.
 */
function registerSharingKernel(name: typeof tf.Identity | typeof tf.Cast): void {
  const stock = tf.getKernel(name, 'wasm');
  if (!stock || (stock.kernelFunc as { [SHARING]?: true })[SHARING]) return;
  const kernelFunc: KernelFunc = (args) => {
    const x = args.inputs.x as TensorInfo;
    const to = name === tf.Cast ? (args.attrs as { dtype?: DataType } | undefined)?.dtype : x.dtype;
    if (x.dtype === 'string' || x.dtype === 'complex64' || to !== x.dtype) return stock.kernelFunc(args);
    return shareInput(x, args.backend);
  };
  (kernelFunc as { [SHARING]?: true })[SHARING] = true;
  tf.unregisterKernel(name, 'wasm');
  tf.registerKernel({ ...stock, kernelFunc });
}

/** Marks the row-gather kernel, so registering again wraps nothing twice. */
const ROW_GATHER = Symbol('trinity-row-gather');

/**
 * Replaces wasm's `GatherV2` for whole rows (axis 0, no batch dims, float32/int32 rows, int32 indices) with row
 * copies on the host: the stock kernel computes every element's source index on its own and took ~7 ms for an
 * embedding lookup of 512 rows of 384 (a training step has three such gathers); the copies take a few µs. Same
 * values (a copy) and the same error for an index out of range; every other gather runs the stock kernel.
 */
function registerRowGather(): void {
  const stock = tf.getKernel(tf.GatherV2, 'wasm');
  if (!stock || (stock.kernelFunc as { [ROW_GATHER]?: true })[ROW_GATHER]) return;
  const kernelFunc: KernelFunc = (args) => {
    const { x, indices } = args.inputs as { x: TensorInfo; indices: TensorInfo };
    const { axis, batchDims } = args.attrs as { axis: number; batchDims: number };
    if (
      x.shape.length === 0 ||
      tf.util.parseAxisParam(axis, x.shape)[0] !== 0 ||
      batchDims !== 0 ||
      indices.dtype !== 'int32' ||
      (x.dtype !== 'float32' && x.dtype !== 'int32')
    )
      return stock.kernelFunc(args);
    const be = args.backend as WasmBackendLike;
    const rows = x.shape[0];
    const row = size(x.shape.slice(1));
    const out = be.makeOutput([...indices.shape, ...x.shape.slice(1)], x.dtype);
    // Views after makeOutput: it may grow the heap, which replaces the buffer.
    const src = be.typedArrayFromHeap(x);
    const ids = be.typedArrayFromHeap(indices);
    const dst = be.typedArrayFromHeap(out);
    for (let i = 0; i < ids.length; i++) {
      const r = ids[i];
      if (!(r >= 0 && r < rows)) {
        be.disposeData(out.dataId);
        throw new Error(`GatherV2: the index value ${r} is not in [0, ${rows - 1}]`);
      }
      dst.set(src.subarray(r * row, (r + 1) * row), i * row);
    }
    return out;
  };
  (kernelFunc as { [ROW_GATHER]?: true })[ROW_GATHER] = true;
  tf.unregisterKernel(tf.GatherV2, 'wasm');
  tf.registerKernel({ ...stock, kernelFunc });
}

/** Marks the slice kernels registered here, so registering again wraps nothing twice. */
const HEAP_SLICE = Symbol('trinity-heap-slice');

/** `x[b : b + s]` (float32/int32, every size > 0) as a new tensor, copied run by run straight from the heap. */
function sliceFromHeap(be: WasmBackendLike, x: TensorInfo, b: number[], s: number[]): TensorInfo {
  const rank = x.shape.length;
  const out = be.makeOutput(s, x.dtype);
  // Views after makeOutput: it may grow the heap, which replaces the buffer.
  const src = be.typedArrayFromHeap(x);
  const dst = be.typedArrayFromHeap(out);
  if (rank === 0) {
    dst.set(src);
    return out;
  }
  const strides = contiguousStrides(x.shape);
  const run = s[rank - 1];
  const idx = new Array<number>(rank - 1).fill(0);
  for (let o = 0, n = size(s) / run; o < n; o++) {
    let off = b[rank - 1];
    for (let d = 0; d < rank - 1; d++) off += (b[d] + idx[d]) * strides[d];
    dst.set(src.subarray(off, off + run), o * run);
    for (let d = rank - 2; d >= 0 && ++idx[d] === s[d]; d--) idx[d] = 0;
  }
  return out;
}

const heapSliceable = (x: TensorInfo, s: readonly number[]): boolean =>
  (x.dtype === 'float32' || x.dtype === 'int32') && s.every((d) => d > 0);

/**
 * Replaces wasm's `Slice` and `SplitV` (the gradient of a concat) for float32/int32 tensors. The stock kernels first
 * copy the whole input out of the heap (`readSync`, a fresh buffer each time) and then copy the slice: a [384, 384]
 * column block of a [384, 1152] matrix took 3–6 ms, and a SplitV makes one such slice per output. These copy the
 * slice's runs straight from the heap (~0.1 ms there). Same values (a copy); other dtypes and empty slices keep the
 * stock kernels.
 */
function registerHeapSlices(): void {
  const slice = tf.getKernel(tf.Slice, 'wasm');
  if (slice && !(slice.kernelFunc as { [HEAP_SLICE]?: true })[HEAP_SLICE]) {
    const kernelFunc: KernelFunc = (args) => {
      const x = args.inputs.x as TensorInfo;
      const { begin, size: sz } = args.attrs as { begin: number | number[]; size?: number | number[] };
      const [b, s] = tf.slice_util.parseSliceParams(x, begin, sz);
      if (!heapSliceable(x, s)) return slice.kernelFunc(args);
      return sliceFromHeap(args.backend as WasmBackendLike, x, b, s);
    };
    (kernelFunc as { [HEAP_SLICE]?: true })[HEAP_SLICE] = true;
    tf.unregisterKernel(tf.Slice, 'wasm');
    tf.registerKernel({ ...slice, kernelFunc });
  }
  const split = tf.getKernel(tf.SplitV, 'wasm');
  if (split && !(split.kernelFunc as { [HEAP_SLICE]?: true })[HEAP_SLICE]) {
    const kernelFunc: KernelFunc = (args) => {
      const x = args.inputs.x as TensorInfo;
      const { numOrSizeSplits, axis } = args.attrs as { numOrSizeSplits: number | number[]; axis: number };
      const ax = tf.util.parseAxisParam(axis, x.shape)[0];
      const sizes = tf.backend_util.prepareSplitSize(x, numOrSizeSplits, ax);
      if (!heapSliceable(x, x.shape) || sizes.some((n) => n <= 0)) return split.kernelFunc(args);
      const be = args.backend as WasmBackendLike;
      const begin = new Array<number>(x.shape.length).fill(0);
      return sizes.map((n) => {
        const s = [...x.shape];
        s[ax] = n;
        const out = sliceFromHeap(be, x, begin, s);
        begin[ax] += n;
        return out;
      });
    };
    (kernelFunc as { [HEAP_SLICE]?: true })[HEAP_SLICE] = true;
    tf.unregisterKernel(tf.SplitV, 'wasm');
    tf.registerKernel({ ...split, kernelFunc });
  }
}

/**
 * Registers the host kernels missing from the wasm backend, the buffer-sharing Identity/Cast, the row gather and
 * the heap slices (once per process; a no-op when already there). Call it once tfjs-backend-wasm is imported (it registers the stock
 * kernels).
 */
export function registerWasmKernels(): void {
  registerRowGather();
  registerHeapSlices();
  if (tf.getKernel(tf.UnsortedSegmentSum, 'wasm') == null) {
    tf.registerKernel({ kernelName: tf.UnsortedSegmentSum, backendName: 'wasm', kernelFunc: unsortedSegmentSumWasm });
  }
  registerSharingKernel(tf.Identity);
  registerSharingKernel(tf.Cast);
}
