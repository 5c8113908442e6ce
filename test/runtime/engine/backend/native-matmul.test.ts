/**
 * The native OpenBLAS `BatchMatMul` kernel of the wasm backend (native/blas-matmul + native-matmul.ts): it is
 * installed by initBackend, and its products equal tfjs-backend-cpu's (the reference) within 1e-5 relative over
 * 2-D, batched 3-D/4-D, broadcast batches, all transpose flags, odd and empty sizes; gradients through it equal
 * cpu's; the stock wasm kernel agrees too. Not built is a failure, not a skip: CI builds it (.ci/run), locally
 * `npm run build:native` does. Runs on wasm (this file is its own process).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import {
  BACKEND_ENV,
  initBackend,
  loadNativeMatmul,
  NATIVE_MATMUL_ACCELERATOR,
  NATIVE_MATMUL_ENV,
  nativeMatmulStatus,
  useNativeMatmul,
  type BackendInfo,
} from '../../../../runtime/engine/backend';

delete process.env[BACKEND_ENV];
delete process.env[NATIVE_MATMUL_ENV];

const RTOL = 1e-5;
let info: BackendInfo;

before(async () => {
  const l = loadNativeMatmul();
  assert.ok(
    l.ok,
    `the native OpenBLAS matmul does not load: ${l.ok ? '' : l.reason}. CI builds it (.ci/run installs libopenblas-dev, npm ci runs the build).`,
  );
  info = await initBackend({ prefer: 'wasm' });
  assert.ok(await tf.setBackend('cpu'));
  (tf.backend() as { firstUse?: boolean }).firstUse = false;
  assert.ok(await tf.setBackend('wasm'));
});

/** Deterministic values in [-1, 1). */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

interface Product {
  shape: number[];
  data: Float32Array;
}

async function matMulOn(
  backend: 'wasm' | 'cpu',
  a: Product,
  b: Product,
  tA: boolean,
  tB: boolean,
  broadcastTo?: [number[], number[]],
): Promise<Product> {
  assert.ok(await tf.setBackend(backend));
  const c = tf.tidy(() => {
    let x = tf.tensor(a.data, a.shape, 'float32');
    let y = tf.tensor(b.data, b.shape, 'float32');
    if (broadcastTo) {
      x = tf.broadcastTo(x, broadcastTo[0]);
      y = tf.broadcastTo(y, broadcastTo[1]);
    }
    return tf.matMul(x, y, tA, tB);
  });
  const out = { shape: c.shape, data: (await c.data()) as Float32Array };
  c.dispose();
  await tf.setBackend('wasm');
  return out;
}

function assertClose(got: Product, want: Product, what: string): void {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < want.data.length; i++) {
    scale = Math.max(scale, Math.abs(want.data[i]));
    worst = Math.max(worst, Math.abs(got.data[i] - want.data[i]));
  }
  assert.ok(
    Number.isFinite(worst) && worst <= RTOL * Math.max(scale, 1e-30) + 1e-30,
    `${what}: max |native − cpu| ${worst.toExponential(3)} > ${RTOL} × ${scale.toExponential(3)}`,
  );
}

type Case = [aShape: number[], bShape: number[], tA: boolean, tB: boolean];

/** Shapes tfjs' own kernels handle (batch = an operand's batch shape, or 1s, as a suffix of the output's). */
const CASES: Case[] = [];
for (const [m, k, n] of [
  [1, 1, 1],
  [2, 3, 4],
  [7, 5, 3],
  [1, 64, 1],
  [64, 1, 33],
  [17, 31, 23],
  [65, 129, 63],
  [128, 256, 96],
]) {
  for (const tA of [false, true]) {
    for (const tB of [false, true]) {
      const sa = tA ? [k, m] : [m, k];
      const sb = tB ? [n, k] : [k, n];
      CASES.push([sa, sb, tA, tB]);
      CASES.push([[3, ...sa], [3, ...sb], tA, tB]);
      if (m * k * n < 100_000) {
        CASES.push([[2, 3, ...sa], [2, 3, ...sb], tA, tB]);
        CASES.push([[4, ...sa], sb, tA, tB]); // B shared by every batch
        CASES.push([sa, [4, ...sb], tA, tB]);
        CASES.push([[2, 3, ...sa], [3, ...sb], tA, tB]); // B's batch a suffix of A's
        CASES.push([[1, 3, ...sa], [2, 3, ...sb], tA, tB]);
        CASES.push([[1, 1, ...sa], [5, ...sb], tA, tB]);
      }
    }
  }
}
// The attention shapes of the engine's models: [B, H, T, hd] products and their gradients.
CASES.push(
  [[2, 4, 16, 32], [2, 4, 16, 32], false, true],
  [[2, 4, 16, 16], [2, 4, 16, 32], false, false],
  [[2, 4, 16, 16], [2, 4, 16, 32], true, false],
  [[2, 4, 16, 32], [2, 4, 16, 32], true, false],
);

function caseName([sa, sb, tA, tB]: Case): string {
  return `[${sa}]${tA ? 'ᵀ' : ''} · [${sb}]${tB ? 'ᵀ' : ''}`;
}

