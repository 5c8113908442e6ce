/**
 * The host `UnsortedSegmentSum` kernel registered for wasm: bit-identical to tfjs-backend-cpu's kernel (the
 * reference semantics) over 1-D and n-D segment ids, out-of-range ids and numSegments; and the gradient of
 * gather-based embedding losses on wasm equals cpu's; the buffer-sharing Identity and same-dtype Cast; the row
 * GatherV2, Slice and SplitV (equal to cpu's). Runs on the
 * wasm backend (this file is its own process).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
// tfjs-core's Node entry registers no gradients (the runtime's model code imports this too).
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import fc from 'fast-check';
import {
  BACKEND_ENV,
  initBackend,
  registerWasmKernels,
  unsortedSegmentSumShape,
} from '../../../../runtime/engine/backend';

delete process.env[BACKEND_ENV];

interface Case {
  name: string;
  x: { shape: number[]; dtype?: 'float32' | 'int32' | 'bool' };
  ids: { shape: number[]; values: number[] };
  numSegments: number;
}

/** Deterministic, non-integer float values (so sums exercise rounding). */
function xValues(n: number, dtype: 'float32' | 'int32' | 'bool' = 'float32'): number[] {
  return Array.from({ length: n }, (_, i) => {
    const v = Math.sin(i * 12.9898 + 1) * 43758.5453;
    const frac = v - Math.floor(v);
    return dtype === 'bool' ? (frac > 0.5 ? 1 : 0) : dtype === 'int32' ? Math.floor(frac * 200 - 100) : frac * 20 - 10;
  });
}

interface Result {
  shape: number[];
  dtype: string;
  values: number[];
}

async function segmentSumOn(backend: 'cpu' | 'wasm', c: Case): Promise<Result> {
  assert.ok(await tf.setBackend(backend));
  const dtype = c.x.dtype ?? 'float32';
  const size = c.x.shape.reduce((a, d) => a * d, 1);
  const x = tf.tensor(xValues(size, dtype), c.x.shape, dtype);
  const ids = tf.tensor(c.ids.values, c.ids.shape, 'int32');
  try {
    // Typed as 1-D, but tfjs' kernels accept n-D ids (tested here).
    const r = tf.unsortedSegmentSum(x, ids as tf.Tensor1D, c.numSegments);
    const out = { shape: r.shape, dtype: r.dtype, values: Array.from(await r.data()) };
    r.dispose();
    return out;
  } finally {
    x.dispose();
    ids.dispose();
  }
}

const CASES: Case[] = [
  {
    name: '1-D x, negative and too-large ids dropped',
    x: { shape: [6] },
    ids: { shape: [6], values: [0, 3, -1, 1, 7, 3] },
    numSegments: 4,
  },
  {
    name: 'rows of a 2-D x (the gather gradient)',
    x: { shape: [5, 3] },
    ids: { shape: [5], values: [2, 0, 2, 2, 1] },
    numSegments: 3,
  },
  {
    name: '3-D x, more segments than ids',
    x: { shape: [4, 3, 2] },
    ids: { shape: [4], values: [1, 0, 1, 3] },
    numSegments: 6,
  },
  {
    name: '3-D x, ids ≥ numSegments dropped',
    x: { shape: [4, 3, 2] },
    ids: { shape: [4], values: [1, 0, 1, 3] },
    numSegments: 2,
  },
  {
    name: 'n-D ids of the same rank as x',
    x: { shape: [2, 3] },
    ids: { shape: [2, 3], values: [0, 1, 1, 2, -1, 5] },
    numSegments: 3,
  },
  {
    name: 'n-D ids broadcast against a 3-D x',
    x: { shape: [2, 3, 4] },
    ids: { shape: [2, 4], values: [0, 1, 1, 0, 2, -1, 5, 1] },
    numSegments: 3,
  },
  {
    name: 'x broadcast along axis 0 against [2, 1] ids',
    x: { shape: [1, 3] },
    ids: { shape: [2, 1], values: [1, 1] },
    numSegments: 2,
  },
  {
    name: 'a single id broadcast over every row',
    x: { shape: [3, 2] },
    ids: { shape: [1], values: [1] },
    numSegments: 2,
  },
  { name: 'scalar id', x: { shape: [4] }, ids: { shape: [], values: [0] }, numSegments: 2 },
  {
    name: 'ids of higher rank than x',
    x: { shape: [2] },
    ids: { shape: [2, 2], values: [0, 1, 1, 1] },
    numSegments: 2,
  },
  {
    name: 'int32 x gives float32',
    x: { shape: [4], dtype: 'int32' },
    ids: { shape: [4], values: [0, 0, 1, 7] },
    numSegments: 2,
  },
  {
    name: 'bool x gives float32',
    x: { shape: [3, 2], dtype: 'bool' },
    ids: { shape: [3], values: [0, 0, 1] },
    numSegments: 2,
  },
  { name: 'empty x', x: { shape: [0, 3] }, ids: { shape: [0], values: [] }, numSegments: 2 },
  {
    name: 'few rows into many segments (a gather from flattened log-probs), repeats and out-of-range ids',
    x: { shape: [7] },
    ids: { shape: [7], values: [40, 3, 40, -1, 99, 3, 40] },
    numSegments: 64,
  },
  {
    name: 'few 2-D rows into many segments',
    x: { shape: [5, 3] },
    ids: { shape: [5], values: [90, 2, 90, 57, 2] },
    numSegments: 100,
  },
  {
    name: 'embedding-sized gradient, many repeats',
    x: { shape: [300, 16] },
    ids: { shape: [300], values: Array.from({ length: 300 }, (_, i) => (i * 37) % 41) },
    numSegments: 50,
  },
];

before(async () => {
  tf.env().set('IS_TEST', true); // no "Hi, looks like you are running TensorFlow.js in Node.js" banner from cpu
  const info = await initBackend({ prefer: 'wasm' });
  assert.equal(info.name, 'wasm');
});

describe('Identity and same-dtype Cast on wasm share the buffer', () => {
  test('clone and cast to the own dtype share the data; other casts convert; disposal is per tensor', async () => {
    await tf.setBackend('wasm');
    const n = tf.memory().numTensors;
    const x = tf.tensor2d([1.5, -2.25, 3, 4], [2, 2]);
    const i = tf.tensor1d([1, -2, 3], 'int32');
    const c = tf.clone(x);
    const f = tf.cast(x, 'float32');
    const ci = tf.cast(i, 'int32');
    assert.equal(c.dataId, x.dataId);
    assert.equal(f.dataId, x.dataId);
    assert.equal(ci.dataId, i.dataId);
    assert.deepEqual(c.shape, [2, 2]);
    const toInt = tf.cast(x, 'int32');
    const toFloat = tf.cast(i, 'float32');
    assert.notEqual(toInt.dataId, x.dataId);
    assert.equal(toInt.dtype, 'int32');
    assert.deepEqual(Array.from(await toInt.data()), [1, -2, 3, 4]);
    assert.equal(toFloat.dtype, 'float32');
    assert.deepEqual(Array.from(await toFloat.data()), [1, -2, 3]);
    x.dispose();
    assert.deepEqual(Array.from(await c.data()), [1.5, -2.25, 3, 4], 'the clone outlives the original');
    c.dispose();
    assert.deepEqual(Array.from(await f.data()), [1.5, -2.25, 3, 4]);
    tf.dispose([f, ci, i, toInt, toFloat]);
    assert.equal(tf.memory().numTensors, n);
  });

  test('registering again wraps nothing twice', () => {
    const id = tf.getKernel(tf.Identity, 'wasm');
    const cast = tf.getKernel(tf.Cast, 'wasm');
    registerWasmKernels();
    assert.equal(tf.getKernel(tf.Identity, 'wasm')?.kernelFunc, id?.kernelFunc);
    assert.equal(tf.getKernel(tf.Cast, 'wasm')?.kernelFunc, cast?.kernelFunc);
  });

  test('a training gradient is bit-identical to the one with copying Identity and Cast kernels', async () => {
    await tf.setBackend('wasm');
    const grad = async (): Promise<number[]> => {
      const w = tf.variable(tf.tensor2d([0.3, -1.2, 2.5, 0.7, -0.1, 1.9], [2, 3]));
      const { value, grads } = tf.variableGrads(() => {
        const a = tf.mul(tf.clone(w), tf.cast(w, 'float32'));
        return tf.sum(tf.mul(tf.sigmoid(a), tf.square(w)));
      });
      const g = Array.from(await grads[w.name].data());
      tf.dispose([value, grads[w.name], w]);
      return g;
    };
    const shared = await grad();
    // The stock kernels' behaviour: a fresh buffer holding the same values.
    const sharing = [tf.Identity, tf.Cast].map((k) => tf.getKernel(k, 'wasm')!);
    const copying = (k: tf.KernelConfig): tf.KernelConfig => ({
      ...k,
      kernelFunc: (args) => {
        const x = args.inputs.x as tf.TensorInfo;
        const dtype = (args.attrs as { dtype?: tf.DataType } | undefined)?.dtype ?? x.dtype;
        if (dtype !== x.dtype) return k.kernelFunc(args);
        const be = args.backend as unknown as {
          makeOutput(s: number[], d: tf.DataType): tf.TensorInfo;
          typedArrayFromHeap(t: tf.TensorInfo): Float32Array;
        };
        const out = be.makeOutput(x.shape, x.dtype);
        be.typedArrayFromHeap(out).set(be.typedArrayFromHeap(x));
        return out;
      },
    });
    const swap = (k: tf.KernelConfig): void => {
      tf.unregisterKernel(k.kernelName, 'wasm');
      tf.registerKernel(k);
    };
    let copied: number[];
    try {
      sharing.forEach((k) => swap(copying(k)));
      copied = await grad();
    } finally {
      sharing.forEach(swap);
    }
    assert.deepEqual(shared, copied);
  });
});