describe('native OpenBLAS BatchMatMul on wasm', () => {
  test('initBackend installed it and reports it', () => {
    assert.equal(info.name, 'wasm');
    assert.deepEqual(info.accelerators, [NATIVE_MATMUL_ACCELERATOR]);
    const s = nativeMatmulStatus();
    assert.ok(s?.installed, 'native matmul status');
    assert.equal(s.threads, 1, 'OpenBLAS runs 1 thread by default');
    assert.equal(process.env.OPENBLAS_NUM_THREADS, undefined, 'loading it leaves OPENBLAS_NUM_THREADS as it was');
    const native = tf.getKernel('BatchMatMul', 'wasm')!.kernelFunc;
    assert.equal(useNativeMatmul(false), false);
    const stock = tf.getKernel('BatchMatMul', 'wasm')!.kernelFunc;
    assert.notEqual(stock, native, 'the stock kernel comes back when switched off');
    assert.equal(useNativeMatmul(true), true);
    assert.equal(tf.getKernel('BatchMatMul', 'wasm')!.kernelFunc, native);
  });

  test(`equals cpu within ${RTOL} relative on ${CASES.length} shapes (and so does stock wasm)`, async () => {
    let seed = 1;
    for (const c of CASES) {
      const [sa, sb, tA, tB] = c;
      const a = {
        shape: sa,
        data: values(
          sa.reduce((x, y) => x * y, 1),
          seed++,
        ),
      };
      const b = {
        shape: sb,
        data: values(
          sb.reduce((x, y) => x * y, 1),
          seed++,
        ),
      };
      const want = await matMulOn('cpu', a, b, tA, tB);
      assertClose(await matMulOn('wasm', a, b, tA, tB), want, `native ${caseName(c)}`);
      useNativeMatmul(false);
      try {
        assertClose(await matMulOn('wasm', a, b, tA, tB), want, `stock wasm ${caseName(c)}`);
      } finally {
        useNativeMatmul(true);
      }
    }
  });

  test('broadcasts batches properly where tfjs kernels cannot ([2,1]·[1,3], [2,1]·[2,3])', async () => {
    const cases: [number[], number[], number[], boolean, boolean][] = [
      [[2, 1], [1, 3], [2, 3], false, false],
      [[2, 1], [2, 3], [2, 3], true, false],
      [[3, 1, 2], [1, 4, 1], [3, 4, 2], false, true],
      [[1, 2], [3, 1], [3, 2], true, true],
    ];
    let seed = 1000;
    for (const [ba, bb, out, tA, tB] of cases) {
      const [m, k, n] = [5, 7, 3];
      const sa = [...ba, ...(tA ? [k, m] : [m, k])];
      const sb = [...bb, ...(tB ? [n, k] : [k, n])];
      const a = {
        shape: sa,
        data: values(
          sa.reduce((x, y) => x * y, 1),
          seed++,
        ),
      };
      const b = {
        shape: sb,
        data: values(
          sb.reduce((x, y) => x * y, 1),
          seed++,
        ),
      };
      // Reference: cpu on inputs broadcast explicitly to the full batch shape.
      const want = await matMulOn('cpu', a, b, tA, tB, [
        [...out, ...sa.slice(-2)],
        [...out, ...sb.slice(-2)],
      ]);
      assertClose(await matMulOn('wasm', a, b, tA, tB), want, `native ${caseName([sa, sb, tA, tB])}`);
    }
  });

  test('empty products: m, n, batch = 0 give empty tensors, k = 0 gives zeros', async () => {
    for (const [sa, sb, want] of [
      [
        [0, 4],
        [4, 3],
        [0, 3],
      ],
      [
        [2, 4],
        [4, 0],
        [2, 0],
      ],
      [
        [0, 2, 4],
        [0, 4, 3],
        [0, 2, 3],
      ],
      [
        [2, 0],
        [0, 3],
        [2, 3],
      ],
      [
        [2, 3, 0],
        [2, 0, 4],
        [2, 3, 4],
      ],
    ] as [number[], number[], number[]][]) {
      const c = tf.matMul(tf.ones(sa), tf.ones(sb));
      assert.deepEqual(c.shape, want);
      const d = await c.data();
      assert.ok(
        d.every((v) => v === 0),
        `[${sa}]·[${sb}] is all zeros`,
      );
      c.dispose();
    }
  });

  test('rejects mismatched inner dimensions as tfjs does', () => {
    assert.throws(() => tf.matMul(tf.ones([2, 3]), tf.ones([4, 2])), /inner shapes \(3\) and \(4\)/);
  });

  test('gradients through it equal cpu (dA, dB use transposed products)', async () => {
    const grads = async (backend: 'wasm' | 'cpu'): Promise<Float32Array[]> => {
      assert.ok(await tf.setBackend(backend));
      const out = tf.tidy(() => {
        const a = tf.tensor(values(2 * 3 * 9 * 6, 7), [2, 3, 9, 6]);
        const b = tf.tensor(values(2 * 3 * 5 * 6, 8), [2, 3, 5, 6]);
        const w = tf.tensor(values(9 * 5, 9), [9, 5]);
        const f = (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x, y, false, true), w));
        return tf.grads(f)([a, b]);
      });
      const data = await Promise.all(out.map((t) => t.data() as Promise<Float32Array>));
      tf.dispose(out);
      await tf.setBackend('wasm');
      return data;
    };
    const [want, got] = [await grads('cpu'), await grads('wasm')];
    for (let i = 0; i < 2; i++) {
      assertClose(
        { shape: [want[i].length], data: got[i] },
        { shape: [want[i].length], data: want[i] },
        `gradient ${i ? 'dB' : 'dA'}`,
      );
    }
  });

  test('survives the wasm heap growing between products', async () => {
    const a = tf.tensor(values(64 * 48, 11), [64, 48]);
    const b = tf.tensor(values(48 * 40, 12), [48, 40]);
    const first = await tf.matMul(a, b).data();
    const big = tf.zeros([64, 1024, 1024]); // 256 MB: forces the heap to grow
    const second = await tf.matMul(a, b).data();
    big.dispose();
    assert.deepEqual(Array.from(second), Array.from(first));
    tf.dispose([a, b]);
  });
});