describe('GatherV2 of whole rows on wasm (host row copies)', () => {
  async function onBoth(fn: () => tf.Tensor): Promise<{ wasm: tf.TypedArray; cpu: tf.TypedArray; shape: number[] }> {
    await tf.setBackend('cpu');
    const c = fn();
    const cpu = await c.data();
    c.dispose();
    await tf.setBackend('wasm');
    const w = fn();
    const wasm = await w.data();
    const shape = w.shape;
    w.dispose();
    return { wasm, cpu, shape };
  }

  for (const dtype of ['float32', 'int32'] as const)
    test(`equals cpu's gather exactly: [4096, 384] ${dtype} table, [8, 64] ids (an embedding lookup)`, async () => {
      const ids = Array.from({ length: 512 }, (_, i) => (i * 7919) % 4096);
      const r = await onBoth(() =>
        tf.tidy(() =>
          tf.gather(tf.tensor2d(xValues(4096 * 384, dtype), [4096, 384], dtype), tf.tensor2d(ids, [8, 64], 'int32')),
        ),
      );
      assert.deepEqual(r.shape, [8, 64, 384]);
      assert.deepEqual(Array.from(r.wasm), Array.from(r.cpu));
    });

  test('higher-rank rows, a scalar index, and gathers it does not take (axis 1, bool rows) equal cpu', async () => {
    const x = (): tf.Tensor => tf.tensor3d(xValues(5 * 3 * 4), [5, 3, 4]);
    const cases: (() => tf.Tensor)[] = [
      () => tf.tidy(() => tf.gather(x(), tf.tensor1d([4, 0, 4, 2], 'int32'))),
      () => tf.tidy(() => tf.gather(x(), tf.scalar(3, 'int32'))),
      () => tf.tidy(() => tf.gather(x(), tf.tensor1d([2, 0], 'int32'), 1)),
      () => tf.tidy(() => tf.gather(tf.tensor2d([1, 0, 0, 1, 1, 1], [3, 2], 'bool'), tf.tensor1d([2, 0], 'int32'))),
    ];
    for (const [i, c] of cases.entries()) {
      const r = await onBoth(c);
      assert.deepEqual(Array.from(r.wasm), Array.from(r.cpu), `case ${i}`);
    }
  });

  test('an index out of range is an error (and leaks nothing)', async () => {
    await tf.setBackend('wasm');
    const table = tf.tensor2d([1, 2, 3, 4], [2, 2]);
    const n = tf.memory().numTensors;
    for (const bad of [2, -1]) {
      const ids = tf.tensor1d([0, bad], 'int32');
      assert.throws(() => tf.gather(table, ids), /GatherV2: the index value -?\d+ is not in \[0, 1\]/);
      ids.dispose();
    }
    assert.equal(tf.memory().numTensors, n);
    table.dispose();
  });

  test('registering again wraps nothing twice', () => {
    const k = tf.getKernel(tf.GatherV2, 'wasm');
    registerWasmKernels();
    assert.equal(tf.getKernel(tf.GatherV2, 'wasm')?.kernelFunc, k?.kernelFunc);
  });
});

describe('Slice and SplitV on wasm (copied from the heap)', () => {
  async function onBoth(fn: () => tf.Tensor[]): Promise<{ wasm: number[][]; cpu: number[][] }> {
    const read = async (): Promise<number[][]> => {
      const ts = fn();
      const out = await Promise.all(ts.map(async (t) => [...t.shape, ...Array.from(await t.data())]));
      tf.dispose(ts);
      return out;
    };
    await tf.setBackend('cpu');
    const cpu = await read();
    await tf.setBackend('wasm');
    return { wasm: await read(), cpu };
  }

  test("slices of every rank and the concat gradient's SplitV equal cpu exactly", async () => {
    for (const dtype of ['float32', 'int32'] as const) {
      const r = await onBoth(() =>
        tf.tidy(() => {
          const m = tf.tensor2d(xValues(6 * 10, dtype), [6, 10], dtype);
          const c = tf.tensor4d(xValues(3 * 4 * 5 * 6, dtype), [3, 4, 5, 6], dtype);
          return [
            tf.slice(m, [1, 3], [4, 5]), // a column block
            tf.slice(m, [2, 0], [3, 10]), // whole rows: one run
            tf.slice(c, [1, 0, 2, 1], [2, 4, 3, 4]),
            tf.slice(tf.tensor1d(xValues(9, dtype), dtype), [2], [5]),
            ...tf.split(m, [3, 5, 2], 1),
            ...tf.split(c, 3, 0).map((t) => tf.reshape(t, [-1])),
            ...tf.split(c, [1, 3, 2], 3),
          ];
        }),
      );
      assert.deepEqual(r.wasm, r.cpu, dtype);
    }
  });

  test('the gradient of a concat along the last axis (column blocks) equals cpu', async () => {
    const r = await onBoth(() =>
      tf.tidy(() => {
        const parts = [3, 5, 2].map((n, i) =>
          tf.tensor2d(
            xValues(4 * n).map((v) => v + i),
            [4, n],
          ),
        );
        const dy = tf.tensor2d(xValues(4 * 10), [4, 10]);
        return tf.grads((...xs: tf.Tensor[]) => tf.sum(tf.mul(tf.concat(xs, 1), dy)))(parts);
      }),
    );
    assert.deepEqual(r.wasm, r.cpu);
  });

  test('registering again wraps nothing twice; bool slices still work (stock kernel)', async () => {
    const k = [tf.getKernel(tf.Slice, 'wasm'), tf.getKernel(tf.SplitV, 'wasm')];
    registerWasmKernels();
    assert.equal(tf.getKernel(tf.Slice, 'wasm')?.kernelFunc, k[0]?.kernelFunc);
    assert.equal(tf.getKernel(tf.SplitV, 'wasm')?.kernelFunc, k[1]?.kernelFunc);
    await tf.setBackend('wasm');
    const b = tf.slice(tf.tensor2d([1, 0, 0, 1, 1, 1], [3, 2], 'bool'), [1, 1], [2, 1]);
    assert.deepEqual(Array.from(await b.data()), [1, 1]);
    b.dispose();
  });
});

describe('UnsortedSegmentSum on wasm', () => {
  test('is registered once, and registering again is a no-op', () => {
    const k = tf.getKernel(tf.UnsortedSegmentSum, 'wasm');
    assert.ok(k, 'registered by initBackend');
    registerWasmKernels();
    registerWasmKernels();
    assert.equal(tf.getKernel(tf.UnsortedSegmentSum, 'wasm'), k);
  });

  for (const c of CASES) {
    test(`matches cpu exactly: ${c.name}`, async () => {
      const want = await segmentSumOn('cpu', c);
      const got = await segmentSumOn('wasm', c);
      assert.deepEqual(got, want);
      assert.deepEqual(got.shape, unsortedSegmentSumShape(c.x.shape, c.ids.shape, c.numSegments));
    });
  }

  test('shapes that cannot broadcast fail on wasm as on cpu', async () => {
    const c: Case = { name: 'bad', x: { shape: [2, 2] }, ids: { shape: [3], values: [0, 1, 1] }, numSegments: 2 };
    await assert.rejects(segmentSumOn('cpu', c), /broadcast/);
    await assert.rejects(segmentSumOn('wasm', c), /cannot be broadcast/);
  });

  test('numSegments 0 gives an empty tensor (cpu throws there)', async () => {
    const got = await segmentSumOn('wasm', {
      name: 'zero',
      x: { shape: [3, 2] },
      ids: { shape: [3], values: [0, 1, 0] },
      numSegments: 0,
    });
    assert.deepEqual(got, { shape: [0, 2], dtype: 'float32', values: [] });
  });

  test('leaks no tensors', async () => {
    await tf.setBackend('wasm');
    const x = tf.ones([8, 4]);
    const ids = tf.tensor1d([0, 1, 2, 3, 0, 1, 2, 3], 'int32');
    const n = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) tf.unsortedSegmentSum(x, ids, 4).dispose();
    assert.equal(tf.memory().numTensors, n);
    x.dispose();
    ids.dispose();
  });

  test('random shapes, ids and numSegments match cpu exactly (property)', async () => {
    const caseArb = fc
      .record({
        outer: fc.integer({ min: 0, max: 9 }),
        inner: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }),
        numSegments: fc.integer({ min: 1, max: 8 }),
        nd: fc.boolean(),
        seed: fc.array(fc.integer({ min: -2, max: 10 }), { minLength: 64, maxLength: 64 }),
      })
      .map(({ outer, inner, numSegments, nd, seed }): Case => {
        // n-D ids: [outer, last inner dim], aligned by tfjs as [outer, 1, ..., last].
        const idsShape = nd && inner.length > 0 ? [outer, inner[inner.length - 1]] : [outer];
        const count = idsShape.reduce((a, d) => a * d, 1);
        return {
          name: 'random',
          x: { shape: [outer, ...inner] },
          ids: { shape: idsShape, values: Array.from({ length: count }, (_, i) => seed[i % 64]) },
          numSegments,
        };
      });
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        assert.deepEqual(await segmentSumOn('wasm', c), await segmentSumOn('cpu', c));
      }),
      { numRuns: 150, seed: 20261129 },
    );
  });
});

describe('gather gradients (embedding lookups) on wasm', () => {
  const V = 40;
  const D = 12;
  const table = xValues(V * D).map((v) => v / 10);
  const tokens = [
    [3, 7, 7, 0, 39, 3, 12],
    [5, 5, 5, 1, 2, 38, 7],
  ];
  const weights = xValues(2 * 7 * D).map((v) => v / 7);

  async function gradsOn(backend: 'cpu' | 'wasm'): Promise<number[][]> {
    assert.ok(await tf.setBackend(backend));
    return tf.tidy(() => {
      const w = tf.tensor2d(table, [V, D]);
      const ids = tf.tensor2d(tokens.flat(), [2, 7], 'int32');
      const r = tf.tensor3d(weights, [2, 7, D]);
      // Embedding lookup (axis 0), a loss through a nonlinearity; and a column gather (axis 1).
      const g0 = tf.grad((t: tf.Tensor) => tf.sum(tf.mul(tf.tanh(tf.gather(t, ids)), r)))(w);
      const g1 = tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.gather(t, tf.tensor1d([0, 3, 3, 11], 'int32'), 1))))(w);
      return [Array.from(g0.dataSync()), Array.from(g1.dataSync())];
    });
  }

  test('equal cpu (max abs diff < 1e-6)', async () => {
    const [want0, want1] = await gradsOn('cpu');
    const [got0, got1] = await gradsOn('wasm');
    for (const [got, want] of [
      [got0, want0],
      [got1, want1],
    ]) {
      assert.equal(got.length, V * D);
      const diff = Math.max(...got.map((g, i) => Math.abs(g - want[i])));
      assert.ok(diff < 1e-6, `max abs diff ${diff}`);
      assert.ok(want.some((v) => v !== 0));
    }
  });
});
